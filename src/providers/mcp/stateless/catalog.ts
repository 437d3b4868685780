// The catalog of a 2026-07-28 `mcp` upstream: server/discover for its era and capabilities, every
// page of each declared list, one subscriptions/listen stream for list changes and watched
// resources (basic/patterns/subscriptions), and a server/discover round trip as the health probe
// (2026-07-28 has no ping). The same surface as UpstreamCatalog (../session/catalog.ts).
import {
  ErrorCode,
  McpError,
  type ClientCapabilities,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { isPorticoError } from "../../../protocol/errors.js";
import { validEntries, type EntryKind } from "../../list-entries.js";
import { describeFailure, listAll, type UpstreamTarget } from "../upstream.js";
import {
  StatelessUpstreamClient,
  type DiscoverResult,
  type ListenFilter,
  type StatelessRequestOptions,
} from "./client.js";
import {
  EMPTY_ENTRIES,
  type ListChangeKind,
  type ProviderEntries,
  type ProviderEvents,
} from "../../types.js";

export interface StatelessCatalogOptions {
  /** Discovery found a session-era upstream: the provider switches implementations. */
  readonly onEraChanged?: () => void;
  /** notifications/resources/updated for a URI someone watches (see watch()). */
  readonly onResourceUpdated?: (uri: string) => void;
  /** The client capabilities its lists are asked under (a capability profile's); default none. */
  readonly capabilities?: ClientCapabilities;
}

const ALL_KINDS: readonly ListChangeKind[] = ["tools", "prompts", "resources"];
const LIST_CHANGED: ReadonlyMap<string, ListChangeKind> = new Map([
  ["notifications/tools/list_changed", "tools"],
  ["notifications/prompts/list_changed", "prompts"],
  ["notifications/resources/list_changed", "resources"],
]);
const PROBE_TIMEOUT_MS = 5000;
const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
const SESSION_ERA = "the upstream does not speak 2026-07-28 (server/discover)";
/** RFC 9110 §5.1 token: what an `x-mcp-header` name must be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES: ReadonlySet<unknown> = new Set(["string", "integer", "boolean"]);
/** Keywords whose values are instances, not schemas: an `x-mcp-header` key in them is data. */
const INSTANCE_KEYWORDS: ReadonlySet<string> = new Set(["const", "default", "enum", "examples"]);

interface ListenStream {
  readonly controller: AbortController;
  /** The filter it asked for, as JSON: a different one needs a new stream. */
  readonly key: string;
  acknowledgedAt?: number;
}

type MutableEntries = { -readonly [K in keyof ProviderEntries]: ProviderEntries[K] };

export class StatelessCatalog {
  readonly #target: UpstreamTarget;
  readonly #events: ProviderEvents;
  readonly #options: StatelessCatalogOptions;
  readonly #client: StatelessUpstreamClient;
  /** How its lists and probes are asked (the profile's capabilities in _meta). */
  readonly #request: StatelessRequestOptions;
  #entries: ProviderEntries = EMPTY_ENTRIES;
  #tools: ReadonlyMap<string, Tool> = new Map();
  #healthy = false;
  /** The first verdict is logged too: a provider broken from the start must not go unnoticed. */
  #reported = false;
  #reason: string | undefined = "not connected yet";
  #discover: DiscoverResult | undefined;
  #sessionEra = false;
  #closed = false;
  /** False until the first connect ended: its lists are announced by whoever started the provider. */
  #announcing = false;
  #timer: NodeJS.Timeout | undefined;
  #connecting: Promise<void> | undefined;
  #refreshing: Promise<unknown> = Promise.resolve();
  #waiting: { kinds: Set<ListChangeKind>; run: Promise<void> } | undefined;
  readonly #watched = new Map<string, number>();
  #listen: ListenStream | undefined;
  #listenSyncQueued = false;
  #retry: NodeJS.Timeout | undefined;
  #backoffMs = INITIAL_BACKOFF_MS;

  constructor(target: UpstreamTarget, events: ProviderEvents, options: StatelessCatalogOptions = {}) {
    this.#target = target;
    this.#events = events;
    this.#options = options;
    this.#client = new StatelessUpstreamClient(target);
    this.#request = Object.freeze({ clientCapabilities: options.capabilities ?? {} });
  }

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

  /** The guidance for models the last server/discover gave, if any. */
  get instructions(): string | undefined {
    return this.#discover?.instructions;
  }

  /** What the last server/discover declared. */
  get capabilities(): ServerCapabilities | undefined {
    return this.#discover?.capabilities;
  }

  get client(): StatelessUpstreamClient {
    return this.#client;
  }

  /** The upstream's definition of a tool, by its upstream name (for Mcp-Param-* mirroring). */
  tool(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Connects (never throws: an unreachable upstream is unhealthy) and starts the health probe. */
  async start(healthIntervalMs: number): Promise<void> {
    await this.connect();
    this.#timer = setInterval(() => void this.#probe(), healthIntervalMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#stopListen();
  }

  /**
   * Discovers and lists everything; never throws. A session-era upstream calls onEraChanged
   * (without it, the catalog turns unhealthy). One connect at a time: callers share it.
   */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
      this.#announcing = true;
    });
    return this.#connecting;
  }

  /** Re-reads every list now (reconnecting first when unhealthy); throws when that fails. */
  async refresh(): Promise<void> {
    if (!this.#healthy) await this.connect();
    else await this.#refresh(ALL_KINDS);
    if (this.#sessionEra) throw new Error(SESSION_ERA);
    if (!this.#healthy) throw new Error(this.#reason ?? "unreachable");
  }

  /** One server/discover round trip; resolves with its duration in milliseconds, throws when it fails. */
  async ping(timeoutMs: number): Promise<number> {
    const started = performance.now();
    await this.#client.request("server/discover", {}, { ...this.#request, timeoutMs });
    return Math.round(performance.now() - started);
  }

  /** Reference-counted interest in notifications/resources/updated for `uri`; call the result to drop it. */
  watch(uri: string): () => void {
    const count = this.#watched.get(uri) ?? 0;
    this.#watched.set(uri, count + 1);
    if (count === 0) this.#watchedChanged();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#watched.get(uri) ?? 1) - 1;
      if (left > 0) return void this.#watched.set(uri, left);
      this.#watched.delete(uri);
      this.#watchedChanged();
    };
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    try {
      const outcome = await this.#client.discover(Math.min(this.#target.timeoutMs, 10_000));
      if (outcome.era === "session") return this.#toSessionEra();
      this.#sessionEra = false;
      this.#discover = outcome.discover;
      await this.#refresh(ALL_KINDS);
      this.#setHealthy(true);
      this.#syncListen(false);
    } catch (err) {
      this.#setHealthy(false, reasonOf(err));
    }
  }

  #toSessionEra(): void {
    this.#stopListen();
    if (this.#sessionEra) return;
    this.#sessionEra = true;
    if (this.#options.onEraChanged) this.#options.onEraChanged();
    else this.#setHealthy(false, SESSION_ERA);
  }

  /**
   * Re-reads the lists of the given kinds, one refresh after another, then announces what changed;
   * a refresh waiting its turn takes the kinds of those asked meanwhile (a list_changed storm).
   */
  #refresh(kinds: readonly ListChangeKind[]): Promise<void> {
    if (this.#waiting) {
      for (const kind of kinds) this.#waiting.kinds.add(kind);
      return this.#waiting.run;
    }
    const waiting = { kinds: new Set(kinds), run: Promise.resolve() };
    this.#waiting = waiting;
    waiting.run = this.#refreshing.then(() => {
      this.#waiting = undefined;
      return this.#refreshNow([...waiting.kinds]);
    });
    this.#refreshing = waiting.run.catch(() => undefined);
    return waiting.run;
  }

  async #refreshNow(kinds: readonly ListChangeKind[]): Promise<void> {
    const caps = this.#discover?.capabilities ?? {};
    const next: MutableEntries = { ...this.#entries };
    if (kinds.includes("tools"))
      next.tools = caps.tools ? (await this.#list("tools/list", "tools")).filter(validHeaders) : [];
    if (kinds.includes("prompts"))
      next.prompts = caps.prompts ? await this.#list("prompts/list", "prompts") : [];
    if (kinds.includes("resources")) {
      next.resources = caps.resources ? await this.#list("resources/list", "resources") : [];
      next.resourceTemplates = caps.resources
        ? await this.#list("resources/templates/list", "resourceTemplates")
        : [];
    }
    const before = this.#entries;
    this.#entries = next;
    if (next.tools !== before.tools) this.#tools = new Map(next.tools.map((t) => [t.name, t]));
    for (const kind of kinds) {
      const changed =
        kind === "resources"
          ? JSON.stringify([before.resources, before.resourceTemplates]) !==
            JSON.stringify([next.resources, next.resourceTemplates])
          : JSON.stringify(before[kind]) !== JSON.stringify(next[kind]);
      if (changed && this.#announcing) this.#events.listChanged(kind);
    }
  }

  /**
   * Every valid entry of every page of a list (validEntries); a list the upstream does not
   * implement (-32601) is empty.
   */
  async #list<K extends EntryKind>(method: string, key: K) {
    try {
      return await listAll(async (cursor) => {
        const r = await this.#client.request(method, cursor === undefined ? {} : { cursor }, this.#request);
        const nextCursor = typeof r.nextCursor === "string" ? r.nextCursor : undefined;
        return { items: validEntries(key, r[key]), nextCursor };
      });
    } catch (err) {
      if (err instanceof McpError && err.code === (ErrorCode.MethodNotFound as number)) return [];
      throw err;
    }
  }

  /** A discover round trip while healthy; when unhealthy, or when it fails or differs, connect again. */
  async #probe(): Promise<void> {
    if (this.#closed) return;
    if (this.#healthy && !this.#sessionEra) {
      try {
        const outcome = await this.#client.discover(PROBE_TIMEOUT_MS);
        const same =
          outcome.era === "stateless" &&
          JSON.stringify(outcome.discover.capabilities) === JSON.stringify(this.#discover?.capabilities);
        if (same) return;
      } catch {
        // connect() below decides the health.
      }
    }
    await this.connect();
  }

  /** The filter this catalog listens with; undefined when there is nothing to listen for. */
  #filter(): ListenFilter | undefined {
    const caps = this.#discover?.capabilities ?? {};
    const filter: ListenFilter = {};
    if (caps.tools?.listChanged) filter.toolsListChanged = true;
    if (caps.prompts?.listChanged) filter.promptsListChanged = true;
    if (caps.resources?.listChanged) filter.resourcesListChanged = true;
    if (caps.resources?.subscribe && this.#watched.size > 0)
      filter.resourceSubscriptions = [...this.#watched.keys()];
    return Object.keys(filter).length > 0 ? filter : undefined;
  }

  #watchedChanged(): void {
    // Several watch() calls in one tick make one new stream.
    if (this.#listenSyncQueued) return;
    this.#listenSyncQueued = true;
    queueMicrotask(() => {
      this.#listenSyncQueued = false;
      this.#syncListen(false);
    });
  }

  /** Opens the listen stream the current filter needs, unless it is already open; `reread` after a drop. */
  #syncListen(reread: boolean): void {
    if (this.#closed || !this.#healthy) return;
    const filter = this.#filter();
    if (!filter) return this.#stopListen();
    const key = JSON.stringify(filter);
    if (this.#listen?.key === key) return;
    clearTimeout(this.#retry);
    const previous = this.#listen;
    const stream: ListenStream = { controller: new AbortController(), key };
    this.#listen = stream;
    // The previous stream stays open until this one is acknowledged, so no change falls in between.
    this.#client
      .listen(filter, (method, params) => this.#onNotification(method, params), stream.controller.signal)
      .then(
        ({ closed }) => {
          previous?.controller.abort();
          stream.acknowledgedAt = performance.now();
          // Changes made while no stream was open went unheard.
          if (reread) void this.#refresh(ALL_KINDS).catch(() => undefined);
          void closed.then(() => this.#listenEnded(stream));
        },
        () => {
          previous?.controller.abort();
          this.#listenEnded(stream);
        },
      );
  }

  /** A stream ended: when it was the current one and the upstream is healthy, listen again after a backoff. */
  #listenEnded(stream: ListenStream): void {
    if (this.#listen !== stream || this.#closed) return;
    this.#listen = undefined;
    if (!this.#healthy) return;
    if (stream.acknowledgedAt !== undefined && performance.now() - stream.acknowledgedAt >= MAX_BACKOFF_MS)
      this.#backoffMs = INITIAL_BACKOFF_MS;
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(delay * 2, MAX_BACKOFF_MS);
    this.#retry = setTimeout(() => this.#syncListen(true), delay);
    this.#retry.unref();
  }

  #stopListen(): void {
    clearTimeout(this.#retry);
    this.#listen?.controller.abort();
    this.#listen = undefined;
  }

  #onNotification(method: string, params: Record<string, unknown>): void {
    const kind = LIST_CHANGED.get(method);
    if (kind !== undefined) return void this.#refresh([kind]).catch(() => undefined);
    const uri = params.uri;
    if (method === "notifications/resources/updated" && typeof uri === "string" && this.#watched.has(uri))
      this.#options.onResourceUpdated?.(uri);
  }

  #setHealthy(healthy: boolean, reason?: string): void {
    this.#reason = healthy ? undefined : reason;
    if (!healthy) this.#stopListen();
    if (healthy === this.#healthy && this.#reported) return;
    this.#reported = true;
    this.#healthy = healthy;
    if (healthy) this.#backoffMs = INITIAL_BACKOFF_MS;
    this.#events.healthChanged(healthy, reason);
  }
}

/** Words for why the upstream is unhealthy, safe for the wire. */
function reasonOf(err: unknown): string {
  return isPorticoError(err) && err.code === "PORTICO_ERR_PROVIDER_TIMEOUT"
    ? "timed out"
    : describeFailure(err);
}

/**
 * streamable-http §Custom Headers from Tool Parameters: a client MUST leave out a tool whose
 * `x-mcp-header` annotations are invalid — not a token, on a type other than string, integer or
 * boolean, not case-insensitively unique, or not reachable from the root through `properties` only.
 */
function validHeaders(tool: Tool): boolean {
  const root: unknown = tool.inputSchema;
  const seen = new Set<string>();
  const valid = (node: unknown, reachable: boolean): boolean => {
    if (Array.isArray(node)) return node.every((item) => valid(item, false));
    if (typeof node !== "object" || node === null) return true;
    const schema = node as Record<string, unknown>;
    const header = schema["x-mcp-header"];
    if (header !== undefined) {
      if (!reachable || node === root || typeof header !== "string" || !TOKEN.test(header)) return false;
      if (!HEADER_TYPES.has(schema.type) || seen.has(header.toLowerCase())) return false;
      seen.add(header.toLowerCase());
    }
    return Object.entries(schema).every(([key, value]) => {
      if (INSTANCE_KEYWORDS.has(key)) return true;
      if (key !== "properties" || typeof value !== "object" || value === null || Array.isArray(value))
        return valid(value, false);
      return Object.values(value).every((property) => valid(property, reachable));
    });
  };
  return valid(root, true);
}
