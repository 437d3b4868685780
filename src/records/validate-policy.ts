// Checks a tenant's policy record (docs/policy.md) against its schema (policy.ts), then what a schema
// cannot say: rule ids unique, conditions that compile. Each complaint names the JSON path of the bad
// value (PORTICO_ERR_CONFIG_INVALID), which the admin API turns into a problem+json pointer at the rule.
import { at, bad } from "./fields.js";
import { Policy, type TenantPolicy } from "./policy.js";
import { compileCondition, ConditionError } from "./conditions.js";
import { checkSchema } from "./schema-check.js";

/** Validates a policy record; throws PORTICO_ERR_CONFIG_INVALID naming the JSON path. */
export function validatePolicy(input: unknown, where = "policy"): TenantPolicy {
  checkSchema(Policy, input, where);
  const ids = new Map<string, string>();
  input.rules.forEach((rule, i) => {
    const path = at(at(where, "rules"), i);
    if (rule.id !== undefined) {
      const first = ids.get(rule.id);
      if (first !== undefined) bad(at(path, "id"), `duplicate rule id "${rule.id}" (also ${first})`);
      ids.set(rule.id, path);
    }
    if (rule.when === undefined) return;
    try {
      compileCondition(rule.when);
    } catch (err) {
      if (!(err instanceof ConditionError)) throw err;
      bad(at(path, "when"), err.message);
    }
  });
  return structuredClone(input);
}
