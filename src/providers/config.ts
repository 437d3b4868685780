// Provider and tenant records as configured (bootstrap file now, admin API later), and the
// naming rules they share. validate.ts checks them: a record that passes validateTenant() is safe
// to build providers from.

export interface ProviderConfigBase {
  /** Slug, unique within the tenant. */
  readonly id: string;
  /** Name prefix for this provider's tools and prompts; "" or absent for none. */
  readonly prefix?: string;
  /** Between prefix and name; default "__". */
  readonly separator?: string;
}

export interface StaticPromptArgument {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
  /** Completion values offered for this argument. */
  readonly values?: readonly string[];
}

export interface StaticPromptMessage {
  readonly role: "user" | "assistant";
  /** Text with {{argument}} placeholders. */
  readonly text: string;
}

export interface StaticPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly StaticPromptArgument[];
  readonly messages: readonly StaticPromptMessage[];
}

export interface StaticResource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Exactly one of text and blob (base64). */
  readonly text?: string;
  readonly blob?: string;
}

export interface StaticResourceTemplate {
  /** RFC 6570 level-1 template, e.g. "docs://pages/{page}". */
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Content with {variable} placeholders, expanded with the values taken from the URI. */
  readonly text: string;
  /** Completion values per template variable. */
  readonly values?: Readonly<Record<string, readonly string[]>>;
}

export interface StaticProviderConfig extends ProviderConfigBase {
  readonly kind: "static";
  readonly prompts?: readonly StaticPrompt[];
  readonly resources?: readonly StaticResource[];
  readonly resourceTemplates?: readonly StaticResourceTemplate[];
}

export interface HttpTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default 30 000. */
  readonly timeoutMs?: number;
}

export interface HttpProviderConfig extends ProviderConfigBase {
  readonly kind: "http";
  readonly tools: readonly HttpTool[];
}

export interface McpProviderConfig extends ProviderConfigBase {
  readonly kind: "mcp";
  /** Streamable HTTP endpoint of the upstream MCP server. */
  readonly url: string;
  /** Static headers sent upstream (e.g. an API key); never the client's token. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-call timeout; default PORTICO_UPSTREAM_TIMEOUT_MS. */
  readonly timeoutMs?: number;
}

export type ProviderConfig = StaticProviderConfig | HttpProviderConfig | McpProviderConfig;

export interface TenantConfig {
  /** Slug `^[a-z0-9][a-z0-9-]{0,62}$`; the MCP URL is /mcp/{id}. */
  readonly id: string;
  /** "none" serves without authentication (demos, conformance); "oauth" arrives with OAuth. */
  readonly auth: "none" | "oauth";
  readonly name?: string;
  readonly providers: readonly ProviderConfig[];
}

export const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Exposed tool and prompt names: 1–64 characters (conformance `tools-name-format`). */
export const EXPOSED_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const DEFAULT_SEPARATOR = "__";

/** The name a client sees for a provider's tool or prompt. */
export function exposedName(provider: ProviderConfigBase, name: string): string {
  return provider.prefix ? `${provider.prefix}${provider.separator ?? DEFAULT_SEPARATOR}${name}` : name;
}
