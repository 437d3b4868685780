// Virtual server records (docs/architecture.md §8): a tenant's extra MCP URLs, /mcp/{tenant}/{server},
// each a selection of its providers' tools, prompts and resources with per-entry renames and
// description, title and annotation overrides. Kept in the tenant record beside its providers;
// validate-server.ts checks them.

/** What a client sees changed of one entry on the server. */
export interface EntryOverride {
  /** The name the server lists it by (tools and prompts); the original is then unreachable there. */
  readonly name?: string;
  readonly title?: string;
  readonly description?: string;
  /** Tools only: merged over the tool's own `annotations` (a member set to null is removed). */
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** `"*"`: every entry of the kind; a list: only those (names as the provider knows them, or URIs). */
export type Selection = "*" | readonly string[];

/** One provider's part of a virtual server. */
export interface ServerProviderSelection {
  readonly provider: string;
  /** Absent: every tool. */
  readonly tools?: Selection;
  /** Absent: every prompt. */
  readonly prompts?: Selection;
  /** Resource URIs and URI templates; absent: every one. */
  readonly resources?: Selection;
  /** By the name the provider knows the entry by (a resource by its URI). */
  readonly overrides?: {
    readonly tools?: Readonly<Record<string, EntryOverride>>;
    readonly prompts?: Readonly<Record<string, EntryOverride>>;
    readonly resources?: Readonly<Record<string, EntryOverride>>;
  };
}

export interface VirtualServerConfig {
  /** Slug, unique within the tenant, neither `sse` nor `messages`: the URL is /mcp/{tenant}/{id}. */
  readonly id: string;
  /** Shown to clients (serverInfo title, resource_name). */
  readonly name?: string;
  /** Scopes a token must carry on this server besides mcp:read / mcp:tools. */
  readonly scopes?: readonly string[];
  readonly providers: readonly ServerProviderSelection[];
}

/** Segments under /mcp/{tenant} that are not servers: the HTTP+SSE transport's. */
export const RESERVED_SERVER_IDS: readonly string[] = ["sse", "messages"];
