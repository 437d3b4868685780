// The shape of a tenant's policy (docs/policy.md): structured rules that allow or deny tools,
// prompts and resources by who asks (user, group, role, scope, client) and where (virtual server).
// Stored in the tenant record; validate-policy.ts checks it, policy/rules.ts compiles it.

export type Effect = "allow" | "deny";

/** The kinds of entries a rule can name. */
export type EntryKind = "tool" | "prompt" | "resource";

/** Who a rule is about. Each list is any-of; the lists present must all match (absent: anyone). */
export interface PolicySubjects {
  /** Token subjects (`sub`): a local user's `u_…`, an OIDC user's `oidc_…`, an external server's sub. */
  readonly users?: readonly string[];
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  /** OAuth scopes the request's token carries. */
  readonly scopes?: readonly string[];
  /** OAuth client ids. */
  readonly clients?: readonly string[];
}

export interface PolicyRule {
  /** A name for the rule, unique in the policy: explain answers and audit entries quote it. */
  readonly id?: string;
  readonly description?: string;
  readonly effect: Effect;
  readonly subjects?: PolicySubjects;
  /** Virtual server names; `@default` is the tenant's own URL. Absent: every server. */
  readonly servers?: readonly string[];
  /** Name patterns (`*` matches any run of characters). Absent in all three: every entry. */
  readonly tools?: readonly string[];
  readonly prompts?: readonly string[];
  /** URI patterns; a resource template is matched by its uriTemplate string. */
  readonly resources?: readonly string[];
  /** A CEL condition over `subject` and `entry` that must also hold (conditions.ts). */
  readonly when?: string;
}

export interface TenantPolicy {
  /** The effect when no rule matches. */
  readonly default: Effect;
  /** Evaluated in order: the first rule that matches decides. */
  readonly rules: readonly PolicyRule[];
}

/** What a decision is made about: who asks, and where. */
export interface Subject {
  readonly user?: string | undefined;
  readonly groups: readonly string[];
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  readonly client?: string | undefined;
  /** The virtual server of the URL; undefined: the tenant's own URL. */
  readonly server?: string | undefined;
}

/** Which rule decided (its index and id), or none: the default did. */
export interface Decision {
  readonly effect: Effect;
  /** Null: no rule matched, the default decided. */
  readonly rule: number | null;
  readonly ruleId?: string | undefined;
}

/** The `servers` value that names the tenant's own URL, /mcp/{tenant}. */
export const DEFAULT_SERVER = "@default";
