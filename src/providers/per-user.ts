// `mcp` providers whose upstream credentials are per user (`auth.type` "user_oauth" or
// "token_exchange"; docs/architecture.md §3, docs/upstream-auth.md). The tenant's catalogs hold this
// provider, which lists what a user who has not connected sees; each authenticated request's catalog
// holds the user's own view instead (forUser): their upstream sessions and catalogs, never shared.
// Bounded on each replica: MAX_USERS users per provider, least recently used out, and a user idle
// for IDLE_MS has their upstream closed.
import type { FastifyBaseLogger } from "fastify";
import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { AccountChange, UserTokenSource } from "./user-tokens.js";
import { fail } from "../protocol/errors.js";
import { randomId } from "../crypto/secrets.js";
import type { HttpProviderConfig, McpProviderConfig, OpenApiProviderConfig } from "../records/tenant.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import {
  connectEntries,
  connectToolName,
  promptShape,
  textResult,
  type ConnectPrompt,
} from "./per-user/connect.js";
import { UserCredentials } from "./per-user/user-credentials.js";
import { UserUpstream } from "./per-user/user-upstream.js";
import type { Authorizer } from "./upstream-auth.js";
import type {
  CallContext,
  Provider,
  ProviderEntries,
  ProviderEvents,
  ProviderKind,
  SessionOutlet,
  UpstreamTasks,
} from "./types.js";

/** Users whose upstream a provider keeps open on one replica. */
export const MAX_USERS = 200;
/** A user's upstream unused this long is closed (opened again on their next request). */
export const IDLE_MS = 10 * 60_000;
/** How long a connect link's session is remembered to announce its completion (elicitation/complete). */
const ELICITATION_TTL_SECONDS = 15 * 60;

export interface PerUserDeps {
  readonly tenantId: string;
  /** Where the session that asked for a connect link is remembered, for every replica to find. */
  readonly store: Store;
  readonly keys: Keys;
  readonly source: UserTokenSource;
  /** Builds a user's upstream: the provider's `mcp` or `http` provider with these credentials. */
  readonly build: (credentials: Authorizer) => Provider;
  readonly outlet: SessionOutlet;
  readonly log: FastifyBaseLogger;
  readonly idleMs?: number;
}

export class PerUserProvider implements Provider {
  readonly kind: ProviderKind;
  readonly id: string;
  readonly prefix: string;
  readonly separator: string | undefined;
  readonly healthy = true;
  readonly connectTool: string;
  /** The connect tool alone. */
  readonly #entries: ProviderEntries;
  /** What users who have not connected list: the pinned reference's tools (if taken), then the connect tool. */
  #unconnected: ProviderEntries;
  readonly #referenceUser: string | undefined;
  readonly #users = new Map<string, UserUpstream>();
  #events: ProviderEvents | undefined;
  #unsubscribe: (() => void) | undefined;
  #sweep: NodeJS.Timeout | undefined;

  constructor(
    cfg: McpProviderConfig | HttpProviderConfig | OpenApiProviderConfig,
    private readonly deps: PerUserDeps,
  ) {
    this.kind = cfg.kind;
    this.id = cfg.id;
    this.prefix = cfg.prefix ?? "";
    this.separator = cfg.separator;
    this.#entries = connectEntries(cfg.id, cfg.id);
    this.connectTool = connectToolName(cfg.id);
    this.#unconnected = this.#entries;
    this.#referenceUser = cfg.kind === "mcp" ? cfg.referenceUser : undefined;
  }

  /** Users with an upstream open here (tests, metrics). */
  get userCount(): number {
    return this.#users.size;
  }

  entries(): ProviderEntries {
    return this.#unconnected;
  }

  async forUser(user: string): Promise<Provider> {
    let upstream = this.#users.get(user);
    if (upstream && !upstream.closed) {
      this.#users.delete(user);
      this.#users.set(user, upstream);
    } else {
      upstream = this.#upstream(user);
      this.#users.set(user, upstream);
      this.#evict();
    }
    return upstream.ready();
  }

  async start(events: ProviderEvents): Promise<void> {
    this.#events = events;
    this.#unsubscribe = this.deps.source.onChange((change) => this.#changed(change));
    const idleMs = this.deps.idleMs ?? IDLE_MS;
    this.#sweep = setInterval(() => this.#closeIdle(idleMs), Math.min(idleMs, 60_000));
    this.#sweep.unref();
    // Taken before the catalogs are built, as an `mcp` provider lists its upstream when it starts.
    await this.#takeReference();
  }

  /**
   * Lists the upstream as the reference user, once (and again when their account changes): its
   * tools are what users who have not connected see; calling one asks them to connect.
   */
  async #takeReference(): Promise<void> {
    const user = this.#referenceUser;
    if (user === undefined) return;
    const take = async () => {
      const upstream = (await this.forUser(user)) as UserUpstream;
      if (!upstream.connected) {
        this.deps.log.warn(
          { tenant: this.deps.tenantId, provider: this.id },
          "reference user has no token: nothing pinned",
        );
        return;
      }
      const tools = upstream.entries().tools;
      this.#unconnected = Object.freeze({ ...this.#entries, tools: [...tools, ...this.#entries.tools] });
      this.#events?.listChanged("tools");
    };
    await take().catch((err: unknown) =>
      this.deps.log.warn(
        { err, tenant: this.deps.tenantId, provider: this.id },
        "reference listing not taken",
      ),
    );
  }

  async close(): Promise<void> {
    this.#unsubscribe?.();
    clearInterval(this.#sweep);
    const all = [...this.#users.values()];
    this.#users.clear();
    await Promise.allSettled(all.map((u) => u.close()));
  }

  /** Reached through the tenant's catalog: with a user, theirs serves it; without one, nothing can. */
  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    if (ctx.user) return (await this.forUser(ctx.user)).callTool(name, args, ctx);
    return textResult(`Provider '${this.id}' acts for a signed-in user; this request has none`, true);
  }

  /**
   * Reached through the tenant's provider (a task polled on a replica whose catalog for the user is
   * not built): the user's own upstream serves it. Without a user, no task is theirs.
   */
  readonly tasks: UpstreamTasks = {
    support: (name, ctx) => (ctx.user ? this.#users.get(ctx.user)?.tasks.support(name, ctx) : undefined),
    start: async (name, args, task, ctx) => (await this.#userTasks(ctx)).start(name, args, task, ctx),
    get: async (ref, ctx) => (await this.#userTasks(ctx)).get(ref, ctx),
    result: async (ref, ctx) => (await this.#userTasks(ctx)).result(ref, ctx),
    cancel: async (ref, ctx) => (await this.#userTasks(ctx)).cancel(ref, ctx),
    watch: (ref, onStatus, ctx) =>
      (ctx?.user && this.#users.get(ctx.user)?.tasks.watch(ref, onStatus, ctx)) || (() => undefined),
  };

  async #userTasks(ctx: CallContext): Promise<UpstreamTasks> {
    if (!ctx.user) throw this.#noUser();
    const tasks = (await this.forUser(ctx.user)).tasks;
    if (!tasks) throw this.#noUser();
    return tasks;
  }

  getPrompt(): Promise<GetPromptResult> {
    return Promise.reject(this.#noUser());
  }

  readResource(): Promise<ReadResourceResult> {
    return Promise.reject(this.#noUser());
  }

  complete(): Promise<CompleteResult> {
    return Promise.resolve({ completion: { values: [] } });
  }

  #noUser() {
    return fail("PORTICO_ERR_PROVIDER_UNAVAILABLE", `Provider '${this.id}' acts for a signed-in user`);
  }

  #upstream(user: string): UserUpstream {
    const key = { tenant: this.deps.tenantId, user, provider: this.id };
    // The token went (refused twice, or gone from the source): the user's upstream closes.
    const absent = () => void upstream.accountChanged().then(() => this.#events?.userChanged?.(user));
    const credentials = new UserCredentials(this.deps.source, key, absent);
    const events: ProviderEvents = {
      listChanged: () => this.#events?.userChanged?.(user),
      healthChanged: (healthy, reason) =>
        this.deps.log.debug(
          { tenant: key.tenant, provider: this.id, healthy, reason },
          "user upstream health",
        ),
    };
    const upstream: UserUpstream = new UserUpstream({
      kind: this.kind,
      id: this.id,
      prefix: this.prefix,
      separator: this.separator,
      connectEntries: this.#entries,
      unconnected: () => this.#unconnected,
      credentials,
      connectable: this.deps.source.connectUrl !== undefined,
      build: () => this.deps.build(credentials),
      events,
      prompt: (ctx) => this.#prompt(user, ctx),
    });
    return upstream;
  }

  /** A connect link bound to the user; its completion is announced to the session that asked. */
  async #prompt(user: string, ctx: CallContext): Promise<ConnectPrompt> {
    const elicitationId = randomId();
    const url = await this.deps.source.connectUrl!(this.deps.tenantId, user, this.id, elicitationId);
    // Only a session can be told: 2026-07-28 clients retry instead.
    if (ctx.sessionId !== undefined && promptShape(ctx) === "url_elicitation")
      await this.deps.store.set(
        this.deps.keys.connectElicitation(this.deps.tenantId, elicitationId),
        `${ctx.sessionId} ${user}`,
        { ttlSeconds: ELICITATION_TTL_SECONDS },
      );
    return { url, message: `Connect your ${this.id} account to use its tools`, elicitationId };
  }

  #changed(change: AccountChange): void {
    if (change.tenant !== this.deps.tenantId || change.provider !== this.id) return;
    const upstream = this.#users.get(change.user);
    void (upstream?.accountChanged() ?? Promise.resolve()).then(() => {
      this.#events?.userChanged?.(change.user);
      if (change.user === this.#referenceUser && change.connected) void this.#takeReference();
    });
    for (const id of change.elicitationIds ?? [])
      this.#completed(id, change.user).catch((err: unknown) =>
        this.deps.log.debug({ err, provider: this.id }, "elicitation completion not sent"),
      );
  }

  /**
   * Every replica hears a completion: the one whose DEL removes the record tells the session that
   * asked, and only when the completion is that same user's.
   */
  async #completed(id: string, user: string): Promise<void> {
    const key = this.deps.keys.connectElicitation(this.deps.tenantId, id);
    const record = await this.deps.store.get(key);
    if (record === null) return;
    const at = record.indexOf(" ");
    if (record.slice(at + 1) !== user || (await this.deps.store.del(key)) !== 1) return;
    const params = { elicitationId: id };
    await this.deps.outlet.notify(
      this.deps.tenantId,
      record.slice(0, at),
      "notifications/elicitation/complete",
      params,
    );
  }

  #evict(): void {
    while (this.#users.size > MAX_USERS) {
      const [user, oldest] = this.#users.entries().next().value!;
      this.#users.delete(user);
      void oldest.close();
    }
  }

  #closeIdle(idleMs: number): void {
    const before = Date.now() - idleMs;
    for (const [user, upstream] of this.#users)
      if (upstream.usedAt < before) {
        this.#users.delete(user);
        void upstream.close();
      }
  }
}
