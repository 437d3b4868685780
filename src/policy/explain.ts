// Decisions spelled out for admins (docs/policy.md "Explain"): the decision for one entry, every
// entry of a catalog with its decision, and what a proposed policy changes. The same matching the
// MCP endpoint does (rules.ts), without its caches.
import type { Catalog } from "../providers/catalog.js";
import { CompiledPolicy } from "./rules.js";
import { namesOf } from "./view.js";
import type { Decision, EntryKind, Subject, TenantPolicy } from "../records/policy.js";

export interface Explained extends Decision {
  /** The names the rules were matched against: as exposed, then the tenant-level name. */
  readonly names: readonly string[];
  /** Whether the catalog has the entry now. */
  readonly known: boolean;
}

const ALLOW: Decision = { effect: "allow", rule: null };

/** The names of an entry of `catalog` that rules match (view.ts namesOf), and whether it is there. */
function namesIn(catalog: Catalog | undefined, kind: EntryKind, name: string) {
  const target =
    kind === "tool" ? catalog?.tool(name) : kind === "prompt" ? catalog?.prompt(name) : undefined;
  if (target) return { names: namesOf(kind, name, target), known: true };
  const known =
    kind === "resource" && (catalog?.resource(name) ?? catalog?.templateTarget(name)) !== undefined;
  return { names: [name], known };
}

/** The decision for one entry; no policy allows everything. */
export function explain(
  policy: TenantPolicy | undefined,
  catalog: Catalog | undefined,
  subject: Subject,
  kind: EntryKind,
  name: string,
): Explained {
  const { names, known } = namesIn(catalog, kind, name);
  const decision = policy ? new CompiledPolicy(policy).decide(subject, kind, names) : ALLOW;
  return { ...decision, names, known };
}

export interface EntryDecision extends Decision {
  readonly name: string;
}

export interface SubjectView {
  readonly tools: EntryDecision[];
  readonly prompts: EntryDecision[];
  readonly resources: EntryDecision[];
  readonly resourceTemplates: EntryDecision[];
}

/** Every entry of `catalog` with the decision for `subject`. */
export function subjectView(
  policy: TenantPolicy | undefined,
  catalog: Catalog | undefined,
  subject: Subject,
): SubjectView {
  const rules = policy ? new CompiledPolicy(policy).forSubject(subject) : undefined;
  const decide = (kind: EntryKind, name: string): EntryDecision => {
    const { names } = namesIn(catalog, kind, name);
    return { name, ...(rules ? rules.decide(kind, names) : ALLOW) };
  };
  return {
    tools: (catalog?.tools ?? []).map((t) => decide("tool", t.name)),
    prompts: (catalog?.prompts ?? []).map((p) => decide("prompt", p.name)),
    resources: (catalog?.resources ?? []).map((r) => decide("resource", r.uri)),
    resourceTemplates: (catalog?.templates ?? []).map((t) => decide("resource", t.uriTemplate)),
  };
}

export interface Change {
  readonly kind: EntryKind;
  readonly name: string;
  readonly before: Decision["effect"];
  readonly after: Decision["effect"];
}

/** The entries whose effect for `subject` differs between two policies. */
export function changes(
  before: TenantPolicy | undefined,
  after: TenantPolicy,
  catalog: Catalog | undefined,
  subject: Subject,
): Change[] {
  const was = subjectView(before, catalog, subject);
  const will = subjectView(after, catalog, subject);
  const out: Change[] = [];
  const kinds = [
    ["tools", "tool"],
    ["prompts", "prompt"],
    ["resources", "resource"],
    ["resourceTemplates", "resource"],
  ] as const;
  for (const [list, kind] of kinds)
    was[list].forEach((entry, i) => {
      const next = will[list][i]!;
      if (entry.effect !== next.effect)
        out.push({ kind, name: entry.name, before: entry.effect, after: next.effect });
    });
  return out;
}
