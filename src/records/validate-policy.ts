// Checks a tenant's policy record (docs/policy.md): known keys only, effects, patterns, unique rule
// ids. Each complaint names the JSON path of the bad value (PORTICO_ERR_CONFIG_INVALID), which the
// admin API turns into a problem+json pointer at the rule.
import { at, bad, compact, isObject, list, record, str } from "./fields.js";
import type { Effect, PolicyRule, PolicySubjects, TenantPolicy } from "./policy.js";
import { DEFAULT_SERVER } from "./policy.js";
import { compileCondition, ConditionError, MAX_CONDITION_CHARS } from "./conditions.js";

/** At most this many rules per policy, and this many patterns per list. */
export const MAX_RULES = 1000;
export const MAX_PATTERNS = 1000;
const MAX_PATTERN_CHARS = 1024;
const RULE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SERVER = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SUBJECT_KEYS = ["users", "groups", "roles", "scopes", "clients"] as const;

function effect(o: Record<string, unknown>, key: string, where: string): Effect {
  const v = o[key];
  if (v !== "allow" && v !== "deny") bad(at(where, key), 'must be "allow" or "deny"');
  return v;
}

function patterns(o: Record<string, unknown>, key: string, where: string): string[] | undefined {
  if (o[key] === undefined) return undefined;
  const values = list(o, key, where);
  if (values.length > MAX_PATTERNS) bad(at(where, key), `must have at most ${MAX_PATTERNS} entries`);
  return values.map((v, i) => {
    if (typeof v !== "string" || v === "" || v.length > MAX_PATTERN_CHARS)
      bad(at(at(where, key), i), `must be a non-empty string of at most ${MAX_PATTERN_CHARS} characters`);
    return v;
  });
}

function subjects(input: unknown, where: string): PolicySubjects {
  const o = record(input, where, SUBJECT_KEYS);
  return compact(Object.fromEntries(SUBJECT_KEYS.map((k) => [k, patterns(o, k, where)])));
}

function servers(o: Record<string, unknown>, where: string): string[] | undefined {
  const names = patterns(o, "servers", where);
  names?.forEach((name, i) => {
    if (name !== DEFAULT_SERVER && name !== "*" && !SERVER.test(name))
      bad(at(at(where, "servers"), i), `must be a virtual server name (a slug), "${DEFAULT_SERVER}" or "*"`);
  });
  return names;
}

function condition(o: Record<string, unknown>, where: string): string | undefined {
  const when = str(o, "when", where);
  if (when === undefined) return undefined;
  if (when === "" || when.length > MAX_CONDITION_CHARS)
    bad(at(where, "when"), `must be a CEL expression of 1 to ${MAX_CONDITION_CHARS} characters`);
  try {
    compileCondition(when);
  } catch (err) {
    if (!(err instanceof ConditionError)) throw err;
    bad(at(where, "when"), err.message);
  }
  return when;
}

function rule(input: unknown, where: string, ids: Map<string, string>): PolicyRule {
  const o = record(input, where, [
    "id",
    "description",
    "effect",
    "subjects",
    "servers",
    "tools",
    "prompts",
    "resources",
    "when",
  ]);
  const id = str(o, "id", where);
  if (id !== undefined) {
    if (!RULE_ID.test(id))
      bad(at(where, "id"), "must be 1–64 characters of A–Z a–z 0–9 _ . -, starting with a letter or digit");
    const first = ids.get(id);
    if (first !== undefined) bad(at(where, "id"), `duplicate rule id "${id}" (also ${first})`);
    ids.set(id, where);
  }
  const description = str(o, "description", where);
  if (description !== undefined && description.length > 500)
    bad(at(where, "description"), "must be at most 500 characters");
  return compact({
    id,
    description,
    effect: effect(o, "effect", where),
    subjects: o.subjects === undefined ? undefined : subjects(o.subjects, at(where, "subjects")),
    servers: servers(o, where),
    tools: patterns(o, "tools", where),
    prompts: patterns(o, "prompts", where),
    resources: patterns(o, "resources", where),
    when: condition(o, where),
  });
}

/** Validates a policy record; throws PORTICO_ERR_CONFIG_INVALID naming the JSON path. */
export function validatePolicy(input: unknown, where = "policy"): TenantPolicy {
  if (!isObject(input)) bad(where, "must be an object");
  const o = record(input, where, ["default", "rules"]);
  const rules = list(o, "rules", where);
  if (rules.length > MAX_RULES) bad(at(where, "rules"), `must have at most ${MAX_RULES} rules`);
  const ids = new Map<string, string>();
  return {
    default: effect(o, "default", where),
    rules: rules.map((r, i) => rule(r, at(at(where, "rules"), i), ids)),
  };
}
