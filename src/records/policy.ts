// The shape of a tenant's policy (docs/policy.md): structured rules that allow or deny tools,
// prompts and resources by who asks (user, group, role, scope, client) and where (virtual server).
// Stored in the tenant record. The schema is the record's one description (types, validation, the
// admin API's document); validate-policy.ts adds what it cannot say, policy/rules.ts compiles it.
import { Type, type Static } from "@sinclair/typebox";
import { SLUG } from "./names.js";
import { named } from "./schema-kit.js";

/** The `servers` value that names the tenant's own URL, /mcp/{tenant}. */
export const DEFAULT_SERVER = "@default";

const effect = (description: string) =>
  Type.Union([Type.Literal("allow"), Type.Literal("deny")], { description });
export type Effect = "allow" | "deny";

/** The kinds of entries a rule can name. */
export type EntryKind = "tool" | "prompt" | "resource";

/** A list of values or name patterns (`*` matches any run of characters). */
const patterns = (description: string) =>
  Type.Array(
    Type.String({
      description: "A value; `*` matches any run of characters.",
      minLength: 1,
      maxLength: 1024,
    }),
    { description, maxItems: 1000 },
  );

/** Who a rule is about. Each list is any-of; the lists present must all match (absent: anyone). */
export const PolicySubjects = named(
  "PolicySubjects",
  Type.Object(
    {
      users: Type.Optional(
        patterns(
          "Token subjects (`sub`): a local user's `u_…`, an OIDC user's `oidc_…`, an external server's sub.",
        ),
      ),
      groups: Type.Optional(patterns("Groups.")),
      roles: Type.Optional(patterns("Roles.")),
      scopes: Type.Optional(patterns("OAuth scopes of the request's token.")),
      clients: Type.Optional(patterns("OAuth client ids.")),
    },
    {
      additionalProperties: false,
      description:
        "Who a rule is about: each list is any-of, and every list given must match. Absent: anyone.",
    },
  ),
);
export type PolicySubjects = Static<typeof PolicySubjects>;

export const PolicyRule = named(
  "PolicyRule",
  Type.Object(
    {
      id: Type.Optional(
        Type.String({
          description:
            "A name for the rule, unique in the policy: explain answers and audit entries quote it.",
          pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
          "x-message": "must be 1–64 characters of A–Z a–z 0–9 _ . -, starting with a letter or digit",
        }),
      ),
      description: Type.Optional(Type.String({ description: "What the rule is for.", maxLength: 500 })),
      effect: effect("What the rule decides for what it matches."),
      subjects: Type.Optional(PolicySubjects),
      servers: Type.Optional(
        Type.Array(
          Type.String({
            pattern: `^(?:${DEFAULT_SERVER}|\\*|${SLUG.source.slice(1, -1)})$`,
            description: `A virtual server name (a slug), "${DEFAULT_SERVER}" (the tenant's own URL) or "*".`,
          }),
          {
            maxItems: 1000,
            description: 'Virtual server names; "@default" is the tenant\'s own URL. Absent: every server.',
          },
        ),
      ),
      tools: Type.Optional(patterns("Tool names: as exposed on the server, or the tenant-level name.")),
      prompts: Type.Optional(patterns("Prompt names: as exposed on the server, or the tenant-level name.")),
      resources: Type.Optional(patterns("Resource URIs; a template is matched by its uriTemplate.")),
      when: Type.Optional(
        Type.String({
          description:
            'A CEL condition that must also hold, over `subject` ({user, groups, roles, scopes, client, server}: an absent user or client is "", the tenant\'s own URL "@default") and `entry` ({kind, name}); type-checked to bool when saved, `matches()` refused, an evaluation error counts as false. E.g. `"oncall" in subject.groups && entry.name.endsWith("_read")`.',
          minLength: 1,
          maxLength: 1000,
          "x-message": "must be a CEL expression of 1 to 1000 characters",
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        "One rule. It matches a request when its subjects and servers match, and the entry is named by the list of its kind; a rule naming no tools, prompts or resources covers every entry.",
    },
  ),
);
export type PolicyRule = Static<typeof PolicyRule>;

export const Policy = named(
  "Policy",
  Type.Object(
    {
      default: effect("The effect when no rule matches."),
      rules: Type.Array(PolicyRule, {
        maxItems: 1000,
        description: "In order: the first rule that matches decides.",
      }),
    },
    {
      additionalProperties: false,
      description: "Who may list and use which tools, prompts and resources of the tenant (docs/policy.md).",
    },
  ),
);
export type TenantPolicy = Static<typeof Policy>;

/** What a decision is made about: who asks, and where. */
export interface Subject {
  readonly user?: string | undefined;
  /** The user's username when the token names it: never matched by rules, named in the audit log. */
  readonly username?: string | undefined;
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
