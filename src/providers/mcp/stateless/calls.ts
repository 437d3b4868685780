// Requests to a 2026-07-28 upstream for a client of either era (docs/upstream-mcp.md "Eras"):
// an input_required answer goes to a 2026-07-28 client as is, or is asked of a session-era client
// one server-to-client request per question, and the upstream retried with the answers.
import { McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { StatelessCatalog } from "./catalog.js";
import type { StatelessRequestOptions } from "./client.js";
import { relayedError, type UpstreamTarget } from "../upstream.js";
import type { CapabilityProfile } from "../../../protocol/profile.js";
import type { CallContext, ProviderEvents, SessionOutlet } from "../../types.js";
import {
  definedOf,
  nextRound,
  PROGRESS_TOKEN,
  relayNotification,
  sessionShaped,
  UNSUPPORTED_VERSION,
} from "../bridge.js";
import { tellBreaker } from "../failures.js";
import { withoutTasksExtension } from "./tasks.js";
import type { CallHow } from "../calls.js";
import { evictable, MAX_PROFILES, PROFILE_EVICT_IDLE_MS } from "../profiles.js";

/**
 * A request to a 2026-07-28 upstream. An input_required answer goes back as is to a client that
 * takes it (ctx.mrtr); any other client is asked each question with a server-to-client request
 * (session era), and the upstream is retried with the answers and its requestState.
 */
export function callStateless(
  catalog: StatelessCatalog,
  method: string,
  params: Record<string, unknown>,
  ctx: CallContext,
  tool: Tool | undefined,
  how: Pick<CallHow, "providerId" | "timeoutMs" | "failures" | "breaker">,
): Promise<Record<string, unknown>> {
  const options: StatelessRequestOptions = {
    // A task the upstream made of a plain call would have nobody to poll it: only Portico's tasks
    // declare the extension (stateless/tasks.ts).
    clientCapabilities: withoutTasksExtension(ctx.clientCapabilities),
    logLevel: ctx.logLevel,
    progressToken: PROGRESS_TOKEN,
    signal: ctx.cancellation ?? ctx.signal,
    tool,
    timeoutMs: how.timeoutMs,
    onNotification: (m, p) => relayNotification(ctx, m, p),
    // With tracing on, a retry with the client's answers links to the round that asked.
    rounds: {},
  };
  return (async () => {
    let round = ctx.mrtr ? definedOf(ctx.mrtr) : {};
    for (let rounds = 1; ; rounds++) {
      let result: Record<string, unknown>;
      try {
        result = await catalog.client.request(method, { ...params, ...round }, options);
        how.breaker?.succeeded();
      } catch (err) {
        tellBreaker(how.breaker, err, options.signal?.aborted === true);
        if (err instanceof McpError) {
          // An upstream that no longer speaks 2026-07-28 is discovered again.
          if (err.code === UNSUPPORTED_VERSION) void catalog.connect();
          throw relayedError(how.failures.scrubbed(err), how.providerId, ctx.protocolVersion);
        }
        throw how.failures.unavailable(err);
      }
      if (result.resultType !== "input_required") return ctx.sessionId ? sessionShaped(result) : result;
      const next = await nextRound(result, rounds, ctx, how.providerId);
      if ("relay" in next) return next.relay;
      round = next.round;
    }
  })();
}

/**
 * Client sessions subscribed to a 2026-07-28 upstream's resources (resources/subscribe): one watch
 * of the upstream per URI, its updates routed to each session that subscribed.
 */
export class SessionWatches {
  readonly #byUri = new Map<string, { release: () => void; sessions: Set<string> }>();

  constructor(
    private readonly outlet: SessionOutlet,
    private readonly tenantId: string,
  ) {}

  add(uri: string, sid: string, watch: (uri: string) => () => void): void {
    let entry = this.#byUri.get(uri);
    if (!entry) {
      entry = { release: watch(uri), sessions: new Set() };
      this.#byUri.set(uri, entry);
    }
    entry.sessions.add(sid);
  }

  remove(uri: string, sid: string): void {
    const entry = this.#byUri.get(uri);
    if (!entry?.sessions.delete(sid) || entry.sessions.size > 0) return;
    entry.release();
    this.#byUri.delete(uri);
  }

  /** Every subscription of a session that ended. */
  removeSession(sid: string): void {
    for (const uri of [...this.#byUri.keys()]) this.remove(uri, sid);
  }

  updated(uri: string): void {
    for (const sid of this.#byUri.get(uri)?.sessions ?? [])
      void this.outlet
        .notify(this.tenantId, sid, "notifications/resources/updated", { uri })
        .catch(() => undefined);
  }
}

/**
 * The lists of a 2026-07-28 upstream per capability profile (docs/upstream-mcp.md "Capability
 * profiles"): each profile's lists are asked with its capabilities in `_meta`, the first time the
 * profile is prepared (one listing however many ask together); its list changes are raised for
 * that profile. The catalog without a profile (the provider's own) serves every other profile.
 */
export class StatelessProfiles {
  readonly #catalogs = new Map<string, { readonly catalog: StatelessCatalog; lastUsed: number }>();
  readonly #preparing = new Map<string, Promise<void>>();

  constructor(
    private readonly target: UpstreamTarget,
    private readonly events: ProviderEvents,
  ) {}

  /** True once `profile` was listed. */
  has(profile: CapabilityProfile): boolean {
    return this.#catalogs.has(profile.key);
  }

  /** The catalog of `profile` once prepared. */
  get(profile: CapabilityProfile | undefined): StatelessCatalog | undefined {
    const entry = profile ? this.#catalogs.get(profile.key) : undefined;
    if (entry) entry.lastUsed = Date.now();
    return entry?.catalog;
  }

  prepare(profile: CapabilityProfile): Promise<void> {
    if (this.#catalogs.has(profile.key)) return Promise.resolve();
    let pending = this.#preparing.get(profile.key);
    if (!pending) {
      // No slot free (MAX_PROFILES): the profile is served the provider's own lists.
      if (!this.#roomForProfile()) return Promise.resolve();
      const events: ProviderEvents = {
        listChanged: (kind) => this.events.listChanged(kind, profile),
        healthChanged: () => undefined,
      };
      const catalog = new StatelessCatalog(this.target, events, { capabilities: profile.capabilities });
      pending = catalog.connect().then(() => {
        this.#catalogs.set(profile.key, { catalog, lastUsed: Date.now() });
        this.#preparing.delete(profile.key);
      });
      this.#preparing.set(profile.key, pending);
    }
    return pending;
  }

  async close(): Promise<void> {
    const all = [...this.#catalogs.values()];
    this.#catalogs.clear();
    await Promise.allSettled(all.map((c) => c.catalog.close()));
  }

  /** True when a new profile may be listed: under MAX_PROFILES, or after dropping an idle one. */
  #roomForProfile(): boolean {
    if (this.#catalogs.size + this.#preparing.size < MAX_PROFILES) return true;
    const key = evictable(this.#catalogs, Date.now() - PROFILE_EVICT_IDLE_MS);
    const entry = key === undefined ? undefined : this.#catalogs.get(key);
    if (!entry) return false;
    this.#catalogs.delete(key!);
    void entry.catalog.close();
    return true;
  }
}
