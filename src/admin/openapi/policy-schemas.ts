// JSON Schemas of a tenant's policy (docs/policy.md; the record's own are in records/policy.ts) and
// of its explain, view and dry-run answers. Rules a schema cannot say (unique rule ids, conditions
// that compile) are checked after: records/validate-policy.ts.
import { Policy, PolicyRule, PolicySubjects } from "../../records/policy.js";
import { components, list, obj, ref, str } from "./schema-kit.js";

type Schema = Record<string, unknown>;

const effect = (description: string): Schema => ({ enum: ["allow", "deny"], description });
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
  ...components(PolicySubjects, PolicyRule, Policy),
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
