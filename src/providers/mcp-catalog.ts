// The catalog connection of an `mcp` provider: one SDK client per provider per replica that lists
// the upstream's entries (every page), re-reads a list when the upstream says it changed, and
// pings the upstream to know its health (reconnecting when a ping fails).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResultSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { validEntries, type EntryKind } from "./list-entries.js";
import { discoverEra } from "./mcp-stateless.js";
import { describeFailure, listAll, openClient, type UpstreamTarget } from "./mcp-upstream.js";
import { EMPTY_ENTRIES, type ListChangeKind, type ProviderEntries, type ProviderEvents } from "./types.js";

export interface UpstreamCatalogOptions {
  /** Discovery found a 2026-07-28 upstream: the provider switches implementations. */
  readonly onEraChanged?: () => Promise<void>;
  /** notifications/resources/updated for a URI someone watches (see watch()). */
  readonly onResourceUpdated?: (uri: string) => void;
}

export class UpstreamCatalog {
  #entries: ProviderEntries = EMPTY_ENTRIES;
  #healthy = false;
  /** The first verdict is logged too: a provider broken from the start must not go unnoticed. */
  #reported = false;
  #reason: string | undefined = "not connected yet";
  #client: Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** URIs watched for resources/updated, subscribed again on every new client. */
  readonly #watched = new Set<string>();

  constructor(
    private readonly target: UpstreamTarget,
    private readonly events: ProviderEvents,
    private readonly options: UpstreamCatalogOptions = {},
  ) {}

  get entries(): ProviderEntries {
    return this.#entries;
  }

  get healthy(): boolean {
    return this.#healthy;
  }

  /** Why the upstream is unhealthy; undefined while healthy. */
  get reason(): string | undefined {
    return this.#reason;
  }

  /** The shared client, for requests that belong to no client session. */
  get client(): Client | undefined {
    return this.#client;
  }

  /** Connects (never throws: an unreachable upstream is unhealthy) and starts the health probe. */
  async start(healthIntervalMs: number): Promise<void> {
    await this.connect();
    if (this.#closed) return; // replaced by the other era's catalog while connecting
    this.#timer = setInterval(() => void this.#probe(), healthIntervalMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#client?.close().catch(() => undefined);
  }

  /**
   * Asks the upstream which era it speaks (server/discover) before initializing: an upstream that
   * speaks 2026-07-28 now is handed to onEraChanged. Never throws: unreachable is unhealthy.
   */
  async connect(): Promise<void> {
    try {
      if (this.options.onEraChanged) {
        const { era } = await discoverEra(this.target, Math.min(this.target.timeoutMs, 10_000));
        if (era === "stateless") return await this.options.onEraChanged();
      }
      const client = await openClient(this.target, { capabilities: {}, setup: (c) => this.#watchLists(c) });
      const old = this.#client;
      this.#client = client;
      void old?.close().catch(() => undefined);
      await this.#refresh(["tools", "prompts", "resources"]);
      this.#setHealthy(true);
      for (const uri of this.#watched) void this.#subscribe(uri);
    } catch (err) {
      this.#setHealthy(false, describeFailure(err));
    }
  }

  /** Re-reads every list now (reconnecting first when disconnected); throws when that fails. */
  async refresh(): Promise<void> {
    if (!this.#client || !this.#healthy) await this.connect();
    else await this.#refresh(["tools", "prompts", "resources"]);
    if (!this.#healthy) throw new Error(this.#reason ?? "unreachable");
  }

  /** Pings the upstream now and returns the round trip in milliseconds; throws when it fails. */
  async ping(timeoutMs: number): Promise<number> {
    if (!this.#client) throw new Error(this.#reason ?? "not connected");
    const started = performance.now();
    await this.#client.ping({ timeout: timeoutMs });
    return Math.round(performance.now() - started);
  }

  /** Keeps the upstream telling about `uri` (resources/subscribe) until the returned function runs. */
  watch(uri: string): () => void {
    this.#watched.add(uri);
    void this.#subscribe(uri);
    return () => {
      if (!this.#watched.delete(uri)) return;
      void this.#client?.unsubscribeResource({ uri }).catch(() => undefined);
    };
  }

  async #subscribe(uri: string): Promise<void> {
    const client = this.#client;
    if (!client?.getServerCapabilities()?.resources?.subscribe) return;
    await client.subscribeResource({ uri }).catch(() => undefined);
  }

  #watchLists(client: Client) {
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (this.client === client) this.options.onResourceUpdated?.(n.params.uri);
    });
    client.setNotificationHandler(
      ToolListChangedNotificationSchema,
      () => void this.#refresh(["tools"]).catch(() => undefined),
    );
    client.setNotificationHandler(
      PromptListChangedNotificationSchema,
      () => void this.#refresh(["prompts"]).catch(() => undefined),
    );
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => void this.#refresh(["resources"]).catch(() => undefined),
    );
  }

  /** Re-reads the upstream's lists of the given kinds, then announces each kind that changed. */
  async #refresh(kinds: ListChangeKind[]): Promise<void> {
    const client = this.#client;
    if (!client) return;
    const caps = client.getServerCapabilities() ?? {};
    const next = { ...this.#entries };
    const changed: typeof kinds = [];
    if (kinds.includes("tools") && caps.tools) next.tools = await this.#list(client, "tools/list", "tools");
    if (kinds.includes("prompts") && caps.prompts)
      next.prompts = await this.#list(client, "prompts/list", "prompts");
    if (kinds.includes("resources") && caps.resources) {
      next.resources = await this.#list(client, "resources/list", "resources");
      next.resourceTemplates = await this.#list(client, "resources/templates/list", "resourceTemplates");
    }
    for (const kind of kinds) {
      const before =
        kind === "resources"
          ? [this.#entries.resources, this.#entries.resourceTemplates]
          : this.#entries[kind];
      const after = kind === "resources" ? [next.resources, next.resourceTemplates] : next[kind];
      if (JSON.stringify(before) !== JSON.stringify(after)) changed.push(kind);
    }
    this.#entries = next;
    for (const kind of changed) this.events.listChanged(kind);
  }

  /**
   * Every valid entry of every page of a list (validEntries: the SDK's own list methods refuse a
   * whole page for one bad entry); a list the upstream does not implement (-32601) is empty.
   */
  #list<K extends EntryKind>(client: Client, method: string, key: K) {
    return optional(
      listAll(async (cursor) => {
        const r = await client.request(
          { method, params: cursor === undefined ? {} : { cursor } },
          ResultSchema,
        );
        const nextCursor = typeof r.nextCursor === "string" ? r.nextCursor : undefined;
        return { items: validEntries(key, r[key]), nextCursor };
      }),
    );
  }

  /** Pings the upstream; a failed ping means reconnecting, which decides the health. */
  async #probe(): Promise<void> {
    if (this.#closed) return;
    try {
      if (!this.#client) throw new Error("not connected");
      await this.#client.ping({ timeout: 5000 });
      this.#setHealthy(true);
    } catch {
      await this.connect();
    }
  }

  #setHealthy(healthy: boolean, reason?: string) {
    this.#reason = healthy ? undefined : reason;
    if (healthy === this.#healthy && this.#reported) return;
    this.#reported = true;
    this.#healthy = healthy;
    this.events.healthChanged(healthy, reason);
  }
}

/**
 * A list the upstream does not implement (-32601) is empty: many servers with resources have no
 * templates. Any other failure still fails the refresh.
 */
async function optional<T>(list: Promise<T[]>): Promise<T[]> {
  try {
    return await list;
  } catch (err) {
    if (err instanceof McpError && err.code === (ErrorCode.MethodNotFound as number)) return [];
    throw err;
  }
}
