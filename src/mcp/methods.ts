// Method handlers shared by both eras (server/tools, server/prompts, server/resources,
// server/utilities/completion, logging, pagination). Each takes params and the request context,
// and lists and routes with the catalog of the client's capability profile (docs/architecture.md §3),
// as the tenant's policy lets the caller see it: a hidden entry is answered as an unknown one.
import type { ResourceTarget } from "../providers/catalog.js";
import type { ListKind as PolicyList } from "../policy/enforcer.js";
import type { EntryKind } from "../records/policy.js";
import { subjectOf } from "../policy/enforcer.js";
import { PolicyView, type CatalogView } from "../policy/view.js";
import { excerpt, fail } from "../protocol/errors.js";
import type { RequestContext } from "./context.js";
import { isLogLevel } from "../protocol/log-levels.js";
import { knowsTasks } from "../protocol/older-revisions.js";
import type { ListKind } from "./cursor.js";
import {
  cancelTask,
  getTask,
  listTasks,
  statelessTaskCall,
  taskCall,
  taskResult,
  toolsForTasks,
} from "./task-methods.js";
import {
  CALL_TOOL,
  DESCRIBE_TOOL,
  discoveryOf,
  isMetaTool,
  searchModeTools,
  searchTools,
  SEARCH_TOOLS,
} from "./tool-search.js";

type Params = Record<string, unknown>;
export type Handler = (params: Params, ctx: RequestContext) => Promise<Record<string, unknown>>;

/**
 * A page of a list. Its cursor names the profile's list too: another profile's list may differ
 * in length and order, so a cursor is only good for the capabilities it was issued to.
 */
function page<T>(
  items: readonly T[],
  kind: ListKind,
  field: string,
  params: Params,
  ctx: RequestContext,
  catalog: CatalogView,
) {
  // A view's cursor is good only for the attributes its list was filtered by.
  let view = "";
  if (catalog instanceof PolicyView) {
    counted(ctx, catalog, kind, items.length);
    view = `|${catalog.key}`;
  }
  const scope = `${ctx.tenant.config.id}|${ctx.server ?? ""}|${ctx.profile.key}${view}`;
  const offset = ctx.cursors.decode(scope, kind, params.cursor);
  const end = offset + ctx.pageSize;
  const result: Record<string, unknown> = { [field]: items.slice(offset, end) };
  if (end < items.length) result.nextCursor = ctx.cursors.encode(scope, kind, end);
  return result;
}

function requireString(params: Params, name: string, what: string): string {
  const value = params[name];
  if (typeof value !== "string" || value === "")
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `${what} needs a non-empty string "${name}"`);
  return value;
}

function optionalRecord(params: Params, name: string, what: string): Record<string, unknown> | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `${what}: "${name}" must be an object`);
  return value as Record<string, unknown>;
}

function stringArguments(args: Record<string, unknown> | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(args ?? {})) {
    if (typeof v !== "string")
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `${what}: argument "${excerpt(k)}" must be a string`);
    out[k] = v;
  }
  return out;
}

/**
 * The catalog of the request's profile, and its user's when the tenant has per-user providers (at
 * once when current: no promise on the hot path), seen through the tenant's policy when it has
 * one (docs/policy.md).
 */
function catalogOf(ctx: RequestContext): CatalogView | Promise<CatalogView> {
  const catalog = ctx.tenant.catalogFor(ctx.profile, ctx.user);
  const policy = ctx.tenant.policy;
  if (policy === undefined) return catalog;
  return catalog instanceof Promise
    ? catalog.then((c) => policy.view(c, ctx.caller, ctx.server))
    : policy.view(catalog, ctx.caller, ctx.server);
}

const LIST_KIND: Partial<Record<ListKind, PolicyList>> = {
  tools: "tools",
  prompts: "prompts",
  resources: "resources",
  templates: "resources",
};

function counted(ctx: RequestContext, view: PolicyView, kind: ListKind, shown: number): void {
  const list = LIST_KIND[kind];
  if (list) ctx.tenant.policy?.listed(view, list, shown);
}

/** Counts a use under the tenant's policy (allowed, or refused as unknown); `found` is what the view returned. */
function used<T>(ctx: RequestContext, catalog: CatalogView, kind: EntryKind, name: string, found: T): T {
  if (catalog instanceof PolicyView)
    ctx.tenant.policy?.used(catalog, kind, name, found !== undefined, () =>
      subjectOf(ctx.caller, ctx.server),
    );
  return found;
}

async function resourceTarget(uri: string, ctx: RequestContext): Promise<ResourceTarget> {
  const catalog = await catalogOf(ctx);
  const target = used(ctx, catalog, "resource", uri, catalog.resource(uri));
  if (!target)
    throw fail("PORTICO_ERR_MCP_RESOURCE_NOT_FOUND", `Resource not found: ${excerpt(uri)}`, {
      uri: excerpt(uri),
    });
  return target;
}

/** The tools a list shows the request's client (its era's list; before 2025-11-25, without task marks). */
function toolsOf(ctx: RequestContext, catalog: CatalogView) {
  if (ctx.sessionId === undefined) return catalog.tools;
  return knowsTasks(ctx.protocolVersion)
    ? toolsForTasks(catalog.sessionTools, ctx)
    : catalog.olderSessionTools;
}

/**
 * ` (did you mean "ev__echo"?)` when `name` is the provider's own name of tools this caller is
 * listed under another name (a provider's prefix, a virtual server's rename); else nothing. Only
 * the caller's list is searched, so a hidden tool is never named (docs/policy.md).
 */
function didYouMean(ctx: RequestContext, catalog: CatalogView, name: string): string {
  const near = toolsOf(ctx, catalog)
    .filter((t) => catalog.tool(t.name)?.name === name)
    .slice(0, 3)
    .map((t) => JSON.stringify(t.name));
  if (near.length === 0) return "";
  const last = near.pop()!;
  return ` (did you mean ${near.length > 0 ? `${near.join(", ")} or ${last}` : last}?)`;
}

/** A result the model reads: the value as structuredContent and as JSON text. */
function structured(value: Record<string, unknown>) {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

function toolError(text: string) {
  return { isError: true, content: [{ type: "text", text }] };
}

/** search_tools and describe_tool over the caller's view; call_tool whose arguments name no tool. */
async function metaCall(name: string, p: Params, ctx: RequestContext, catalog: CatalogView) {
  const args = optionalRecord(p, "arguments", "tools/call") ?? {};
  const tools = toolsOf(ctx, catalog);
  if (name === SEARCH_TOOLS) {
    const { query, provider, tags, limit } = args;
    if (typeof query !== "string" || query.trim() === "") return toolError(`${SEARCH_TOOLS} needs a "query"`);
    const hits = searchTools(catalog, tools, query, {
      ...(typeof provider === "string" && { provider }),
      ...(Array.isArray(tags) && {
        tags: tags.filter((t): t is string => typeof t === "string").slice(0, 20),
      }),
      ...(typeof limit === "number" && { limit }),
    });
    return structured({ tools: hits });
  }
  if (name === DESCRIBE_TOOL) {
    const wanted = args.name;
    const tool =
      typeof wanted === "string" && !isMetaTool(wanted) ? tools.find((t) => t.name === wanted) : undefined;
    if (!tool)
      return toolError(
        `${DESCRIBE_TOOL}: no tool named ${JSON.stringify(typeof wanted === "string" ? excerpt(wanted) : null)}; find one with ${SEARCH_TOOLS}`,
      );
    return structured({ tool });
  }
  // call_tool's own arguments are unwrapped before the lanes (tool-search.ts unwrapCall): here they named no tool.
  return toolError(
    `${CALL_TOOL} needs "name" (a tool's name from ${SEARCH_TOOLS}) and its "arguments" object`,
  );
}

export const handlers: Readonly<Record<string, Handler>> = {
  ping: async () => ({}),

  "tools/list": async (p, ctx) => {
    const catalog = await catalogOf(ctx);
    const tools = toolsOf(ctx, catalog);
    return page(
      discoveryOf(ctx.tenant) === "search" ? toolsForTasks(searchModeTools(tools), ctx) : tools,
      "tools",
      "tools",
      p,
      ctx,
      catalog,
    );
  },
  "prompts/list": async (p, ctx) => {
    const catalog = await catalogOf(ctx);
    return page(catalog.prompts, "prompts", "prompts", p, ctx, catalog);
  },
  "resources/list": async (p, ctx) => {
    const catalog = await catalogOf(ctx);
    return page(catalog.resources, "resources", "resources", p, ctx, catalog);
  },
  "resources/templates/list": async (p, ctx) => {
    const catalog = await catalogOf(ctx);
    return page(catalog.templates, "templates", "resourceTemplates", p, ctx, catalog);
  },

  "tools/call": async (p, ctx) => {
    const name = requireString(p, "name", "tools/call");
    const catalog = await catalogOf(ctx);
    if (isMetaTool(name) && discoveryOf(ctx.tenant) === "search") return metaCall(name, p, ctx, catalog);
    const target = used(ctx, catalog, "tool", name, catalog.tool(name));
    if (!target)
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        `Unknown tool: ${excerpt(name)}${didYouMean(ctx, catalog, name)}`,
      );
    // Absent arguments mean none (the conformance client omits them).
    const args = optionalRecord(p, "arguments", "tools/call") ?? {};
    // A task when the client asked for one, or (2026-07-28) when Portico decides (docs/upstream-mcp.md#tasks).
    const task =
      ctx.tasks &&
      (ctx.sessionId === undefined
        ? await statelessTaskCall(name, target, args, ctx)
        : await taskCall(name, target, args, p, ctx));
    if (task) return task;
    return await target.provider.callTool(target.name, args, ctx);
  },

  "tasks/get": getTask,
  "tasks/result": taskResult,
  "tasks/cancel": cancelTask,
  "tasks/list": listTasks,

  "prompts/get": async (p, ctx) => {
    const name = requireString(p, "name", "prompts/get");
    const catalog = await catalogOf(ctx);
    const target = used(ctx, catalog, "prompt", name, catalog.prompt(name));
    if (!target) throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown prompt: ${excerpt(name)}`);
    const args = stringArguments(optionalRecord(p, "arguments", "prompts/get"), "prompts/get");
    return await target.provider.getPrompt(target.name, args, ctx);
  },

  "resources/read": async (p, ctx) => {
    const uri = requireString(p, "uri", "resources/read");
    const target = await resourceTarget(uri, ctx);
    const result = await target.provider.readResource(target.uri, ctx);
    // A namespaced `ui://` resource is answered under the URI the client asked for.
    return target.namespace ? target.namespace.readResult(result) : result;
  },

  "resources/subscribe": async (p, ctx) => {
    const target = await resourceTarget(requireString(p, "uri", "resources/subscribe"), ctx);
    await target.provider.subscribe?.(target.uri, ctx);
    return {};
  },

  "resources/unsubscribe": async (p, ctx) => {
    const target = await resourceTarget(requireString(p, "uri", "resources/unsubscribe"), ctx);
    await target.provider.unsubscribe?.(target.uri, ctx);
    return {};
  },

  "logging/setLevel": async (p, ctx) => {
    if (!isLogLevel(p.level))
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        `logging/setLevel: "level" must be one of debug, info, notice, warning, error, critical, alert, emergency`,
      );
    await ctx.setLogLevel(p.level);
    return {};
  },

  "completion/complete": async (p, ctx) => {
    const ref = optionalRecord(p, "ref", "completion/complete");
    const argument = optionalRecord(p, "argument", "completion/complete");
    if (!ref || !argument || typeof argument.name !== "string" || typeof argument.value !== "string")
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        'completion/complete needs "ref" and "argument" {name, value}',
      );
    const context = optionalRecord(p, "context", "completion/complete");
    const contextArgs = stringArguments(
      optionalRecord(context ?? {}, "arguments", "completion/complete"),
      "completion/complete",
    );
    const arg = { name: argument.name, value: argument.value };
    const catalog = await catalogOf(ctx);
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      const target = used(ctx, catalog, "prompt", ref.name, catalog.prompt(ref.name));
      if (!target) throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown prompt: ${excerpt(ref.name)}`);
      const result = await target.provider.complete(
        { type: "ref/prompt", name: target.name },
        arg,
        contextArgs,
        ctx,
      );
      return result;
    }
    if (ref.type === "ref/resource" && typeof ref.uri === "string") {
      const target = used(
        ctx,
        catalog,
        "resource",
        ref.uri,
        catalog.templateTarget(ref.uri) ?? catalog.resource(ref.uri),
      );
      if (!target)
        throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown resource template: ${excerpt(ref.uri)}`);
      return await target.provider.complete({ type: "ref/resource", uri: target.uri }, arg, contextArgs, ctx);
    }
    throw fail(
      "PORTICO_ERR_MCP_INVALID_PARAMS",
      'completion/complete: "ref" must be {type:"ref/prompt", name} or {type:"ref/resource", uri}',
    );
  },
};

/** Runs one request; unknown methods are -32601. */
export async function dispatch(
  method: string,
  params: Params,
  ctx: RequestContext,
): Promise<Record<string, unknown>> {
  const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
  if (!handler) throw fail("PORTICO_ERR_MCP_METHOD_NOT_FOUND", `Method not found: ${excerpt(method)}`);
  return handler(params, ctx);
}
