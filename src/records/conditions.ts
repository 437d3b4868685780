// A rule's optional `when` condition (docs/policy.md "Conditions"): a CEL expression over the
// subject and the entry, type-checked to bool when the policy is saved, compiled once per tenant
// record with @marcbachmann/cel-js. `matches()` (a regular expression a tenant admin writes, run on
// the event loop) is refused; an evaluation error counts as false.
import { Environment, type ASTNode } from "@marcbachmann/cel-js";
import { DEFAULT_SERVER, type EntryKind, type Subject } from "./policy.js";

/** Decides whether a rule applies to this subject and entry. */
export type Condition = (subject: Subject, kind: EntryKind, name: string) => boolean;

const ENV = new Environment({ limits: { maxAstNodes: 200, maxDepth: 16, maxListElements: 100 } })
  .registerVariable("subject", {
    schema: {
      user: "string",
      groups: "list<string>",
      roles: "list<string>",
      scopes: "list<string>",
      client: "string",
      server: "string",
    },
  })
  .registerVariable("entry", { schema: { kind: "string", name: "string" } });

/** Why an expression cannot be a condition. */
export class ConditionError extends Error {
  override readonly name = "ConditionError";
}

function callsMatches(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(callsMatches);
  if (typeof node !== "object" || node === null) return false;
  const { op, args } = node as ASTNode;
  if ((op === "call" || op === "rcall") && Array.isArray(args) && args[0] === "matches") return true;
  return callsMatches(args);
}

/** Compiles a condition; throws ConditionError saying what is wrong with it. */
export function compileCondition(expression: string): Condition {
  let parsed: ReturnType<typeof ENV.parse>;
  try {
    parsed = ENV.parse(expression);
  } catch (err) {
    throw new ConditionError(`is not a CEL expression: ${firstLine(err)}`);
  }
  const checked = parsed.check();
  if (!checked.valid) throw new ConditionError(`does not type-check: ${firstLine(checked.error)}`);
  if (checked.type !== "bool") throw new ConditionError(`must be a bool expression, not ${checked.type}`);
  if (callsMatches(parsed.ast))
    throw new ConditionError("must not call matches(): use startsWith, endsWith or contains");
  return (subject, kind, name) => {
    try {
      return parsed({ subject: celSubject(subject), entry: { kind, name } }) === true;
    } catch {
      return false;
    }
  };
}

/** CEL has no undefined: an absent user or client reads as "", the tenant's own URL as "@default". */
function celSubject(subject: Subject) {
  return {
    user: subject.user ?? "",
    groups: subject.groups,
    roles: subject.roles,
    scopes: subject.scopes,
    client: subject.client ?? "",
    server: subject.server ?? DEFAULT_SERVER,
  };
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0]!;
}
