// Method handlers shared by both eras (server/tools, server/prompts, server/resources,
// server/utilities/completion, logging, pagination). Each takes params and the request context.
import type { Provider } from "../providers/types.js";
import { excerpt, fail } from "../errors.js";
import type { RequestContext } from "./context.js";
import { isLogLevel } from "../protocol/log-levels.js";
import type { ListKind } from "./cursor.js";

type Params = Record<string, unknown>;
export type Handler = (params: Params, ctx: RequestContext) => Promise<Record<string, unknown>>;

function page<T>(items: readonly T[], kind: ListKind, field: string, params: Params, ctx: RequestContext) {
  const tenantId = ctx.tenant.config.id;
  const offset = ctx.cursors.decode(tenantId, kind, params.cursor);
  const end = offset + ctx.pageSize;
  const result: Record<string, unknown> = { [field]: items.slice(offset, end) };
  if (end < items.length) result.nextCursor = ctx.cursors.encode(tenantId, kind, end);
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

function resourceOwner(uri: string, ctx: RequestContext): Provider {
  const provider = ctx.tenant.catalog.resourceOwner(uri);
  if (!provider)
    throw fail("PORTICO_ERR_MCP_RESOURCE_NOT_FOUND", `Resource not found: ${excerpt(uri)}`, {
      uri: excerpt(uri),
    });
  return provider;
}

export const handlers: Readonly<Record<string, Handler>> = {
  ping: async () => ({}),

  "tools/list": async (p, ctx) => {
    const { catalog } = ctx.tenant;
    return page(ctx.sessionId === undefined ? catalog.tools : catalog.sessionTools, "tools", "tools", p, ctx);
  },
  "prompts/list": async (p, ctx) => page(ctx.tenant.catalog.prompts, "prompts", "prompts", p, ctx),
  "resources/list": async (p, ctx) => page(ctx.tenant.catalog.resources, "resources", "resources", p, ctx),
  "resources/templates/list": async (p, ctx) =>
    page(ctx.tenant.catalog.templates, "templates", "resourceTemplates", p, ctx),

  "tools/call": async (p, ctx) => {
    const name = requireString(p, "name", "tools/call");
    const target = ctx.tenant.catalog.tool(name);
    if (!target) throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown tool: ${excerpt(name)}`);
    // Absent arguments mean none (the conformance client omits them).
    const args = optionalRecord(p, "arguments", "tools/call") ?? {};
    return await target.provider.callTool(target.name, args, ctx);
  },

  "prompts/get": async (p, ctx) => {
    const name = requireString(p, "name", "prompts/get");
    const target = ctx.tenant.catalog.prompt(name);
    if (!target) throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown prompt: ${excerpt(name)}`);
    const args = stringArguments(optionalRecord(p, "arguments", "prompts/get"), "prompts/get");
    return await target.provider.getPrompt(target.name, args, ctx);
  },

  "resources/read": async (p, ctx) => {
    const uri = requireString(p, "uri", "resources/read");
    return await resourceOwner(uri, ctx).readResource(uri, ctx);
  },

  "resources/subscribe": async (p, ctx) => {
    const uri = requireString(p, "uri", "resources/subscribe");
    await resourceOwner(uri, ctx).subscribe?.(uri, ctx);
    return {};
  },

  "resources/unsubscribe": async (p, ctx) => {
    const uri = requireString(p, "uri", "resources/unsubscribe");
    await resourceOwner(uri, ctx).unsubscribe?.(uri, ctx);
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
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      const target = ctx.tenant.catalog.prompt(ref.name);
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
      const provider = ctx.tenant.catalog.templateOwner(ref.uri) ?? ctx.tenant.catalog.resourceOwner(ref.uri);
      if (!provider)
        throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown resource template: ${excerpt(ref.uri)}`);
      return await provider.complete({ type: "ref/resource", uri: ref.uri }, arg, contextArgs, ctx);
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
