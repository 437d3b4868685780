// A tenant's catalog: the union of its providers' entries under exposed names (docs/architecture.md §3),
// rebuilt whenever a provider's entries change, and the index from exposed name or URI to provider.
import type {
  Prompt,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { EXPOSED_NAME, exposedName } from "./config.js";
import type { Provider } from "./types.js";
import { hasLooseOutputSchema } from "./list-entries.js";
import { matchTemplate } from "./uri-template.js";

function withoutOutputSchema(tool: Tool): Tool {
  const { outputSchema: _dropped, ...rest } = tool;
  return rest;
}

export interface Target {
  readonly provider: Provider;
  /** The name the provider knows the entry by. */
  readonly name: string;
  /** A tool's definition as clients see it (its x-mcp-header annotations say which headers to expect). */
  readonly tool?: Tool;
}

export interface CatalogWarning {
  readonly provider: string;
  readonly message: string;
}

export class Catalog {
  readonly tools: readonly Tool[];
  /**
   * The tools as session-era clients take them: a 2026-07-28 upstream's tool whose outputSchema
   * is not `type: "object"` at its root is listed without it (a 2025 client refuses the whole list
   * otherwise; the tool's structured results are then not checked). Usually the same array.
   */
  readonly sessionTools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly templates: readonly ResourceTemplate[];
  /** Entries left out (name collisions, invalid names), for the log. */
  readonly warnings: readonly CatalogWarning[];
  readonly #tools = new Map<string, Target>();
  readonly #prompts = new Map<string, Target>();
  readonly #resources = new Map<string, Provider>();
  readonly #templates: Array<{ template: string; provider: Provider }> = [];

  constructor(readonly providers: readonly Provider[]) {
    const tools: Tool[] = [];
    const prompts: Prompt[] = [];
    const resources: Resource[] = [];
    const templates: ResourceTemplate[] = [];
    const warnings: CatalogWarning[] = [];
    for (const provider of providers) {
      const entries = provider.entries();
      for (const tool of entries.tools) {
        const name = this.#claim(this.#tools, provider, tool.name, "tool", warnings);
        if (name) {
          const exposed = name === tool.name ? tool : { ...tool, name };
          this.#tools.set(name, { provider, name: tool.name, tool: exposed });
          tools.push(exposed);
        }
      }
      for (const prompt of entries.prompts) {
        const name = this.#claim(this.#prompts, provider, prompt.name, "prompt", warnings);
        if (name) prompts.push(name === prompt.name ? prompt : { ...prompt, name });
      }
      for (const resource of entries.resources) {
        const owner = this.#resources.get(resource.uri);
        if (owner)
          warnings.push({
            provider: provider.id,
            message: `resource ${resource.uri} is already served by provider '${owner.id}'`,
          });
        else {
          this.#resources.set(resource.uri, provider);
          resources.push(resource);
        }
      }
      for (const template of entries.resourceTemplates) {
        this.#templates.push({ template: template.uriTemplate, provider });
        templates.push(template);
      }
    }
    this.tools = tools;
    this.sessionTools = tools.some(hasLooseOutputSchema)
      ? tools.map((t) => (hasLooseOutputSchema(t) ? withoutOutputSchema(t) : t))
      : tools;
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

  /** The provider serving a URI: a listed resource first, then the first matching template. */
  resourceOwner(uri: string): Provider | undefined {
    const listed = this.#resources.get(uri);
    if (listed) return listed;
    for (const { template, provider } of this.#templates) if (matchTemplate(template, uri)) return provider;
    return undefined;
  }

  /** The provider to ask for updates of a URI (Provider.watch): its owner, when it can watch. */
  watcher(uri: string): Provider | undefined {
    const owner = this.resourceOwner(uri);
    return owner?.watch ? owner : undefined;
  }

  /** The provider of a resource template, by its exact uriTemplate. */
  templateOwner(uriTemplate: string): Provider | undefined {
    return this.#templates.find((t) => t.template === uriTemplate)?.provider;
  }

  /**
   * The server capabilities: every list with listChanged, since admins add and remove providers
   * while sessions live (a session's capabilities are fixed at initialize); subscribe only when an
   * upstream serves it.
   */
  capabilities(): ServerCapabilities {
    return {
      logging: {},
      completions: {},
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: this.providers.some((p) => p.subscribable === true) },
    };
  }

  #claim(
    index: Map<string, Target>,
    provider: Provider,
    name: string,
    what: string,
    warnings: CatalogWarning[],
  ) {
    const exposed = exposedName(provider, name);
    const holder = index.get(exposed);
    if (holder) {
      warnings.push({
        provider: provider.id,
        message: `${what} '${exposed}' is already served by provider '${holder.provider.id}'`,
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
 * Whether an update of `uri` concerns a subscription to `subscribed`: the same resource or one
 * of its sub-resources (ResourceUpdatedNotificationParams.uri "might be a sub-resource of the one
 * that the client actually subscribed to"), taken as a path below it.
 */
export function withinResource(subscribed: string, uri: string): boolean {
  if (uri === subscribed) return true;
  const base = subscribed.endsWith("/") ? subscribed : `${subscribed}/`;
  return uri.startsWith(base);
}
