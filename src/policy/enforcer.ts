// Policy on the MCP path (docs/policy.md, docs/architecture.md §3): each tenant's rules compiled once
// per tenant record, a caller's view of a catalog built once per (catalog, view key) and shared,
// every decision counted, and denials audited at most once per subject, entry and minute.
import type { FastifyBaseLogger } from "fastify";
import type { AuditLog } from "../audit/audit.js";
import type { Authenticated } from "./caller.js";
import type { Catalog } from "../providers/catalog.js";
import type { TenantConfig } from "../records/tenant.js";
import { CompiledPolicy } from "./rules.js";
import type { EntryKind, Subject } from "../records/policy.js";
import { PolicyView } from "./view.js";

/** Views kept per catalog: one per distinct view key in use (the least recently used out). */
const MAX_VIEWS = 256;
/** Denials remembered for de-duplication, and audited per tenant per minute, at most. */
const MAX_REMEMBERED = 10_000;
const MAX_AUDITED_PER_MINUTE = 100;
const MINUTE_MS = 60_000;

export type ListKind = "tools" | "prompts" | "resources";
const KIND_OF: Readonly<Record<ListKind, EntryKind>> = {
  tools: "tool",
  prompts: "prompt",
  resources: "resource",
};

/** A refused use, as the audit log records it (no arguments, no token). */
export interface Denial {
  readonly kind: EntryKind;
  readonly name: string;
  readonly user: string | undefined;
  readonly username?: string;
  readonly client: string | undefined;
  readonly server: string | undefined;
  readonly rule: string | undefined;
}

export interface PolicyHooks {
  /** Counts decisions: `count` entries of `kind` got `effect` on a list or a use. */
  readonly onDecisions?: (
    tenant: string,
    effect: "allow" | "deny",
    kind: EntryKind,
    operation: "list" | "use",
    count: number,
  ) => void;
  /** A denied use worth recording (the first of its subject and entry in a minute on this replica). */
  readonly onDenied?: (tenant: string, denial: Denial) => void;
  /** Clock in epoch milliseconds; tests inject one. */
  readonly now?: () => number;
}

/** The subject of a request: its token's attributes and the virtual server it came to. */
export function subjectOf(caller: Authenticated | undefined, server: string | undefined): Subject {
  return {
    user: caller?.user,
    ...(caller?.username !== undefined && { username: caller.username }),
    groups: caller?.groups ?? [],
    roles: caller?.roles ?? [],
    scopes: caller?.scopes ?? [],
    client: caller?.clientId,
    server,
  };
}

/** Where a replica's policies report: decisions to the metrics, denials to the audit log. */
export function reportingPolicies(
  onDecisions: NonNullable<PolicyHooks["onDecisions"]>,
  audit: Pick<AuditLog, "record">,
  log: Pick<FastifyBaseLogger, "warn">,
): Policies {
  return new Policies({
    onDecisions,
    onDenied: (tenant, denial) =>
      void audit
        .record({
          actor: "portico",
          action: "policy.deny",
          tenant,
          target: `${denial.kind}:${denial.name}`,
          ...(denial.user !== undefined && {
            user: { sub: denial.user, ...(denial.username !== undefined && { username: denial.username }) },
          }),
          ...(denial.client !== undefined && { client: denial.client }),
          ...(denial.server !== undefined && { server: denial.server }),
          after: denial,
        })
        .catch((err: unknown) => log.warn({ err, tenant }, "policy denial not audited")),
  });
}

/** Every tenant's compiled policy on this replica. */
export class Policies {
  readonly #compiled = new WeakMap<TenantConfig, PolicyRuntime>();
  /** Kept across reloads: a tenant record saved again does not audit the same denial again. */
  readonly #denials: DenialLog;

  constructor(private readonly hooks: PolicyHooks = {}) {
    this.#denials = new DenialLog(hooks);
  }

  /** The policy of a tenant record; undefined (at the cost of one property read) when it has none. */
  for(config: TenantConfig): PolicyRuntime | undefined {
    if (config.policy === undefined) return undefined;
    let runtime = this.#compiled.get(config);
    if (runtime === undefined) {
      runtime = new PolicyRuntime(config.id, new CompiledPolicy(config.policy), this.hooks, this.#denials);
      this.#compiled.set(config, runtime);
    }
    return runtime;
  }
}

/** One tenant's policy at run time. */
export class PolicyRuntime {
  readonly #views = new WeakMap<Catalog, Map<string, PolicyView>>();

  constructor(
    readonly tenant: string,
    readonly compiled: CompiledPolicy,
    private readonly hooks: PolicyHooks,
    private readonly denials: DenialLog,
  ) {}

  /** What a caller sees of `catalog`: built on first use of its view key, then shared. */
  view(catalog: Catalog, caller: Authenticated | undefined, server: string | undefined): PolicyView {
    const subject = subjectOf(caller, server);
    const key = this.compiled.viewKey(subject);
    let views = this.#views.get(catalog);
    if (views === undefined) this.#views.set(catalog, (views = new Map()));
    let view = views.get(key);
    if (view !== undefined) {
      // Most recently used last: the view unused longest goes first.
      if (views.size > 1) {
        views.delete(key);
        views.set(key, view);
      }
      return view;
    }
    if (views.size >= MAX_VIEWS) views.delete(views.keys().next().value!);
    view = new PolicyView(catalog, this.compiled.forSubject(subject), key);
    views.set(key, view);
    return view;
  }

  /** Counts a list answered from `view`: its entries allowed, those left out denied. */
  listed(view: PolicyView, list: ListKind, shown: number): void {
    const count = this.hooks.onDecisions;
    if (!count) return;
    count(this.tenant, "allow", KIND_OF[list], "list", shown);
    const hidden = view.hidden[list];
    if (hidden > 0) count(this.tenant, "deny", KIND_OF[list], "list", hidden);
  }

  /**
   * Counts a use (call, get, read, subscribe, completion) of an entry the view found (allowed) or
   * hid; a name the catalog does not have at all is no decision.
   */
  used(view: PolicyView, kind: EntryKind, name: string, found: boolean, subject: () => Subject): void {
    if (found) {
      this.hooks.onDecisions?.(this.tenant, "allow", kind, "use", 1);
      return;
    }
    if (!view.hides(kind, name)) return;
    this.hooks.onDecisions?.(this.tenant, "deny", kind, "use", 1);
    this.denials.note(this.tenant, view, kind, name, subject());
  }
}

/**
 * Denials worth auditing on this replica: the first of each subject and entry in a minute, and at
 * most MAX_AUDITED_PER_MINUTE a minute per tenant, so a client looping on a hidden tool floods nothing.
 */
class DenialLog {
  readonly #denied = new Map<string, number>();
  #auditedMinute = 0;
  /** Denials audited this minute, by tenant. */
  readonly #audited = new Map<string, number>();
  readonly #now: () => number;

  constructor(private readonly hooks: PolicyHooks) {
    this.#now = hooks.now ?? Date.now;
  }

  note(tenant: string, view: PolicyView, kind: EntryKind, name: string, subject: Subject): void {
    const onDenied = this.hooks.onDenied;
    if (!onDenied) return;
    const now = this.#now();
    const key = [tenant, subject.user, subject.client, subject.server, kind, name].join("\u0000");
    const last = this.#denied.get(key);
    if (last !== undefined && now - last < MINUTE_MS) return;
    const minute = Math.floor(now / MINUTE_MS);
    if (minute !== this.#auditedMinute) {
      this.#auditedMinute = minute;
      this.#audited.clear();
    }
    const audited = this.#audited.get(tenant) ?? 0;
    if (audited >= MAX_AUDITED_PER_MINUTE) return;
    this.#audited.set(tenant, audited + 1);
    if (this.#denied.size >= MAX_REMEMBERED) this.#denied.clear();
    this.#denied.set(key, now);
    const decision = view.rules.decide(kind, [name]);
    onDenied(tenant, {
      kind,
      name,
      user: subject.user,
      ...(subject.username !== undefined && { username: subject.username }),
      client: subject.client,
      server: subject.server,
      rule: decision.rule === null ? undefined : (decision.ruleId ?? `#${decision.rule}`),
    });
  }
}
