// A tenant's catalog under one capability profile: the union of its providers' entries as a client
// of that profile sees them, under exposed names (docs/architecture.md §3), rebuilt whenever a
// provider's entries change, and the index from exposed name or URI to provider. Two providers'
// `ui://` resources (MCP Apps) are kept apart by namespacing the later one's (ui-resources.ts). An
// admin's task marks are set on the tools once here, each list as its clients take it.
import type {
  Prompt,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { NO_PROFILE, UI_EXTENSION, type CapabilityProfile } from "../protocol/profile.js";
import { EXPOSED_NAME } from "../records/names.js";
import { exposedName } from "../records/tenant.js";
import type { TaskSupportMark } from "../records/task-marks.js";
import type { Provider, ProviderEntries } from "./types.js";
import { hasLooseOutputSchema } from "./list-entries.js";
import { isUiUri, toolUiUris, UiNamespace, uiUrisOf } from "./ui-resources.js";
import { matchTemplate } from "../protocol/uri-template.js";

const NONE: readonly Tool[] = [];

function withoutOutputSchema(tool: Tool): Tool {
  const { outputSchema: _dropped, ...rest } = tool;
  return rest;
}

/** The tools as session-era clients take them (see Catalog.sessionTools). */
function forSessions(tools: Tool[]): readonly Tool[] {
  return tools.some(hasLooseOutputSchema)
    ? tools.map((t) => (hasLooseOutputSchema(t) ? withoutOutputSchema(t) : t))
    : tools;
}

/**
 * The tool with the admin's task mark as its `execution.taskSupport` (docs/upstream-mcp.md "Task
 * marks"): the mark wins over what the upstream says; without one the tool is as listed.
 */
function marked(tool: Tool, mark: TaskSupportMark | undefined): Tool {
  if (mark === undefined || tool.execution?.taskSupport === mark) return tool;
  return { ...tool, execution: { ...tool.execution, taskSupport: mark } };
}

export interface Target {
  readonly provider: Provider;
  /** The name the provider knows the entry by. */
  readonly name: string;
  /** A tool's definition as clients see it (its x-mcp-header annotations say which headers to expect). */
  readonly tool?: Tool;
}

/** Where a URI a client names is served: the provider, and the URI the provider knows it by. */
export interface ResourceTarget {
  readonly provider: Provider;
  readonly uri: string;
  /** Set when the provider's `ui://` URIs are namespaced: maps its answers back. */
  readonly namespace?: UiNamespace;
}

/** An entry left out because another provider serves its exposed name or URI first. */
export interface Collision {
  readonly kind: "tool" | "prompt" | "resource";
  /** The exposed name or URI. */
  readonly name: string;
  /** The provider that serves it. */
  readonly heldBy: string;
}

/** A run-time conflict: an entry of a provider hidden under one profile by another provider's. */
export interface ProviderConflict extends Collision {
  /** The profile it appears under, as words (protocol/profile-names.ts). */
  readonly profile: string;
  /** The virtual server whose lists it appears in (§8); absent for the tenant's own URL. */
  readonly server?: string;
}

export interface CatalogWarning {
  readonly provider: string;
  readonly message: string;
  /** Present when the entry was hidden by another provider's (a run-time conflict). */
  readonly collision?: Collision;
}

interface TemplateRoute {
  readonly template: string;
  readonly provider: Provider;
  readonly namespace: UiNamespace | undefined;
}

export class Catalog {
  readonly tools: readonly Tool[];
  /**
   * The tools as session-era clients take them: a 2026-07-28 upstream's tool whose outputSchema
   * is not `type: "object"` at its root is listed without it (a 2025 client refuses the whole list
   * otherwise; the tool's structured results are then not checked). Usually the same array.
   */
  readonly sessionTools: readonly Tool[];
  /**
   * The session tools as clients of revisions before 2025-11-25 take them: without the
   * `execution` Portico's task marks set (they know no tasks); an upstream's own is kept, as any
   * field a later revision added. Usually the same array.
   */
  readonly olderSessionTools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplate[];
  /**
   * Whether these lists may differ from another profile's: some provider lists per profile
   * (implements prepare). Such lists are never `cacheScope: "public"` (docs/protocol-eras.md).
   */
  get varies(): boolean {
    return this.providers.some((p) => p.variesByProfile ?? typeof p.prepare === "function");
  }

  /**
   * Whether these lists change with the user's accounts: a per-user provider is among them (it
   * shows its connect tool until the user connects). Such lists are never cached (docs/upstream-auth.md).
   */
  get perUser(): boolean {
    return this.providers.some((p) => p.connectTool !== undefined);
  }

  /** Entries left out (name collisions, invalid names) and URIs namespaced, for the log. */
  readonly warnings: readonly CatalogWarning[];
  readonly #tools = new Map<string, Target>();
  readonly #prompts = new Map<string, Target>();
  readonly #resources = new Map<string, ResourceTarget>();
  /** `ui://` URIs tools point at that no provider lists (SEP-1865 lets servers leave them out). */
  readonly #uiRoutes = new Map<string, ResourceTarget>();
  readonly #templates: TemplateRoute[] = [];
  readonly #namespaces = new Map<Provider, UiNamespace>();

  constructor(
    readonly providers: readonly Provider[],
    readonly profile: CapabilityProfile = NO_PROFILE,
  ) {
    const tools: Tool[] = [];
    const prompts: Prompt[] = [];
    const resources: Resource[] = [];
    const templates: ResourceTemplate[] = [];
    const warnings: CatalogWarning[] = [];
    const hidden: Array<{ provider: Provider; tool: Tool }> = [];
    /** The tools without Portico's task marks, once a mark changed one (else the same list). */
    let olderTools: Tool[] | undefined;
    const era = profile.era ?? "session";
    const all = providers.map((p) => ({ provider: p, entries: p.entries(profile.base, era) }));
    this.#namespace(all, warnings);
    for (const { provider, entries } of all) {
      const ns = this.#namespaces.get(provider);
      for (const original of entries.tools) {
        const unmarked = ns ? ns.tool(original) : original;
        const tool = marked(unmarked, provider.taskMark?.(original.name));
        const name = this.#claim(this.#tools, provider, tool.name, "tool", warnings);
        if (name) {
          const exposed = name === tool.name ? tool : { ...tool, name };
          this.#tools.set(name, { provider, name: tool.name, tool: exposed });
          tools.push(exposed);
          if (tool !== unmarked) olderTools ??= tools.slice(0, -1);
          olderTools?.push(tool === unmarked ? exposed : { ...unmarked, name });
        }
        for (const uri of toolUiUris(original)) this.#uiRoute(provider, uri, ns);
      }
      for (const tool of entries.hiddenTools ?? NONE)
        hidden.push({ provider, tool: marked(tool, provider.taskMark?.(tool.name)) });
      for (const prompt of entries.prompts) {
        const name = this.#claim(this.#prompts, provider, prompt.name, "prompt", warnings);
        if (name) prompts.push(name === prompt.name ? prompt : { ...prompt, name });
      }
      for (const original of entries.resources) {
        const resource = ns ? ns.resource(original) : original;
        const owner = this.#resources.get(resource.uri);
        if (owner) {
          const collision = { kind: "resource", name: resource.uri, heldBy: owner.provider.id } as const;
          warnings.push({
            provider: provider.id,
            message: `resource ${resource.uri} is already served by provider '${owner.provider.id}'`,
            collision,
          });
        } else {
          this.#resources.set(resource.uri, { provider, uri: original.uri, ...(ns && { namespace: ns }) });
          resources.push(resource);
        }
      }
      for (const original of entries.resourceTemplates) {
        const template = ns ? ns.template(original) : original;
        this.#templates.push({ template: template.uriTemplate, provider, namespace: ns });
        templates.push(template);
      }
    }
    // After every listed tool: a hidden tool never takes a name another provider lists.
    for (const { provider, tool } of hidden) {
      const name = exposedName(provider, tool.name);
      if (!this.#tools.has(name))
        this.#tools.set(name, { provider, name: tool.name, tool: { ...tool, name } });
    }
    this.tools = tools;
    this.sessionTools = forSessions(tools);
    this.olderSessionTools = olderTools ? forSessions(olderTools) : this.sessionTools;
    this.prompts = prompts;
    this.resources = resources;
    this.templates = templates;
    this.warnings = warnings;
  }

  tool(exposed: string): Target | undefined {
    return this.#tools.get(exposed);
  }

  prompt(exposed: string): Target | undefined {
    return this.#prompts.get(exposed);
  }

  /**
   * Where a URI is served: a listed resource first, then a `ui://` URI a tool points at, then
   * the first matching template.
   */
  resource(uri: string): ResourceTarget | undefined {
    const listed = this.#resources.get(uri) ?? this.#uiRoutes.get(uri);
    if (listed) return listed;
    for (const { template, provider, namespace } of this.#templates)
      if (matchTemplate(template, uri)) return routeOf(provider, uri, namespace);
    return undefined;
  }

  /** The provider serving a URI (resource()'s provider). */
  resourceOwner(uri: string): Provider | undefined {
    return this.resource(uri)?.provider;
  }

  /** Where to ask for updates of a URI (Provider.watch): its owner, when it can watch. */
  watcher(uri: string): ResourceTarget | undefined {
    const target = this.resource(uri);
    return target?.provider.watch ? target : undefined;
  }

  /** The URI clients know a provider's own URI by (its `ui://` namespace applied, if any). */
  exposedUri(provider: Provider, uri: string): string {
    return this.#namespaces.get(provider)?.exposed(uri) ?? uri;
  }

  /** The provider of a resource template, by its exact uriTemplate, and the template it knows. */
  templateTarget(uriTemplate: string): ResourceTarget | undefined {
    const route = this.#templates.find((t) => t.template === uriTemplate);
    return route && routeOf(route.provider, uriTemplate, route.namespace);
  }

  /** The provider of a resource template, by its exact uriTemplate. */
  templateOwner(uriTemplate: string): Provider | undefined {
    return this.templateTarget(uriTemplate)?.provider;
  }

  /**
   * The server capabilities: every list with listChanged, since admins add and remove providers
   * while sessions live (a session's capabilities are fixed at initialize); subscribe only when an
   * upstream serves it; the MCP Apps extension when an upstream may offer apps (an `mcp`
   * provider) or a `ui://` entry is served (extensions/overview "Server Capabilities").
   */
  capabilities(): ServerCapabilities {
    const apps =
      this.providers.some((p) => p.kind === "mcp") ||
      this.resources.some((r) => isUiUri(r.uri)) ||
      this.#uiRoutes.size > 0;
    return {
      logging: {},
      completions: {},
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: this.providers.some((p) => p.subscribable === true) },
      ...(apps && { extensions: { [UI_EXTENSION]: {} } }),
    };
  }

  /**
   * Decides which providers' `ui://` URIs are namespaced: a provider naming a `ui://` URI (or
   * template) that an earlier provider already names gets all of its own under its prefix (its
   * id without one), so its tools and their views stay together.
   */
  #namespace(
    all: ReadonlyArray<{ provider: Provider; entries: ProviderEntries }>,
    warnings: CatalogWarning[],
  ) {
    const claimed = new Map<string, string>();
    for (const { provider, entries } of all) {
      const uris = uiUrisOf(entries);
      const clash = [...uris].find((uri) => claimed.has(uri));
      const ns =
        clash === undefined ? undefined : freeNamespace(provider.prefix || provider.id, uris, claimed);
      if (ns) {
        this.#namespaces.set(provider, ns);
        warnings.push({
          provider: provider.id,
          message: `${clash} is also served by provider '${claimed.get(clash!)}': this provider's ui:// URIs are shown under ${ns.exposed("ui://")}`,
        });
      }
      for (const uri of uris) {
        const key = ns ? ns.exposed(uri) : uri;
        if (!claimed.has(key)) claimed.set(key, provider.id);
      }
    }
  }

  /** Routes a `ui://` URI a tool points at, for when no provider lists it. */
  #uiRoute(provider: Provider, uri: string, ns: UiNamespace | undefined) {
    const exposed = ns ? ns.exposed(uri) : uri;
    if (!this.#uiRoutes.has(exposed)) this.#uiRoutes.set(exposed, routeOf(provider, exposed, ns));
  }

  #claim(
    index: Map<string, Target>,
    provider: Provider,
    name: string,
    what: "tool" | "prompt",
    warnings: CatalogWarning[],
  ) {
    const exposed = exposedName(provider, name);
    const holder = index.get(exposed);
    if (holder) {
      warnings.push({
        provider: provider.id,
        message: `${what} '${exposed}' is already served by provider '${holder.provider.id}'`,
        collision: { kind: what, name: exposed, heldBy: holder.provider.id },
      });
      return undefined;
    }
    if (what === "tool" && !EXPOSED_NAME.test(exposed)) {
      warnings.push({
        provider: provider.id,
        message: `${what} name '${exposed}' is not 1–64 characters of [A-Za-z0-9_.-]`,
      });
      return undefined;
    }
    index.set(exposed, { provider, name });
    return exposed;
  }
}

/**
 * `ui://<name>/…`, or `ui://<name>-2/…` and so on when an earlier provider already names one of the
 * namespaced URIs (its own `ui://<name>/view`): a tool must never point at another provider's view.
 */
function freeNamespace(name: string, uris: ReadonlySet<string>, claimed: ReadonlyMap<string, string>) {
  for (let n = 1; ; n++) {
    const ns = new UiNamespace(n === 1 ? name : `${name}-${n}`);
    if (![...uris].some((uri) => claimed.has(ns.exposed(uri)))) return ns;
  }
}

function routeOf(provider: Provider, uri: string, namespace: UiNamespace | undefined): ResourceTarget {
  if (!namespace) return { provider, uri };
  return { provider, uri: namespace.upstream(uri) ?? uri, namespace };
}

/**
 * Whether an update of `uri` concerns a subscription to `subscribed`: the same resource or one
 * of its sub-resources (ResourceUpdatedNotificationParams.uri "might be a sub-resource of the one
 * that the client actually subscribed to"), taken as a path below it.
 */
export function withinResource(subscribed: string, uri: string): boolean {
  if (uri === subscribed) return true;
  const base = subscribed.endsWith("/") ? subscribed : `${subscribed}/`;
  return uri.startsWith(base);
}
