// A tenant's policy compiled once per tenant record (docs/policy.md "Semantics"): rules in order,
// the first whose subjects, server and entry patterns all match decides, else the default. Patterns
// are literal except `*`, which matches any run of characters.
import {
  DEFAULT_SERVER,
  type Decision,
  type Effect,
  type EntryKind,
  type PolicyRule,
  type PolicySubjects,
  type Subject,
  type TenantPolicy,
} from "../records/policy.js";
import { compileCondition, type Condition } from "../records/conditions.js";
import { globMatch } from "../records/glob.js";

/** A compiled list of patterns: exact values in a set, wildcard ones matched by globMatch. */
class Patterns {
  readonly #exact = new Set<string>();
  readonly #globs: string[] = [];
  readonly any: boolean;

  constructor(patterns: readonly string[]) {
    for (const p of patterns) {
      if (!p.includes("*")) this.#exact.add(p);
      else this.#globs.push(p);
    }
    this.any = patterns.includes("*");
  }

  matches(value: string): boolean {
    if (this.any || this.#exact.has(value)) return true;
    for (const glob of this.#globs) if (globMatch(glob, value)) return true;
    return false;
  }

  matchesSome(values: readonly string[]): boolean {
    for (const v of values) if (this.matches(v)) return true;
    return false;
  }
}

type SubjectField = keyof PolicySubjects;
const SUBJECT_FIELDS: readonly SubjectField[] = ["users", "groups", "roles", "scopes", "clients"];

interface CompiledRule {
  readonly index: number;
  readonly id: string | undefined;
  readonly effect: Effect;
  readonly subjects: ReadonlyArray<readonly [SubjectField, Patterns]>;
  readonly servers: Patterns | undefined;
  /** Undefined: the rule names no entries, so it covers every entry of every kind. */
  readonly entries: Readonly<Record<EntryKind, Patterns | undefined>> | undefined;
  readonly when: Condition | undefined;
}

function valuesOf(subject: Subject, field: SubjectField): readonly string[] {
  switch (field) {
    case "users":
      return subject.user === undefined ? [] : [subject.user];
    case "clients":
      return subject.client === undefined ? [] : [subject.client];
    default:
      return subject[field];
  }
}

function compileRule(rule: PolicyRule, index: number): CompiledRule {
  const subjects = SUBJECT_FIELDS.flatMap((field) => {
    const list = rule.subjects?.[field];
    return list === undefined ? [] : [[field, new Patterns(list)] as const];
  });
  const named = rule.tools !== undefined || rule.prompts !== undefined || rule.resources !== undefined;
  const patterns = (list: readonly string[] | undefined) =>
    list === undefined ? undefined : new Patterns(list);
  return {
    index,
    id: rule.id,
    effect: rule.effect,
    subjects,
    servers: patterns(rule.servers),
    entries: named
      ? { tool: patterns(rule.tools), prompt: patterns(rule.prompts), resource: patterns(rule.resources) }
      : undefined,
    when: rule.when === undefined ? undefined : compileCondition(rule.when),
  };
}

/** The rules that apply to one subject, in order: what a list view evaluates its entries against. */
export class SubjectRules {
  constructor(
    private readonly rules: readonly CompiledRule[],
    private readonly fallback: Effect,
    private readonly subject: Subject,
  ) {}

  /** The decision for an entry known by any of `names` (its exposed name, and its tenant-level one). */
  decide(kind: EntryKind, names: readonly string[]): Decision {
    for (const rule of this.rules) {
      if (rule.entries !== undefined) {
        const patterns = rule.entries[kind];
        if (patterns === undefined || !patterns.matchesSome(names)) continue;
      }
      if (rule.when !== undefined && !names.some((name) => rule.when!(this.subject, kind, name))) continue;
      return { effect: rule.effect, rule: rule.index, ruleId: rule.id };
    }
    return { effect: this.fallback, rule: null };
  }
}

export class CompiledPolicy {
  readonly #rules: readonly CompiledRule[];
  /** Subject fields some rule names: only these make two callers' views differ. */
  readonly dimensions: ReadonlySet<SubjectField | "server">;

  constructor(readonly source: TenantPolicy) {
    this.#rules = source.rules.map(compileRule);
    const dims = new Set<SubjectField | "server">();
    // A condition may read any attribute: every one of them then keys the views.
    if (this.#rules.some((rule) => rule.when !== undefined))
      [...SUBJECT_FIELDS, "server" as const].forEach((d) => dims.add(d));
    for (const rule of this.#rules) {
      for (const [field] of rule.subjects) dims.add(field);
      if (rule.servers) dims.add("server");
    }
    this.dimensions = dims;
  }

  get defaultEffect(): Effect {
    return this.source.default;
  }

  /** The rules whose subjects and servers match `subject`. */
  forSubject(subject: Subject): SubjectRules {
    const server = subject.server ?? DEFAULT_SERVER;
    const rules = this.#rules.filter(
      (rule) =>
        (rule.servers === undefined || rule.servers.matches(server)) &&
        rule.subjects.every(([field, patterns]) => patterns.matchesSome(valuesOf(subject, field))),
    );
    return new SubjectRules(rules, this.source.default, subject);
  }

  /** One decision, from scratch (explain, dry runs). */
  decide(subject: Subject, kind: EntryKind, names: readonly string[]): Decision {
    return this.forSubject(subject).decide(kind, names);
  }

  /**
   * The key of a subject's view: the attributes some rule looks at, and nothing else, so callers
   * who differ only in what no rule names share one view.
   */
  viewKey(subject: Subject): string {
    const dims = this.dimensions;
    if (dims.size === 0) return "";
    const parts: string[] = [];
    for (const field of SUBJECT_FIELDS)
      parts.push(dims.has(field) ? [...valuesOf(subject, field)].sort().join("\u0001") : "");
    parts.push(dims.has("server") ? (subject.server ?? DEFAULT_SERVER) : "");
    return parts.join("\u0000");
  }
}
