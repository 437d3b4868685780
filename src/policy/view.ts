// What one kind of caller sees of a catalog under a tenant's policy (docs/policy.md): the lists
// with hidden entries left out, and lookups that answer a hidden entry as if it did not exist.
// Built once per (catalog, view key) and shared by every request of that key (enforcer.ts).
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog, ResourceTarget, Target } from "../providers/catalog.js";
import { exposedName } from "../records/tenant.js";
import { ServerProvider } from "../providers/server-view.js";
import type { SubjectRules } from "./rules.js";
import type { EntryKind } from "../records/policy.js";

/** What the method handlers read of a catalog: the catalog itself, or a policy view of it. */
export type CatalogView = Pick<
  Catalog,
  | "tools"
  | "sessionTools"
  | "olderSessionTools"
  | "prompts"
  | "resources"
  | "templates"
  | "tool"
  | "prompt"
  | "resource"
  | "templateTarget"
  | "resourceOwner"
>;

/**
 * The names a rule may match an entry by: the name it is exposed under here and its tenant-level
 * name (`{prefix}{separator}{name}`), which differ when a virtual server renames it.
 */
export function namesOf(kind: EntryKind, exposed: string, target: Target): readonly string[] {
  const tenantName = tenantNameOf(kind, target);
  return tenantName === exposed ? [exposed] : [exposed, tenantName];
}

/** An entry's name at the tenant's own URL; a virtual server's entry by its provider's own name. */
function tenantNameOf(kind: EntryKind, { provider, name }: Target): string {
  if (!(provider instanceof ServerProvider)) return exposedName(provider, name);
  const own = kind === "prompt" ? provider.ownPromptName(name) : provider.ownToolName(name);
  return exposedName(provider.inner, own);
}

export class PolicyView implements CatalogView {
  readonly tools: readonly Tool[];
  readonly sessionTools: readonly Tool[];
  readonly olderSessionTools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplate[];
  /** How many entries of each kind the lists leave out (metrics). */
  readonly hidden: Readonly<Record<"tools" | "prompts" | "resources", number>>;
  readonly #tools: ReadonlySet<string>;
  readonly #prompts: ReadonlySet<string>;
  /** Decisions on URIs not listed (template matches, `ui://` routes), bounded. */
  readonly #uris = new Map<string, boolean>();

  constructor(
    readonly base: Catalog,
    readonly rules: SubjectRules,
    /** The view key it was built for (rules.ts viewKey): its lists' cursors are good for it only. */
    readonly key: string,
  ) {
    const toolOk = (t: Tool) => this.#allowed("tool", t.name, base.tool(t.name));
    const promptOk = (p: Prompt) => this.#allowed("prompt", p.name, base.prompt(p.name));
    this.tools = base.tools.filter(toolOk);
    this.#tools = new Set(this.tools.map((t) => t.name));
    this.sessionTools =
      base.sessionTools === base.tools
        ? this.tools
        : base.sessionTools.filter((t) => this.#tools.has(t.name));
    this.olderSessionTools =
      base.olderSessionTools === base.sessionTools
        ? this.sessionTools
        : base.olderSessionTools.filter((t) => this.#tools.has(t.name));
    this.prompts = base.prompts.filter(promptOk);
    this.#prompts = new Set(this.prompts.map((p) => p.name));
    this.resources = base.resources.filter((r) => this.uriAllowed(r.uri));
    this.templates = base.templates.filter((t) => this.uriAllowed(t.uriTemplate));
    this.hidden = {
      tools: base.tools.length - this.tools.length,
      prompts: base.prompts.length - this.prompts.length,
      resources:
        base.resources.length - this.resources.length + base.templates.length - this.templates.length,
    };
  }

  #allowed(kind: EntryKind, exposed: string, target: Target | undefined): boolean {
    const names = target ? namesOf(kind, exposed, target) : [exposed];
    return this.rules.decide(kind, names).effect === "allow";
  }

  /**
   * Whether a URI (or a template's uriTemplate) may be read, listed or subscribed to. A URI with
   * percent-escapes is decided as sent and as decoded, and allowed only when both are: template
   * matching (and many upstreams) decode it, so `docs://pages/%73ecret` is `docs://pages/secret`.
   */
  uriAllowed(uri: string): boolean {
    let allowed = this.#uris.get(uri);
    if (allowed === undefined) {
      const decoded = uri.includes("%") ? percentDecoded(uri) : uri;
      allowed =
        this.rules.decide("resource", [uri]).effect === "allow" &&
        (decoded === uri || this.rules.decide("resource", [decoded]).effect === "allow");
      if (this.#uris.size >= 1024) this.#uris.clear();
      this.#uris.set(uri, allowed);
    }
    return allowed;
  }

  /** Whether the base catalog has an entry that this view hides (a denial, not an unknown name). */
  hides(kind: EntryKind, name: string): boolean {
    if (kind === "tool") return this.base.tool(name) !== undefined && !this.#tools.has(name);
    if (kind === "prompt") return this.base.prompt(name) !== undefined && !this.#prompts.has(name);
    const known = this.base.resource(name) ?? this.base.templateTarget(name);
    return known !== undefined && !this.uriAllowed(name);
  }

  tool(exposed: string): Target | undefined {
    return this.#tools.has(exposed) ? this.base.tool(exposed) : undefined;
  }

  prompt(exposed: string): Target | undefined {
    return this.#prompts.has(exposed) ? this.base.prompt(exposed) : undefined;
  }

  resource(uri: string): ResourceTarget | undefined {
    return this.uriAllowed(uri) ? this.base.resource(uri) : undefined;
  }

  resourceOwner(uri: string) {
    return this.resource(uri)?.provider;
  }

  templateTarget(uriTemplate: string): ResourceTarget | undefined {
    return this.uriAllowed(uriTemplate) ? this.base.templateTarget(uriTemplate) : undefined;
  }
}

/** A URI with its percent-escapes decoded; as it is when they do not decode (no reader decodes them either). */
function percentDecoded(uri: string): string {
  try {
    return decodeURIComponent(uri);
  } catch {
    return uri;
  }
}
