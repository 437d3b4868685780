// A provider as one virtual server shows it (docs/architecture.md §8): only the entries the server
// selects, under their exposed or new names, with its description, title and annotation overrides;
// calls, prompts and completions are routed back to the provider's own names. The server's catalog
// is a Catalog of these, so collisions, `ui://` namespaces and routing work as for the tenant's.
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_SEPARATOR, exposedName } from "../records/tenant.js";
import type { EntryOverride, Selection, ServerProviderSelection } from "../records/server.js";
import type {
  CallContext,
  ClientEra,
  CompletionRef,
  Provider,
  ProviderEntries,
  UpstreamTasks,
} from "./types.js";
import { ForwardingProvider } from "./forwarding.js";
import type { CapabilityProfile } from "../protocol/profile.js";

/** New name → own name, from a kind's overrides. */
function renames(map: Readonly<Record<string, EntryOverride>> | undefined): Map<string, string> {
  const names = new Map<string, string>();
  for (const [original, o] of Object.entries(map ?? {}))
    if (o.name !== undefined) names.set(o.name, original);
  return names;
}

function picks(selection: Selection | undefined, name: string): boolean {
  return selection === undefined || selection === "*" || selection.includes(name);
}

function own(
  map: Readonly<Record<string, EntryOverride>> | undefined,
  key: string,
): EntryOverride | undefined {
  return map !== undefined && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Title and description replaced where the override says so. */
function described<T extends { title?: string; description?: string }>(
  entry: T,
  o: EntryOverride | undefined,
): T {
  if (!o || (o.title === undefined && o.description === undefined)) return entry;
  return {
    ...entry,
    ...(o.title !== undefined && { title: o.title }),
    ...(o.description !== undefined && { description: o.description }),
  };
}

/** Lowercase letters and digits only: "Get weather", "get_weather" and "get-weather" are one. */
const bare = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, "");

/**
 * A renamed entry's title, and a tool's `annotations.title`, when it only spelt out an old name
 * (its own or its exposed one, in any case or separators) follows the new name; clients show the
 * title before the name, so it would keep showing the old one. A title of its own ("Echo a
 * message") is kept, and so is one the override sets.
 */
function retitled<T extends Tool | Prompt>(entry: T, oldNames: readonly string[], name: string): T {
  const old = new Set(oldNames.map(bare));
  const stale = (title: unknown) => typeof title === "string" && old.has(bare(title));
  let out = entry;
  if (stale(out.title)) out = { ...out, title: name };
  const annotations = (out as Tool).annotations;
  if (annotations && stale(annotations.title)) out = { ...out, annotations: { ...annotations, title: name } };
  return out;
}

/** A tool's annotations with the override's members merged over them (null removes one). */
function annotated(tool: Tool, o: EntryOverride | undefined): Tool {
  if (!o?.annotations) return tool;
  const merged: Record<string, unknown> = { ...(tool.annotations ?? {}) };
  for (const [key, value] of Object.entries(o.annotations))
    if (value === null) delete merged[key];
    else merged[key] = value;
  return { ...tool, annotations: merged };
}

/**
 * One provider seen through a server's selection. It owns nothing: starting, closing and health
 * are the provider's, and it lists and routes only what the server chose.
 */
export class ServerProvider extends ForwardingProvider {
  /** New name → the provider's own, for tools and prompts renamed by the server. */
  readonly #toolNames: ReadonlyMap<string, string>;
  readonly #promptNames: ReadonlyMap<string, string>;
  readonly prefix = "";
  readonly prepare?: (profile: CapabilityProfile) => Promise<void>;

  constructor(
    inner: Provider,
    private readonly chosen: ServerProviderSelection,
  ) {
    super(inner);
    if (inner.prepare) this.prepare = (profile) => inner.prepare!(profile);
    this.#toolNames = renames(chosen.overrides?.tools);
    this.#promptNames = renames(chosen.overrides?.prompts);
  }

  /**
   * Entries of this provider left out because another of its entries was renamed to their name
   * (the rename holds the name): what saving a server refuses.
   */
  shadowed(profile?: CapabilityProfile): string[] {
    const all = this.inner.entries(profile);
    const o = this.chosen.overrides;
    return [
      ...this.#shadowedOf("tool", all.tools, this.chosen.tools, this.#toolNames, o?.tools),
      ...this.#shadowedOf("prompt", all.prompts, this.chosen.prompts, this.#promptNames, o?.prompts),
    ];
  }

  #shadowedOf(
    kind: "tool" | "prompt",
    entries: ReadonlyArray<{ name: string }>,
    selection: Selection | undefined,
    names: ReadonlyMap<string, string>,
    overrides: Readonly<Record<string, EntryOverride>> | undefined,
  ): string[] {
    return entries.flatMap((e) => {
      const exposed = exposedName(this.inner, e.name);
      const holder = names.get(exposed);
      if (!picks(selection, e.name) || own(overrides, e.name)?.name !== undefined || holder === undefined)
        return [];
      return [`${kind} '${exposed}' of provider '${this.id}' is also the new name of '${holder}'`];
    });
  }

  entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries {
    const all = this.inner.entries(profile, era);
    const o = this.chosen.overrides;
    const tools = this.#chosenTools(all.tools);
    // Callable, unlisted (a per-user provider's connect tool once connected, a gone account's
    // tools): through the same selection, so a stale list's call reaches them here too.
    const hiddenTools = all.hiddenTools && this.#chosenTools(all.hiddenTools);
    const prompts = all.prompts
      .filter(
        (p) =>
          picks(this.chosen.prompts, p.name) && this.#keeps(this.#promptNames, p, own(o?.prompts, p.name)),
      )
      .map((p) => this.#named(p, own(o?.prompts, p.name)));
    const resources: Resource[] = all.resources
      .filter((r) => picks(this.chosen.resources, r.uri))
      .map((r) => described(r, own(o?.resources, r.uri)));
    const resourceTemplates: ResourceTemplate[] = all.resourceTemplates
      .filter((t) => picks(this.chosen.resources, t.uriTemplate))
      .map((t) => described(t, own(o?.resources, t.uriTemplate)));
    return { tools, prompts, resources, resourceTemplates, ...(hiddenTools?.length && { hiddenTools }) };
  }

  /** The tools the server chose (and a per-user provider's connect tool), as the server shows them. */
  #chosenTools(tools: readonly Tool[]): Tool[] {
    const o = this.chosen.overrides;
    return tools
      .filter(
        (t) =>
          (picks(this.chosen.tools, t.name) || t.name === this.inner.connectTool) &&
          this.#keeps(this.#toolNames, t, own(o?.tools, t.name)),
      )
      .map((t) => this.#named(t, own(o?.tools, t.name), annotated));
  }

  /** False for an entry shown under its exposed name when another entry was renamed to it. */
  #keeps(names: ReadonlyMap<string, string>, entry: { name: string }, o: EntryOverride | undefined): boolean {
    return o?.name !== undefined || !names.has(exposedName(this.inner, entry.name));
  }

  /** The entry under the name the server shows. */
  #named<T extends Tool | Prompt>(
    entry: T,
    o: EntryOverride | undefined,
    more?: (entry: T, o: EntryOverride | undefined) => T,
  ): T {
    const exposed = exposedName(this.inner, entry.name);
    const name = o?.name ?? exposed;
    const renamed =
      o?.name !== undefined && o.title === undefined ? retitled(entry, [entry.name, exposed], name) : entry;
    const shown = described(more ? more(renamed, o) : renamed, o);
    return name === entry.name ? shown : { ...shown, name };
  }

  /** The provider's own name of a tool this server lists as `name` (policy matches by it too). */
  ownToolName(name: string): string {
    return this.#original(this.#toolNames, name);
  }

  /** The admin's task mark of the tool this server lists as `name`: its own name's. */
  override taskMark(name: string) {
    return this.inner.taskMark?.(this.#original(this.#toolNames, name));
  }

  /** The provider's own name of a prompt this server lists as `name`. */
  ownPromptName(name: string): string {
    return this.#original(this.#promptNames, name);
  }

  /**
   * The provider's own name of an entry the server listed (the catalog routes only listed names):
   * a new name's original, else the exposed name without the provider's prefix.
   */
  #original(names: ReadonlyMap<string, string>, name: string): string {
    const renamed = names.get(name);
    if (renamed !== undefined) return renamed;
    const { prefix, separator = DEFAULT_SEPARATOR } = this.inner;
    return prefix ? name.slice(prefix.length + separator.length) : name;
  }

  async start(): Promise<void> {
    // The tenant started the provider; a server only looks through it.
  }
  async close(): Promise<void> {
    // Closed with the tenant's provider.
  }

  override callTool(name: string, args: Record<string, unknown>, ctx: CallContext) {
    return this.inner.callTool(this.#original(this.#toolNames, name), args, ctx);
  }

  /** The inner provider's tasks, its tools under the names this server shows. */
  get tasks(): UpstreamTasks | undefined {
    const inner = this.inner.tasks;
    if (!inner) return undefined;
    return (this.#tasks ??= {
      ...inner,
      support: (name, ctx) => inner.support(this.#original(this.#toolNames, name), ctx),
      start: (name, args, task, ctx) => inner.start(this.#original(this.#toolNames, name), args, task, ctx),
    });
  }
  #tasks: UpstreamTasks | undefined;
  override getPrompt(name: string, args: Record<string, string>, ctx: CallContext) {
    return this.inner.getPrompt(this.#original(this.#promptNames, name), args, ctx);
  }
  override complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    contextArguments: Record<string, string> | undefined,
    ctx: CallContext,
  ) {
    const own: CompletionRef =
      ref.type === "ref/prompt"
        ? { type: "ref/prompt", name: this.#original(this.#promptNames, ref.name) }
        : ref;
    return this.inner.complete(own, argument, contextArguments, ctx);
  }
  watch(uri: string): () => void {
    return this.inner.watch?.(uri) ?? (() => undefined);
  }
}
