// JSON Schemas of a tenant's policy (docs/policy.md) and of its explain, view and dry-run answers.
// Rules a schema cannot say (unique rule ids, server names) are checked after: records/validate-policy.ts.
import { list, obj, ref, str } from "./schema-kit.js";

type Schema = Record<string, unknown>;

const effect = (description: string): Schema => ({ enum: ["allow", "deny"], description });
const patterns = (description: string): Schema => ({
  ...list(str("A value; `*` matches any run of characters.", { minLength: 1, maxLength: 1024 }), description),
  maxItems: 1000,
});
const names = (what: string): Schema => ({
  ...list(str(`A ${what}.`, { minLength: 1, maxLength: 256 }), `The subject's ${what}s.`),
  maxItems: 100,
});

const SUBJECT_INPUT: Record<string, Schema> = {
  username: str(
    "A local user of the tenant: their `sub`, groups and roles are taken from their record (given groups or roles replace theirs).",
    { maxLength: 64 },
  ),
  user: str("A token subject (`sub`), when not a local user's.", { maxLength: 256 }),
  groups: names("group"),
  roles: names("role"),
  scopes: names("scope"),
  client: str("An OAuth client id.", { maxLength: 512 }),
  server: str("A virtual server name; absent: the tenant's own URL.", { maxLength: 63 }),
};

const DECISION: Record<string, Schema> = {
  effect: effect("What the policy decides."),
  rule: {
    type: ["integer", "null"],
    minimum: 0,
    description: "The index of the rule that decides; null when none matches and the default does.",
  },
  ruleId: str("That rule's id, when it has one."),
};

/** Component schemas of policies, by name. */
export const POLICY_SCHEMAS: Record<string, Schema> = {
  PolicySubjects: obj(
    {
      users: patterns("Token subjects (`sub`)."),
      groups: patterns("Groups."),
      roles: patterns("Roles."),
      scopes: patterns("OAuth scopes of the request's token."),
      clients: patterns("OAuth client ids."),
    },
    [],
    {
      description:
        "Who a rule is about: each list is any-of, and every list given must match. Absent: anyone.",
    },
  ),
  PolicyRule: obj(
    {
      id: str("A name for the rule, unique in the policy.", { pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" }),
      description: str("What the rule is for.", { maxLength: 500 }),
      effect: effect("What the rule decides for what it matches."),
      subjects: ref("PolicySubjects"),
      servers: patterns('Virtual server names; "@default" is the tenant\'s own URL. Absent: every server.'),
      tools: patterns("Tool names: as exposed on the server, or the tenant-level name."),
      prompts: patterns("Prompt names: as exposed on the server, or the tenant-level name."),
      resources: patterns("Resource URIs; a template is matched by its uriTemplate."),
      when: str(
        'A CEL condition that must also hold, over `subject` ({user, groups, roles, scopes, client, server}: an absent user or client is "", the tenant\'s own URL "@default") and `entry` ({kind, name}); type-checked to bool when saved, `matches()` refused, an evaluation error counts as false. E.g. `"oncall" in subject.groups && entry.name.endsWith("_read")`.',
        { minLength: 1, maxLength: 1000 },
      ),
    },
    ["effect"],
    {
      description:
        "One rule. It matches a request when its subjects and servers match, and the entry is named by the list of its kind; a rule naming no tools, prompts or resources covers every entry.",
    },
  ),
  Policy: obj(
    {
      default: effect("The effect when no rule matches."),
      rules: { ...list(ref("PolicyRule"), "In order: the first rule that matches decides."), maxItems: 1000 },
    },
    ["default", "rules"],
    {
      description: "Who may list and use which tools, prompts and resources of the tenant (docs/policy.md).",
    },
  ),
  PolicySubjectInput: obj(SUBJECT_INPUT, [], { description: "Who asks: a local user, or attributes given." }),
  PolicyEntry: obj(
    {
      kind: { enum: ["tool", "prompt", "resource"], description: "The entry's kind." },
      name: str("A tool or prompt name as exposed, or a resource URI.", { minLength: 1, maxLength: 2048 }),
    },
    ["kind", "name"],
  ),
  PolicyExplainInput: obj({ subject: ref("PolicySubjectInput"), entry: ref("PolicyEntry") }, [
    "subject",
    "entry",
  ]),
  PolicyExplanation: obj(
    {
      ...DECISION,
      names: list(str("A name."), "The names the rules were matched against (exposed, then tenant-level)."),
      known: { type: "boolean", description: "Whether the tenant's catalog has the entry now." },
      subject: { type: "object", description: "The subject the decision is for, as resolved." },
    },
    ["effect", "rule", "names", "known", "subject"],
  ),
  PolicyViewInput: obj({ subject: ref("PolicySubjectInput") }, ["subject"]),
  PolicyDecisionEntry: obj({ name: str("Name or URI."), ...DECISION }, ["name", "effect", "rule"]),
  PolicySubjectView: obj(
    {
      subject: { type: "object", description: "The subject, as resolved." },
      tools: list(ref("PolicyDecisionEntry"), "Every tool of the catalog with its decision."),
      prompts: list(ref("PolicyDecisionEntry"), "Every prompt with its decision."),
      resources: list(ref("PolicyDecisionEntry"), "Every resource with its decision."),
      resourceTemplates: list(ref("PolicyDecisionEntry"), "Every resource template with its decision."),
    },
    ["subject", "tools", "prompts", "resources", "resourceTemplates"],
  ),
  PolicyDryRunInput: obj(
    {
      policy: ref("Policy"),
      subjects: { ...list(ref("PolicySubjectInput"), "Whose view to compare."), minItems: 1, maxItems: 50 },
    },
    ["policy", "subjects"],
  ),
  PolicyDryRun: obj(
    {
      subjects: list(
        obj(
          {
            subject: { type: "object" },
            changes: list(
              obj(
                {
                  kind: { enum: ["tool", "prompt", "resource"] },
                  name: str("Name or URI."),
                  before: effect("Under the current policy (allow when there is none)."),
                  after: effect("Under the proposed policy."),
                },
                ["kind", "name", "before", "after"],
              ),
              "The entries whose effect would change.",
            ),
          },
          ["subject", "changes"],
        ),
        "One per subject, in the order given.",
      ),
    },
    ["subjects"],
    { description: "What the proposed policy would change; nothing is saved." },
  ),
};
