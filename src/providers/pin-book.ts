// One pinned provider's approved tool definitions (docs/security.md "Pinned tool definitions"):
// what the admin approved, by digest of the members a model reads and a call must match, and what
// the upstream serves now that differs. Every replica reads the approved set from the store and
// checks each list the provider serves against it (every capability profile, era and user), so an
// upstream cannot show the approved definition to one client and another to the rest. The
// upstream's instructions are pinned alike, as one more definition under a name no tool has.
import { createHash } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson } from "../protocol/canonical-json.js";
import type { PinningMode } from "../records/tenant.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

export type { PinningMode };

/** The members a pin covers: what the model reads about a tool, and what its calls must match. */
const PINNED = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"] as const;

/** A tool's pinned members, as approved or as served. */
export type Definition = Partial<Pick<Tool, (typeof PINNED)[number]>> & { readonly name: string };

/**
 * The name the upstream's instructions are pinned under, their text as its description: no tool
 * can have it, as a tool name is 1–64 characters of [A-Za-z0-9_.-] (the catalog refuses others).
 */
export const INSTRUCTIONS = "#instructions";

/** The upstream's instructions as a pinned definition. */
export function instructionsDefinition(text: string): Definition {
  return { name: INSTRUCTIONS, description: text };
}

export interface Approved {
  readonly digest: string;
  /** The digest of its schemas and annotations (absent on sets written before it was kept). */
  readonly contract?: string;
  readonly definition: Definition;
  readonly approvedAt: string;
  readonly approvedBy: string;
}

/** A definition the upstream serves that no approval covers. */
export interface Pending {
  readonly name: string;
  readonly digest: string;
  readonly contract: string;
  readonly definition: Definition;
  /** "changed": the name has an approved definition; "new": it has none. */
  readonly change: "changed" | "new";
  /** Member by member, against the name's newest approved definition (none for a new tool). */
  readonly diff: readonly DefinitionChange[];
  readonly seenAt: string;
}

/** One member that differs between two definitions, by JSON Pointer. */
export interface DefinitionChange {
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** A definition noticed for the first time (the provider's hook records and counts it). */
export interface Notice extends Pending {
  readonly provider: string;
  readonly mode: PinningMode;
  readonly before?: Definition;
  /** True when the budget of recorded notices is spent this hour: count it, record nothing. */
  readonly quiet: boolean;
}

/** The approved set as stored: a list (tool names are the upstream's, so never an object's keys). */
export interface ApprovedSet {
  readonly approvedAt: string;
  readonly tools: Approved[];
}

/** Approved definitions kept per tool name (the newest): an upstream serving each to other clients stays served. */
const MAX_APPROVED_PER_TOOL = 4;
/** Definitions written to the pending hash and the audit log per provider and hour, across replicas. */
export const MAX_NOTICES_PER_HOUR = 20;
/** Digests this replica remembers having noticed (beyond: noticed again, within the hourly budget). */
const MAX_NOTICED = 1024;
/** Changes listed in one diff. */
const MAX_DIFF = 50;
/** A definition recorded (pending, approved, audited) larger than this keeps only its wording. */
const MAX_RECORDED_CHARS = 65_536;
/** A value in a diff larger than this is recorded as its size. */
const MAX_DIFF_VALUE_CHARS = 1024;
/** How long a failed read of the approved set waits before it is tried again. */
const RELOAD_RETRY_MS = 5000;

const digests = new WeakMap<Definition, string>();

/** A tool's pinned members (a definition's own, when given one). */
export function definitionOf(tool: Definition): Definition {
  const out: Record<string, unknown> = {};
  for (const key of PINNED) if (tool[key] !== undefined) out[key] = tool[key];
  return out as Definition;
}

function digestOf(value: unknown): string {
  let text: string;
  try {
    text = canonicalJson(value);
  } catch {
    // Nested past the stack (an upstream's hostile schema): a digest no approval can match.
    text = `unreadable:${Math.random()}`;
  }
  return createHash("sha256").update(text).digest("base64url");
}

/**
 * The digest of a tool's pinned members, or a definition's (cached per object: lists are rebuilt,
 * tools mostly kept).
 */
export function toolDigest(tool: Definition): string {
  let digest = digests.get(tool);
  if (digest === undefined) {
    digest = digestOf(definitionOf(tool));
    digests.set(tool, digest);
  }
  return digest;
}

/** What calls depend on and hosts act on: the schemas and the annotations (a read-only hint). */
function contractDigest(definition: Definition): string {
  return digestOf([
    definition.inputSchema ?? null,
    definition.outputSchema ?? null,
    definition.annotations ?? null,
  ]);
}

/** The members block mode may show as approved over the upstream's: what the model reads. */
const WORDING = ["title", "description"] as const;

/** What differs between two definitions, leaf by leaf (JSON Pointers), at most MAX_DIFF changes. */
export function definitionDiff(before: unknown, after: unknown): DefinitionChange[] {
  try {
    return diffOf(before, after);
  } catch {
    return [{ path: "", before: "(too deeply nested to compare)", after: "(too deeply nested to compare)" }];
  }
}

function diffOf(before: unknown, after: unknown): DefinitionChange[] {
  const out: DefinitionChange[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (out.length >= MAX_DIFF) return;
    const objects = isObject(a) && isObject(b) && Array.isArray(a) === Array.isArray(b);
    if (!objects) {
      if (canonicalJson(a) !== canonicalJson(b))
        out.push({
          path: path.slice(0, 1024),
          ...(a !== undefined && { before: small(a) }),
          ...(b !== undefined && { after: small(b) }),
        });
      return;
    }
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys)
      walk(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`,
      );
  };
  walk(before, after, "");
  return out;
}

/**
 * A definition as the store and the audit log keep it: as it is, or — past MAX_RECORDED_CHARS, or
 * nested too deep to write — its name, title and description (an excerpt) with a note. Its
 * digests are taken from the whole definition, so nothing is compared on the excerpt.
 */
export function recordable(definition: Definition): Definition {
  let size: number;
  try {
    size = JSON.stringify(definition).length;
  } catch {
    size = Number.POSITIVE_INFINITY;
  }
  if (size <= MAX_RECORDED_CHARS) return definition;
  return {
    name: definition.name.slice(0, 1024),
    ...(typeof definition.title === "string" && { title: definition.title.slice(0, 1024) }),
    ...(typeof definition.description === "string" && { description: definition.description.slice(0, 4096) }),
    "x-portico-omitted": Number.isFinite(size)
      ? `the definition is ${size} characters of JSON: only its wording is kept`
      : "the definition is nested too deeply to write: only its wording is kept",
  } as Definition;
}

/** A diff value as recorded: itself, or its size when large. */
function small(value: unknown): unknown {
  const text = JSON.stringify(value) ?? "";
  return text.length <= MAX_DIFF_VALUE_CHARS ? value : `(${text.length} characters)`;
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/**
 * The approved set of one provider on this replica, and what it noticed. `notice` sees each
 * definition no approval covers, once per replica (and within the hourly budget, once for all).
 */
export class PinBook {
  /** Approved definitions by tool name; undefined until the set exists (nothing approved yet). */
  #approved: Map<string, Approved[]> | undefined;
  #loaded = false;
  /** The set as last read, to tell whether a read changed it. */
  #raw: string | null = null;
  #closed = false;
  readonly #noticed = new Set<string>();
  /** The instructions last checked, under the set's version: clients ask for them at every connect. */
  #instructions: { text: string; version: number; shown: string | undefined } | undefined;
  /** Bumped whenever the approved set is read again: filtered lists are kept per version. */
  version = 0;

  constructor(
    readonly mode: PinningMode,
    private readonly tenant: string,
    readonly provider: string,
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly notice: (notice: Notice) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Whether an approved set exists (false also while it could not be read). */
  get adopted(): boolean {
    return this.#approved !== undefined;
  }

  /**
   * Reads the approved set; resolves with whether it changed. A store failure keeps what was read
   * before (before any read: block holds every tool back) and tries again.
   */
  async load(): Promise<boolean> {
    try {
      const raw = await this.store.get(this.keys.pins(this.tenant, this.provider));
      if (this.#loaded && raw === this.#raw) return false;
      this.#approved = raw === null ? undefined : approvedMap(JSON.parse(raw) as ApprovedSet);
      this.#raw = raw;
      this.#loaded = true;
      this.#noticed.clear();
      this.version++;
      return true;
    } catch {
      // What was read before still holds; read again soon.
      if (!this.#closed) setTimeout(() => void this.reloaded?.(), RELOAD_RETRY_MS).unref();
      return false;
    }
  }

  /** Set by the provider: reads the set again and tells its catalogs (after a failed load). */
  reloaded?: () => Promise<void>;

  close(): void {
    this.#closed = true;
  }

  /**
   * The tools as clients may see them. Approved definitions pass; others are noticed, and then
   * under "warn" served, under "block" served as approved when one approved definition of the
   * name has the same schemas and annotations (its title and description shown), else held back.
   * `keep` names a tool that is Portico's own (a connect tool): never pinned. A tool under the
   * instructions' name is dropped unseen (no client could call it): it must not pose as them.
   */
  filter(tools: readonly Tool[], keep?: string): readonly Tool[] {
    if (this.mode === "off") return tools;
    let out: Tool[] | undefined;
    tools.forEach((tool, i) => {
      const shown = tool.name === keep ? tool : tool.name === INSTRUCTIONS ? undefined : this.#check(tool);
      if (shown === tool && out === undefined) return;
      out ??= tools.slice(0, i);
      if (shown) out.push(shown);
    });
    return out ?? tools;
  }

  #check(tool: Tool): Tool | undefined {
    if (!this.#loaded) return this.mode === "warn" ? tool : undefined;
    const digest = toolDigest(tool);
    const approved = this.#approved?.get(tool.name);
    if (approved?.some((a) => a.digest === digest)) return tool;
    // Nothing approved yet (the provider was saved a moment ago, or its approval failed): nothing
    // to compare with. Warn serves; block holds back until the set is made (the approve call).
    if (this.#approved === undefined) return this.mode === "warn" ? tool : undefined;
    this.#noticeOnce(tool, digest, approved);
    if (this.mode === "warn") return tool;
    const contract = contractDigest(definitionOf(tool));
    const same = approved?.find((a) => (a.contract ?? contractDigest(a.definition)) === contract);
    if (!same) return undefined;
    const shown: Record<string, unknown> = { ...tool };
    for (const key of WORDING) {
      delete shown[key];
      if (same.definition[key] !== undefined) shown[key] = same.definition[key];
    }
    return shown as Tool;
  }

  /**
   * The upstream's instructions as clients may see them, checked as the definition named
   * INSTRUCTIONS: an approved text passes; another is noticed, and then under "warn" served,
   * under "block" replaced by the newest approved text (none before any is approved). An
   * upstream that gives none gives none.
   */
  instructions(text: string | undefined): string | undefined {
    if (this.mode === "off" || !text?.trim()) return text;
    const kept = this.#instructions;
    if (kept?.text === text && kept.version === this.version) return kept.shown;
    const shown = this.#checkInstructions(text);
    this.#instructions = { text, version: this.version, shown };
    return shown;
  }

  #checkInstructions(text: string): string | undefined {
    const served = this.mode === "warn" ? text : undefined;
    if (!this.#loaded || this.#approved === undefined) return served;
    const definition = instructionsDefinition(text);
    const digest = toolDigest(definition);
    const approved = this.#approved.get(INSTRUCTIONS);
    if (approved?.some((a) => a.digest === digest)) return text;
    this.#noticeOnce(definition, digest, approved);
    const newest = approved?.at(-1)?.definition.description;
    return served ?? newest;
  }

  #noticeOnce(tool: Definition, digest: string, approved: Approved[] | undefined): void {
    if (this.#noticed.has(digest)) return;
    if (this.#noticed.size >= MAX_NOTICED) this.#noticed.clear();
    this.#noticed.add(digest);
    const definition = definitionOf(tool);
    const before = approved?.at(-1)?.definition;
    const pending: Pending = {
      name: tool.name,
      digest,
      contract: contractDigest(definition),
      definition: recordable(definition),
      change: before ? "changed" : "new",
      diff: before ? definitionDiff(before, definition) : [],
      seenAt: this.now().toISOString(),
    };
    void this.#record(pending, before).catch(() => {
      // The store is failing: noticed again once the set is read again.
      this.#noticed.delete(digest);
    });
  }

  /**
   * Records a definition as pending and tells the hook. New names are budgeted (an upstream can
   * invent any number); a changed one of an approved name is always pending (there are as many
   * as approved names), only its audit entry budgeted apart, so junk cannot hide it. A notice past
   * its budget is noticed again on a later list.
   */
  async #record(pending: Pending, before: Definition | undefined): Promise<void> {
    const key = this.keys.pinNotices(this.tenant, this.provider, pending.change);
    const count = await this.store.incr(key, 1, 3600);
    const quiet = count > MAX_NOTICES_PER_HOUR;
    if (quiet) this.#noticed.delete(pending.digest);
    if (!quiet || pending.change === "changed")
      await this.store.hashSet(
        this.keys.pinsPending(this.tenant, this.provider),
        pending.name,
        JSON.stringify(pending),
      );
    this.notice({ ...pending, provider: this.provider, mode: this.mode, ...(before && { before }), quiet });
  }

  /** The definitions awaiting approval (those approved meanwhile left out, and cleared). */
  async pending(): Promise<Pending[]> {
    const key = this.keys.pinsPending(this.tenant, this.provider);
    const all = Object.values(await this.store.hashGetAll(key)).map((raw) => JSON.parse(raw) as Pending);
    const set = await this.#read();
    const covered = (p: Pending) => set?.tools.some((a) => a.digest === p.digest) === true;
    for (const p of all.filter(covered)) await this.store.hashDel(key, p.name);
    return all.filter((p) => !covered(p)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The approved definitions as the store holds them; undefined before any approval. */
  approvedSet(): Promise<ApprovedSet | undefined> {
    return this.#read();
  }

  /**
   * Approves the upstream's definitions when the provider is saved, if nothing was approved yet:
   * `definitions` are the tools it lists now and its instructions (none when it could not be
   * reached: they are then pending). Resolves with whether this call made the set (another
   * replica or an earlier save may have).
   */
  async adopt(definitions: readonly Definition[], actor: string): Promise<boolean> {
    const at = this.now().toISOString();
    let set: ApprovedSet = { approvedAt: at, tools: [] };
    for (const definition of definitions) set = add(set, approval(definition, actor, at));
    return this.store.compareAndSet(this.keys.pins(this.tenant, this.provider), null, JSON.stringify(set));
  }

  /**
   * Approves pending definitions (all, or those of the named tools); resolves with what it
   * approved. Names without a pending definition are refused (`missing`).
   */
  async approve(
    choice: ReadonlyArray<{ readonly name: string; readonly digest?: string }> | undefined,
    actor: string,
  ): Promise<{ approved: Pending[]; missing: string[]; stale: string[] }> {
    const pending = await this.pending();
    const named = (p: Pending) => choice?.find((c) => c.name === p.name);
    const chosen = choice === undefined ? pending : pending.filter((p) => named(p) !== undefined);
    const missing = (choice ?? []).filter((c) => !pending.some((p) => p.name === c.name)).map((c) => c.name);
    // A digest names the definition the admin reviewed: one that changed since is not approved.
    const stale = chosen.filter((p) => named(p)?.digest !== undefined && named(p)!.digest !== p.digest);
    if (missing.length > 0 || stale.length > 0 || chosen.length === 0)
      return { approved: [], missing, stale: stale.map((p) => p.name) };
    const key = this.keys.pins(this.tenant, this.provider);
    const at = this.now().toISOString();
    for (let attempt = 0; ; attempt++) {
      const raw = await this.store.get(key);
      let set: ApprovedSet = raw === null ? { approvedAt: at, tools: [] } : (JSON.parse(raw) as ApprovedSet);
      for (const p of chosen)
        set = add(set, {
          digest: p.digest,
          contract: p.contract,
          definition: p.definition,
          approvedAt: at,
          approvedBy: actor,
        });
      if (await this.store.compareAndSet(key, raw, JSON.stringify(set))) break;
      if (attempt >= 20) throw new Error(`the pins of provider ${this.provider} stayed busy`);
    }
    const pendingKey = this.keys.pinsPending(this.tenant, this.provider);
    for (const p of chosen) await this.store.hashDel(pendingKey, p.name);
    return { approved: chosen, missing: [], stale: [] };
  }

  async #read(): Promise<ApprovedSet | undefined> {
    const raw = await this.store.get(this.keys.pins(this.tenant, this.provider));
    return raw === null ? undefined : (JSON.parse(raw) as ApprovedSet);
  }
}

function approval(tool: Definition, actor: string, at: string): Approved {
  const definition = definitionOf(tool);
  return {
    digest: toolDigest(tool),
    contract: contractDigest(definition),
    definition: recordable(definition),
    approvedAt: at,
    approvedBy: actor,
  };
}

/** A set with one more approval: once per digest, the newest MAX_APPROVED_PER_TOOL of a name kept. */
function add(set: ApprovedSet, approved: Approved): ApprovedSet {
  const name = approved.definition.name;
  const tools = [...set.tools.filter((a) => a.digest !== approved.digest), approved];
  const ofName = tools.filter((a) => a.definition.name === name);
  const dropped = new Set(ofName.slice(0, -MAX_APPROVED_PER_TOOL));
  return { approvedAt: set.approvedAt, tools: tools.filter((a) => !dropped.has(a)) };
}

/** Approved definitions by tool name, oldest first. */
function approvedMap(set: ApprovedSet): Map<string, Approved[]> {
  const map = new Map<string, Approved[]>();
  for (const a of set.tools) map.set(a.definition.name, [...(map.get(a.definition.name) ?? []), a]);
  return map;
}

/** Deletes a provider's pins (the provider was deleted). */
export async function forgetPins(store: Store, keys: Keys, tenant: string, provider: string): Promise<void> {
  await store.del(
    keys.pins(tenant, provider),
    keys.pinsPending(tenant, provider),
    keys.pinNotices(tenant, provider, "new"),
    keys.pinNotices(tenant, provider, "changed"),
  );
}
