// How an error leaves /mcp (docs/errors.md): a PorticoError, or Fastify's own, becomes a JSON-RPC
// error with its HTTP status and the headers it calls for (Allow, WWW-Authenticate, Retry-After).
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { fail, isPorticoError, type PorticoError } from "../../protocol/errors.js";
import { errorResponse, type RpcMessage } from "../../protocol/jsonrpc.js";
import { eraOf } from "../../protocol/era.js";
import { sessionIdOf } from "./http-edge.js";

/** Fastify's own errors on this route, as JSON-RPC errors with a plain-words message. */
function fastifyErrorToPortico(err: FastifyError): PorticoError | undefined {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return fail(
        "PORTICO_ERR_MCP_BODY_TOO_LARGE",
        "Payload Too Large: the body exceeds PORTICO_BODY_LIMIT_BYTES",
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return fail(
        "PORTICO_ERR_MCP_CONTENT_TYPE",
        "Unsupported Media Type: POST bodies must be Content-Type: application/json",
      );
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return fail("PORTICO_ERR_MCP_PARSE", "Parse error: the request has no JSON body");
    default:
      return undefined;
  }
}

/** What an MCP client reads while Redis is away: nothing is served from memory meanwhile. */
const STORE_DOWN =
  "Service Unavailable: the gateway is temporarily unavailable (its session store cannot be reached); retry shortly";

/** Answers an error on /mcp as a JSON-RPC error with its HTTP status and headers. */
export function sendError(err: FastifyError | PorticoError, req: FastifyRequest, reply: FastifyReply) {
  const known = isPorticoError(err) ? err : fastifyErrorToPortico(err);
  if (!known) req.log.error({ err }, "unexpected error on /mcp");
  const e = known ?? fail("PORTICO_ERR_MCP_INTERNAL", "Internal error");
  const status = e.status === 200 ? 400 : e.status;
  if (status === 405 && !reply.hasHeader("allow")) void reply.header("allow", "GET, POST, DELETE, OPTIONS");
  const challenge = (e.data as { challenge?: string } | undefined)?.challenge;
  if (challenge) void reply.header("www-authenticate", challenge);
  const retryAfter = (e.data as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
  if (retryAfter !== undefined) void reply.header("retry-after", String(retryAfter));
  else if (status === 503) void reply.header("retry-after", "1");
  const message = e.code === "PORTICO_ERR_STORE_UNAVAILABLE" ? STORE_DOWN : e.message;
  const version = req.headers["mcp-protocol-version"];
  const era = eraOf(sessionIdOf(req), Array.isArray(version) ? version[0] : version, req.body);
  const { code, data } = e.rpcIn(era, challenge ? undefined : e.data);
  const body: RpcMessage = errorResponse(requestIdOf(req.body), code, message, data);
  return reply.code(status).header("content-type", "application/json").send(JSON.stringify(body));
}

/** The id of the request being answered, when the body had one. */
function requestIdOf(body: unknown): string | number | null {
  const id =
    typeof body === "object" && body !== null && !Array.isArray(body)
      ? (body as { id?: unknown }).id
      : undefined;
  // Only an id a request could carry is echoed (a string or an integer; 1.5 is none).
  return typeof id === "string" || Number.isInteger(id) ? (id as string | number) : null;
}
