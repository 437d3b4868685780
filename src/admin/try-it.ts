// "Try it" (docs/admin-api.md "Try it"): one MCP request made through a tenant's real endpoint, in
// process, as the admin who asks. The request is a 2026-07-28 stateless one (no session to keep),
// injected at /mcp/{tenant} or /mcp/{tenant}/{server} with a single-use internal pass naming the
// admin (mcp/internal-callers.ts): the edge, the rate limits, policy and the lane all run as for a
// client, and no token is minted or handed to the browser.
import { SCOPES } from "../auth/resource-server.js";
import type { InternalCallers } from "../mcp/internal-callers.js";
import { INTERNAL_CALLER_HEADER } from "../mcp/internal-callers.js";
import type { Authenticated } from "../policy/caller.js";
import { RpcCode } from "../protocol/codes.js";
import { META } from "../protocol/era.js";
import { encodeHeaderValue, NAMED } from "../protocol/request-headers.js";
import { STATELESS_VERSIONS } from "../protocol/era.js";
import type { AdminCaller } from "./auth.js";

/** The methods try it makes: listing, and using one entry. */
export const TRY_METHODS = [
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
] as const;
export type TryMethod = (typeof TRY_METHODS)[number];

/** The OAuth client policy sees behind a try-it call (a rule may match it, docs/policy.md). */
export const TRY_CLIENT_ID = "portico-admin";

/** The largest answer passed back whole; a larger one is an error the console shows. */
export const TRY_MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** app.inject as try it uses it. */
export type Inject = (request: {
  method: "POST";
  url: string;
  headers: Record<string, string>;
  payload: string;
}) => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>;

export type TryAnswer =
  | { readonly result: Record<string, unknown> }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

export interface TryRequest {
  readonly tenant: string;
  readonly server?: string | undefined;
  readonly method: TryMethod;
  readonly params?: Record<string, unknown> | undefined;
  /** The virtual server's own scopes, which its tokens carry (docs/architecture.md §8). */
  readonly serverScopes?: readonly string[] | undefined;
}

/** The caller an admin is to the MCP endpoint. */
export function tryCaller(caller: AdminCaller, serverScopes: readonly string[] = []): Authenticated {
  return {
    principal: `${caller.sub} via ${TRY_CLIENT_ID}`,
    user: caller.sub,
    clientId: TRY_CLIENT_ID,
    scopes: [SCOPES.read, SCOPES.tools, ...serverScopes],
    ...(caller.username !== undefined && { username: caller.username }),
    ...(caller.groups?.length && { groups: caller.groups }),
    ...(caller.roles?.length && { roles: caller.roles }),
  };
}

export class TryIt {
  readonly #version = [...STATELESS_VERSIONS].at(-1)!;

  constructor(
    private readonly inject: Inject,
    private readonly callers: InternalCallers,
  ) {}

  /** Runs one request as `caller`; the endpoint's result or JSON-RPC error. */
  async run(request: TryRequest, caller: AdminCaller): Promise<TryAnswer> {
    const { tenant, server, method } = request;
    const params: Record<string, unknown> = {
      ...request.params,
      _meta: {
        ...(request.params?._meta as Record<string, unknown> | undefined),
        [META.protocolVersion]: this.#version,
        [META.clientCapabilities]: {},
        [META.clientInfo]: { name: "Portico console", version: "1" },
      },
    };
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": this.#version,
      "mcp-method": method,
      [INTERNAL_CALLER_HEADER]: this.callers.issue(tryCaller(caller, request.serverScopes), {
        tenant,
        server,
      }),
    };
    const field = NAMED.get(method);
    const named = field === undefined ? undefined : params[field];
    if (typeof named === "string") headers["mcp-name"] = encodeHeaderValue(named);
    const res = await this.inject({
      method: "POST",
      url: `/mcp/${tenant}${server === undefined ? "" : `/${server}`}`,
      headers,
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    if (Buffer.byteLength(res.body) > TRY_MAX_ANSWER_BYTES)
      return {
        error: {
          code: RpcCode.InternalError,
          message: `The answer is larger than ${TRY_MAX_ANSWER_BYTES / 1024 / 1024} MiB: call it from an MCP client`,
        },
      };
    return answerOf(res.body, contentType(res.headers["content-type"]));
  }
}

function contentType(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The JSON-RPC response with id 1 in a JSON body or an SSE stream (messages before it are dropped). */
function answerOf(body: string, type: string): TryAnswer {
  const messages = type.startsWith("text/event-stream")
    ? body
        .split(/\r?\n\r?\n/)
        .map((event) =>
          event
            .split(/\r?\n/)
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n"),
        )
        .filter((data) => data !== "")
    : [body];
  for (const text of messages.reverse()) {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue;
    }
    const error = message.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (error && typeof error.code === "number")
      return {
        error: {
          code: error.code,
          message: typeof error.message === "string" ? error.message : "",
          ...(error.data !== undefined && { data: error.data }),
        },
      };
    if (typeof message.result === "object" && message.result !== null)
      return { result: message.result as Record<string, unknown> };
  }
  return { error: { code: RpcCode.InternalError, message: "The endpoint gave no answer" } };
}
