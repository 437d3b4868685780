// MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) in a merged catalog (docs/architecture.md §3):
// `ui://` resources and what points at them pass through unchanged, except when two providers of
// a tenant serve the same `ui://` URI. Then the later provider's `ui://` URIs become
// `ui://<prefix or id>/…` everywhere a client sees them (resources, templates, its tools'
// `_meta.ui.resourceUri` and the deprecated flat `_meta["ui/resourceUri"]`), and reading one reads
// the upstream's own URI.
import type { Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ProviderEntries } from "./types.js";

const UI_SCHEME = "ui://";
/** The deprecated flat key SEP-1865 still lists beside `_meta.ui.resourceUri`. */
const LEGACY_KEY = "ui/resourceUri";

export function isUiUri(uri: unknown): uri is string {
  return typeof uri === "string" && uri.startsWith(UI_SCHEME);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The `ui://` URIs a tool's `_meta` points at (the nested key and the legacy flat one). */
export function toolUiUris(tool: Tool): string[] {
  const meta = record(tool._meta);
  if (!meta) return [];
  const out: string[] = [];
  const nested = record(meta.ui)?.resourceUri;
  if (isUiUri(nested)) out.push(nested);
  if (isUiUri(meta[LEGACY_KEY]) && meta[LEGACY_KEY] !== nested) out.push(meta[LEGACY_KEY]);
  return out;
}

/** Every `ui://` URI or template a provider's entries name: listed, templated, or pointed at by a tool. */
export function uiUrisOf(entries: ProviderEntries): Set<string> {
  const out = new Set<string>();
  for (const r of entries.resources) if (isUiUri(r.uri)) out.add(r.uri);
  for (const t of entries.resourceTemplates) if (isUiUri(t.uriTemplate)) out.add(t.uriTemplate);
  for (const tool of entries.tools) for (const uri of toolUiUris(tool)) out.add(uri);
  return out;
}

/** How one provider's `ui://` URIs are shown: under `ui://<namespace>/`, or as they are. */
export class UiNamespace {
  readonly #head: string;

  constructor(readonly namespace: string) {
    this.#head = `${UI_SCHEME}${namespace}/`;
  }

  /** The URI (or template) a client sees for the provider's own. */
  exposed(uri: string): string {
    return isUiUri(uri) ? this.#head + uri.slice(UI_SCHEME.length) : uri;
  }

  /** The provider's own URI behind an exposed one; undefined when it is not under this namespace. */
  upstream(uri: string): string | undefined {
    return uri.startsWith(this.#head) ? UI_SCHEME + uri.slice(this.#head.length) : undefined;
  }

  resource(r: Resource): Resource {
    return isUiUri(r.uri) ? { ...r, uri: this.exposed(r.uri) } : r;
  }

  template(t: ResourceTemplate): ResourceTemplate {
    return isUiUri(t.uriTemplate) ? { ...t, uriTemplate: this.exposed(t.uriTemplate) } : t;
  }

  /** A tool whose `_meta` points at the namespaced URIs; other `_meta` is kept as it is. */
  tool(tool: Tool): Tool {
    const meta = record(tool._meta);
    if (!meta || toolUiUris(tool).length === 0) return tool;
    const out: Record<string, unknown> = { ...meta };
    const ui = record(meta.ui);
    if (ui && isUiUri(ui.resourceUri)) out.ui = { ...ui, resourceUri: this.exposed(ui.resourceUri) };
    if (isUiUri(meta[LEGACY_KEY])) out[LEGACY_KEY] = this.exposed(meta[LEGACY_KEY]);
    return { ...tool, _meta: out };
  }

  /** A resources/read result with the contents' URIs as the client asked for them. */
  readResult<T extends { contents?: unknown }>(result: T): T {
    if (!Array.isArray(result.contents)) return result;
    const contents = result.contents.map((c: unknown) => {
      const item = record(c);
      return item && isUiUri(item.uri) ? { ...item, uri: this.exposed(item.uri) } : c;
    });
    return { ...result, contents };
  }
}
