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
import type { AccountChange, UserTokenSource } from "../accounts/user-tokens.js";
import { fail } from "../errors.js";
import { randomId } from "../secrets.js";
import type { HttpProviderConfig, McpProviderConfig } from "./config.js";
import { connectEntries, textResult, type ConnectPrompt } from "./per-user/connect.js";
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
} from "./types.js";

/** Users whose upstream a provider keeps open on one replica. */
export const MAX_USERS = 200;
/** A user's upstream unused this long is closed (opened again on their next request). */
export const IDLE_MS = 10 * 60_000;
/** Connect links remembered to announce their completion (notifications/elicitation/complete). */
const MAX_ELICITATIONS = 1000;
const ELICITATION_TTL_MS = 15 * 60_000;

export interface PerUserDeps {
  readonly tenantId: string;
  readonly source: UserTokenSource;
  /** Builds a user's upstream: the provider's `mcp` or `http` provider with these credentials. */
  readonly build: (credentials: Authorizer) => Provider;
  readonly outlet: SessionOutlet;
  readonly log: FastifyBaseLogger;
  readonly idleMs?: number;
}

interface Elicitation {
  readonly sessionId: string;
  readonly user: string;
  readonly expiresAt: number;
}

export class PerUserProvider implements Provider {
  readonly kind: ProviderKind;
  readonly id: string;
  readonly prefix: string;
  readonly separator: string | undefined;
  readonly healthy = true;
  readonly #entries: ProviderEntries;
  readonly #users = new Map<string, UserUpstream>();
  readonly #elicitations = new Map<string, Elicitation>();
  #events: ProviderEvents | undefined;
  #unsubscribe: (() => void) | undefined;
  #sweep: NodeJS.Timeout | undefined;

  constructor(
    cfg: McpProviderConfig | HttpProviderConfig,
    private readonly deps: PerUserDeps,
  ) {
    this.kind = cfg.kind;
    this.id = cfg.id;
    this.prefix = cfg.prefix ?? "";
    this.separator = cfg.separator;
    this.#entries = connectEntries(cfg.id, cfg.id);
  }

  /** Users with an upstream open here (tests, metrics). */
  get userCount(): number {
    return this.#users.size;
  }

  entries(): ProviderEntries {
    return this.#entries;
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
    const now = Date.now();
    for (const [id, e] of this.#elicitations) if (e.expiresAt <= now) this.#elicitations.delete(id);
    if (ctx.sessionId !== undefined) {
      this.#elicitations.set(elicitationId, {
        sessionId: ctx.sessionId,
        user,
        expiresAt: now + ELICITATION_TTL_MS,
      });
      while (this.#elicitations.size > MAX_ELICITATIONS)
        this.#elicitations.delete(this.#elicitations.keys().next().value!);
    }
    return { url, message: `Connect your ${this.id} account to use its tools`, elicitationId };
  }

  #changed(change: AccountChange): void {
    if (change.tenant !== this.deps.tenantId || change.provider !== this.id) return;
    const upstream = this.#users.get(change.user);
    void (upstream?.accountChanged() ?? Promise.resolve()).then(() =>
      this.#events?.userChanged?.(change.user),
    );
    for (const id of change.elicitationIds ?? []) {
      const asked = this.#elicitations.get(id);
      if (asked?.user !== change.user) continue;
      this.#elicitations.delete(id);
      this.deps.outlet
        .notify(this.deps.tenantId, asked.sessionId, "notifications/elicitation/complete", {
          elicitationId: id,
        })
        .catch((err: unknown) =>
          this.deps.log.debug({ err, provider: this.id }, "elicitation completion not sent"),
        );
    }
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
