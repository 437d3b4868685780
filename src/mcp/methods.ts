// Method handlers shared by both eras (server/tools, server/prompts, server/resources,
// server/utilities/completion, logging, pagination). Each takes params and the request context,
// and lists and routes with the catalog of the client's capability profile (docs/architecture.md §3).
import type { Catalog, ResourceTarget } from "../providers/catalog.js";
import { excerpt, fail } from "../errors.js";
import type { RequestContext } from "./context.js";
import { isLogLevel } from "../protocol/log-levels.js";
import type { ListKind } from "./cursor.js";

type Params = Record<string, unknown>;
export type Handler = (params: Params, ctx: RequestContext) => Promise<Record<string, unknown>>;

/**
 * A page of a list. Its cursor names the profile's list too: another profile's list may differ
 * in length and order, so a cursor is only good for the capabilities it was issued to.
 */
function page<T>(items: readonly T[], kind: ListKind, field: string, params: Params, ctx: RequestContext) {
  const scope = `${ctx.tenant.config.id}|${ctx.profile.key}`;
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
 * once when current: no promise on the hot path).
 */
function catalogOf(ctx: RequestContext): Catalog | Promise<Catalog> {
  return ctx.tenant.catalogFor(ctx.profile, ctx.user);
}

async function resourceTarget(uri: string, ctx: RequestContext): Promise<ResourceTarget> {
  const target = (await catalogOf(ctx)).resource(uri);
  if (!target)
    throw fail("PORTICO_ERR_MCP_RESOURCE_NOT_FOUND", `Resource not found: ${excerpt(uri)}`, {
      uri: excerpt(uri),
    });
  return target;
}

export const handlers: Readonly<Record<string, Handler>> = {
  ping: async () => ({}),

  "tools/list": async (p, ctx) => {
    const catalog = await catalogOf(ctx);
    return page(ctx.sessionId === undefined ? catalog.tools : catalog.sessionTools, "tools", "tools", p, ctx);
  },
  "prompts/list": async (p, ctx) => page((await catalogOf(ctx)).prompts, "prompts", "prompts", p, ctx),
  "resources/list": async (p, ctx) =>
    page((await catalogOf(ctx)).resources, "resources", "resources", p, ctx),
  "resources/templates/list": async (p, ctx) =>
    page((await catalogOf(ctx)).templates, "templates", "resourceTemplates", p, ctx),

  "tools/call": async (p, ctx) => {
    const name = requireString(p, "name", "tools/call");
    const target = (await catalogOf(ctx)).tool(name);
    if (!target) throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown tool: ${excerpt(name)}`);
    // Absent arguments mean none (the conformance client omits them).
    const args = optionalRecord(p, "arguments", "tools/call") ?? {};
    return await target.provider.callTool(target.name, args, ctx);
  },

  "prompts/get": async (p, ctx) => {
    const name = requireString(p, "name", "prompts/get");
    const target = (await catalogOf(ctx)).prompt(name);
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
      const target = catalog.prompt(ref.name);
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
      const target = catalog.templateTarget(ref.uri) ?? catalog.resource(ref.uri);
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
