// Tool search, progressive discovery of a large catalog (docs/tool-search.md): with
// `toolDiscovery: "search"` a tenant or virtual server lists three tools instead of its catalog —
// search_tools, describe_tool, call_tool — plus the tools with an MCP Apps user interface, which
// hosts need listed. Search ranks the caller's own view of the catalog (the policy's, the virtual
// server's, the user's), so a hidden tool is never found, described or called. A call through
// call_tool is unwrapped into the inner tool's call before either lane looks at it, so policy,
// audit, metrics, held rounds and the upstream see that tool's call and nothing else.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { RpcRequest } from "../protocol/jsonrpc.js";
import { TextIndex } from "../search/text-index.js";
import type { ToolDiscoveryMode } from "../records/server.js";
import { toolUiUris } from "../providers/ui-resources.js";
import type { CatalogView } from "../policy/view.js";
import type { TenantRuntime } from "../tenants/runtime.js";

export const SEARCH_TOOLS = "search_tools";
export const DESCRIBE_TOOL = "describe_tool";
export const CALL_TOOL = "call_tool";
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;
/** Of a description, what a search result shows: its first sentence, within this. */
const SUMMARY_CHARS = 160;
/** Of a tool's text, what is indexed. */
const MAX_INDEXED_CHARS = 4096;

export const META_TOOLS: readonly Tool[] = Object.freeze<Tool[]>([
  {
    name: SEARCH_TOOLS,
    title: "Search tools",
    description:
      "Finds the tools that can do a task, ranked by relevance. Describe one with describe_tool to see its arguments, then run it with call_tool (or by its name).",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What you want to do, in a few words." },
        provider: { type: "string", description: "Only the tools of this provider (its id)." },
        tags: {
          type: "array",
          items: { type: "string" },
          maxItems: 20,
          description: "Only the tools with one of these tags (an OpenAPI operation's tags, for example).",
        },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: MAX_LIMIT,
          description: `At most this many (default ${DEFAULT_LIMIT}).`,
        },
      },
      required: ["query"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: DESCRIBE_TOOL,
    title: "Describe a tool",
    description:
      "The full definition of one tool found with search_tools: its description and the JSON Schema of its arguments.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "The tool's name, as search_tools gave it." } },
      required: ["name"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: CALL_TOOL,
    title: "Call a tool",
    description:
      "Runs one tool found with search_tools with its arguments, and answers what that tool answers.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", description: "The tool's name." },
        arguments: {
          type: "object",
          description: "Its arguments, as its input schema (describe_tool) says.",
        },
      },
      required: ["name"],
    },
  },
]);

const META_NAMES: ReadonlySet<string> = new Set(META_TOOLS.map((t) => t.name));

/** The discovery mode of a tenant's URL or of a virtual server's: the server's own, else the tenant's. */
export function discoveryOf(tenant: Pick<TenantRuntime, "config" | "server">): ToolDiscoveryMode {
  return tenant.server?.toolDiscovery ?? tenant.config.toolDiscovery ?? "list";
}

export function isMetaTool(name: string): boolean {
  return META_NAMES.has(name);
}

const listed = new WeakMap<readonly Tool[], readonly Tool[]>();

/** What tools/list answers in search mode: the meta tools, then every tool with an MCP Apps UI. */
export function searchModeTools(tools: readonly Tool[]): readonly Tool[] {
  let out = listed.get(tools);
  if (!out) {
    out = [...META_TOOLS, ...tools.filter((t) => !META_NAMES.has(t.name) && toolUiUris(t).length > 0)];
    listed.set(tools, out);
  }
  return out;
}

/**
 * A call_tool request as the call of the tool it names (its `_meta`, requestState and
 * inputResponses kept), when the tenant searches; any other request as it is.
 */
export function unwrapCall(
  tenant: Pick<TenantRuntime, "config" | "server">,
  request: RpcRequest,
): RpcRequest {
  const params = request.params;
  if (request.method !== "tools/call" || params?.name !== CALL_TOOL || discoveryOf(tenant) !== "search")
    return request;
  const args = params.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return request;
  const { name, arguments: inner } = args as Record<string, unknown>;
  if (typeof name !== "string" || name === "" || META_NAMES.has(name)) return request;
  const { arguments: _outer, ...rest } = params;
  return { ...request, params: { ...rest, name, ...(inner !== undefined && { arguments: inner }) } };
}

/**
 * A tool's tags: `_meta.tags` (an `openapi` provider's operation tags), or the `_meta._fastmcp.tags`
 * FastMCP servers send.
 */
export function toolTags(tool: Tool): readonly string[] {
  const meta = tool._meta as { tags?: unknown; _fastmcp?: { tags?: unknown } } | undefined;
  const tags = meta?.tags ?? meta?._fastmcp?.tags;
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === "string") : [];
}

function parameterText(tool: Tool): string {
  const properties = tool.inputSchema?.properties;
  if (typeof properties !== "object" || properties === null) return "";
  return Object.entries(properties)
    .map(([name, schema]) => {
      const description = (schema as { description?: unknown } | null)?.description;
      return typeof description === "string" ? `${name} ${description}` : name;
    })
    .join(" ");
}

interface Indexed {
  readonly index: TextIndex;
  readonly tools: readonly Tool[];
}

const indexes = new WeakMap<readonly Tool[], Indexed>();

/** The index of a list of tools, built once per list (a catalog's lists change identity on change). */
function indexOf(tools: readonly Tool[]): Indexed {
  let indexed = indexes.get(tools);
  if (indexed) return indexed;
  // Bounded: an upstream's description can be of any length.
  const texts = tools.map((t) =>
    [t.name, t.title ?? t.annotations?.title ?? "", t.description ?? "", ...toolTags(t), parameterText(t)]
      .join(" ")
      .slice(0, MAX_INDEXED_CHARS),
  );
  indexed = { index: new TextIndex(texts), tools };
  indexes.set(tools, indexed);
  return indexed;
}

export interface SearchHit {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly score: number;
}

function summary(description: string | undefined): string | undefined {
  if (!description) return undefined;
  const first = /^(.+?[.!?])(?:\s|$)/s.exec(description)?.[1] ?? description;
  const line = first.replace(/\s+/g, " ").trim();
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
}

/** The tools of `catalog` (as `tools` lists them) that best match `query`. */
export function searchTools(
  catalog: CatalogView,
  tools: readonly Tool[],
  query: string,
  options: { provider?: string; tags?: readonly string[]; limit?: number } = {},
): SearchHit[] {
  const limit = Math.min(Math.max(1, Math.floor(options.limit ?? DEFAULT_LIMIT)), MAX_LIMIT);
  const { index, tools: indexed } = indexOf(tools);
  const wanted = options.tags?.length ? new Set(options.tags.map((t) => t.toLowerCase())) : undefined;
  const hits: SearchHit[] = [];
  for (const result of index.search(query)) {
    const tool = indexed[result.index]!;
    if (META_NAMES.has(tool.name)) continue;
    if (options.provider !== undefined && catalog.tool(tool.name)?.provider.id !== options.provider) continue;
    if (wanted && !toolTags(tool).some((t) => wanted.has(t.toLowerCase()))) continue;
    const description = summary(tool.description);
    hits.push({
      name: tool.name,
      ...(tool.title && { title: tool.title }),
      ...(description && { description }),
      score: Math.round(result.score * 1000) / 1000,
    });
    if (hits.length >= limit) break;
  }
  return hits;
}
