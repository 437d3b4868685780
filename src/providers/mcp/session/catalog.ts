// The catalog of a session-era upstream for one capability profile (docs/upstream-mcp.md
// "Profiles"): one upstream session per provider, profile and replica, initialized with the
// profile's capabilities, that lists the upstream's entries (every page), re-reads a list when the
// upstream says it changed, pings the upstream to know its health, and serves the calls of client
// sessions that need no upstream session of their own (the shared session).
import { ErrorCode, McpError, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { CapabilityProfile } from "../../../protocol/profile.js";
import { validEntries, type EntryKind } from "../../list-entries.js";
import { describeFailure, listAll, type UpstreamTarget } from "../upstream.js";
import type { UpstreamHttp } from "../exchange.js";
import {
  NotRouted,
  SessionUpstream,
  type OpenSession,
  type SessionHandlers,
  type UpstreamSession,
} from "./client.js";
import {
  EMPTY_ENTRIES,
  type ListChangeKind,
  type ProviderEntries,
  type ProviderEvents,
} from "../../types.js";

export interface UpstreamCatalogOptions {
  /**
   * Era following (`era: "auto"`): before each connect the catalog asks which era the upstream
   * speaks (the provider's discovery, which knows both eras), and a 2026-07-28 upstream is handed
   * to `changed`: the provider switches implementations.
   */
  readonly followEra?: {
    readonly discover: (timeoutMs: number) => Promise<"session" | "stateless">;
    readonly changed: () => Promise<void>;
  };
  /** notifications/resources/updated for a URI someone watches (see watch()). */
  readonly onResourceUpdated?: (uri: string) => void;
  /** The catalog whose verdict is the provider's health (the one without a profile). */
  readonly reportsHealth?: boolean;
  /** How sessions are opened when not over Streamable HTTP (a `stdio` upstream's child). */
  readonly open?: OpenSession;
  /** What is declared at initialize instead of the profile's capabilities (a stdio child serving all). */
  readonly declares?: object;
  /**
   * A request of the upstream outside any call (on the GET stream); default: refused, since a
   * shared session belongs to no client.
   */
  readonly request?: SessionHandlers["request"];
}

const LIST_CHANGED: ReadonlyMap<string, ListChangeKind> = new Map([
  ["notifications/tools/list_changed", "tools"],
  ["notifications/prompts/list_changed", "prompts"],
  ["notifications/resources/list_changed", "resources"],
]);
const ALL_KINDS: readonly ListChangeKind[] = ["tools", "prompts", "resources"];

/** True when the upstream accepts a session-era initialize (the session it opened is ended at once). */
export async function acceptsInitialize(
  http: UpstreamHttp,
  base: Record<string, string>,
  timeoutMs: number,
): Promise<boolean> {
  const signal = AbortSignal.timeout(Math.min(timeoutMs, 10_000));
  const handlers = { notification: () => undefined, request: () => Promise.reject(new NotRouted()) };
  const probe = await SessionUpstream.initialize(http, base, {}, handlers, signal).catch(() => undefined);
  void probe?.terminate().catch(() => undefined);
  return probe !== undefined;
}

export class UpstreamCatalog {
  readonly profile: CapabilityProfile;
  #entries: ProviderEntries = EMPTY_ENTRIES;
  #healthy = false;
  /** The first verdict is logged too: a provider broken from the start must not go unnoticed. */
  #reported = false;
  #reason: string | undefined = "not connected yet";
  #session: UpstreamSession | undefined;
  #connecting: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /**
   * False until the first connect ended: the lists it finds are the provider's (or the profile's)
   * first, announced by whoever started it (the registry announces a provider added as a whole).
   */
  #announcing = false;
  /** Kinds being re-listed after a list_changed, and whether another came meanwhile (one more pass). */
  readonly #relisting = new Map<ListChangeKind, boolean>();
  /** Last time this catalog was asked for (idle profiles may be dropped). */
  lastUsed = Date.now();
  /** URIs watched for resources/updated, subscribed again on every new session. */
  readonly #watched = new Set<string>();
  readonly #handlers: SessionHandlers;

  constructor(
    private readonly target: UpstreamTarget,
    private readonly http: UpstreamHttp,
    private readonly base: Record<string, string>,
    profile: CapabilityProfile,
    private readonly events: ProviderEvents,
    private readonly options: UpstreamCatalogOptions = {},
  ) {
    this.profile = profile;
    this.#handlers = {
      notification: (method, params) => this.#onNotification(method, params),
      // Requests outside a call on a shared session belong to no client: refused, but for polls of
      // a client's own task, which name their client (session/client-tasks.ts).
      request: options.request ?? (() => Promise.reject(new NotRouted())),
      gone: (session) => void this.heal(session).catch(() => undefined),
    };
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

  /** The shared upstream session, once connected. */
  get session(): UpstreamSession | undefined {
    return this.#session;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.#session?.capabilities;
  }

  /** The guidance for models the upstream gave when its shared session opened. */
  get instructions(): string | undefined {
    return this.#session?.instructions;
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
    const session = this.#session;
    this.#session = undefined;
    await session?.terminate().catch(() => undefined);
  }

  /**
   * Asks the upstream which era it speaks (server/discover) before initializing: an upstream that
   * speaks 2026-07-28 now is handed to followEra.changed. One connect at a time (no reconnect storm);
   * never throws: unreachable is unhealthy.
   */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
      this.#announcing = true;
    });
    return this.#connecting;
  }

  /**
   * The shared session after `failed` was found gone: a new one, opened once however many calls
   * found it gone together. Throws when the upstream cannot be reached.
   */
  async heal(failed: UpstreamSession): Promise<UpstreamSession> {
    if (this.#session === failed || !this.#session) await this.connect();
    if (!this.#session || this.#session === failed) throw new Error(this.#reason ?? "unreachable");
    return this.#session;
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    try {
      const timeoutMs = Math.min(this.target.timeoutMs, 10_000);
      const follow = this.options.followEra;
      if (follow && (await follow.discover(timeoutMs)) === "stateless") return await follow.changed();
      const open = this.options.open ?? this.#overHttp;
      const declared = this.options.declares ?? this.profile.capabilities;
      const session = await open(declared, this.#handlers, AbortSignal.timeout(timeoutMs));
      if (this.#closed) return void session.terminate().catch(() => undefined);
      const old = this.#session;
      this.#session = session;
      // A session the upstream may still hold (a failed ping is not a forgotten session) is ended.
      void old?.terminate().catch(() => undefined);
      // list_changed and resources/updated arrive on the GET stream.
      session.openStream();
      await this.#refresh(ALL_KINDS);
      this.#setHealthy(true);
      for (const uri of this.#watched) void this.#subscribe(uri);
    } catch (err) {
      this.#setHealthy(false, describeFailure(err));
    }
  }

  readonly #overHttp: OpenSession = (capabilities, handlers, signal) =>
    SessionUpstream.initialize(this.http, this.base, capabilities, handlers, signal);

  /** Re-reads every list now (reconnecting first when disconnected); throws when that fails. */
  async refresh(): Promise<void> {
    if (!this.#session || !this.#healthy) await this.connect();
    else await this.#refresh(ALL_KINDS);
    if (!this.#healthy) throw new Error(this.#reason ?? "unreachable");
  }

  /** Pings the upstream now and returns the round trip in milliseconds; throws when it fails. */
  async ping(timeoutMs: number): Promise<number> {
    const session = this.#session;
    if (!session) throw new Error(this.#reason ?? "not connected");
    const started = performance.now();
    await session.request("ping", undefined, AbortSignal.timeout(timeoutMs));
    return Math.round(performance.now() - started);
  }

  /** A call through the shared session failed at transport level: the health says so until a probe succeeds. */
  failed(reason: string): void {
    if (this.#healthy) this.#setHealthy(false, reason);
    void this.connect();
  }

  /** Keeps the upstream telling about `uri` (resources/subscribe) until the returned function runs. */
  watch(uri: string): () => void {
    this.#watched.add(uri);
    void this.#subscribe(uri);
    return () => {
      if (!this.#watched.delete(uri)) return;
      void this.#session?.request("resources/unsubscribe", { uri }, undefined).catch(() => undefined);
    };
  }

  async #subscribe(uri: string): Promise<void> {
    const session = this.#session;
    if (!session?.capabilities?.resources?.subscribe) return;
    await session.request("resources/subscribe", { uri }, undefined).catch(() => undefined);
  }

  #onNotification(method: string, params: Record<string, unknown>): void {
    const kind = LIST_CHANGED.get(method);
    if (kind) return void this.#relist(kind);
    if (method === "notifications/resources/updated" && typeof params.uri === "string")
      this.options.onResourceUpdated?.(params.uri);
  }

  /**
   * A list_changed re-lists its kind; those that arrive while it runs make one more pass, not one
   * each (an upstream announcing changes in a storm costs two listings, docs/upstream-mcp.md).
   */
  async #relist(kind: ListChangeKind): Promise<void> {
    if (this.#relisting.has(kind)) return void this.#relisting.set(kind, true);
    try {
      do {
        this.#relisting.set(kind, false);
        await this.#refresh([kind]).catch(() => undefined);
      } while (this.#relisting.get(kind) && !this.#closed);
    } finally {
      this.#relisting.delete(kind);
    }
  }

  async #refresh(kinds: readonly ListChangeKind[]) {
    const session = this.#session;
    if (!session) return;
    const caps = session.capabilities ?? {};
    const next = { ...this.#entries };
    const changed: ListChangeKind[] = [];
    if (kinds.includes("tools") && caps.tools) next.tools = await this.#list(session, "tools/list", "tools");
    if (kinds.includes("prompts") && caps.prompts)
      next.prompts = await this.#list(session, "prompts/list", "prompts");
    if (kinds.includes("resources") && caps.resources) {
      next.resources = await this.#list(session, "resources/list", "resources");
      next.resourceTemplates = await this.#list(session, "resources/templates/list", "resourceTemplates");
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
    if (!this.#announcing) return;
    for (const kind of changed) this.events.listChanged(kind, this.profile);
  }

  /**
   * Every valid entry of every page of a list (validEntries: one bad entry does not cost the whole
   * page); a list the upstream does not implement (-32601) is empty.
   */
  async #list<K extends EntryKind>(session: UpstreamSession, method: string, key: K) {
    try {
      return await listAll(async (cursor) => {
        const signal = AbortSignal.timeout(this.target.timeoutMs);
        const r = await session.request(method, cursor === undefined ? undefined : { cursor }, signal);
        const nextCursor = typeof r.nextCursor === "string" ? r.nextCursor : undefined;
        return { items: validEntries(key, r[key]), nextCursor };
      });
    } catch (err) {
      if (err instanceof McpError && err.code === (ErrorCode.MethodNotFound as number)) return [];
      throw err;
    }
  }

  /** Pings the upstream; a failed ping means reconnecting, which decides the health. */
  async #probe(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.ping(5000);
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
    if (this.options.reportsHealth) this.events.healthChanged(healthy, reason);
  }
}
