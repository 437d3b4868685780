// Requests Node's HTTP parser refuses before Fastify sees them (headers past the parser's limit,
// malformed request lines): answered in the surface's own error format (JSON-RPC on /mcp,
// problem+json on /admin, RFC 6749 JSON on /oauth) instead of a bare 431 or 400, then closed.
// URLs Fastify cannot route get the same formats (badUrlAnswer).
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { problemOf, PROBLEM_JSON } from "./admin/problem.js";
import { fail, type ErrorCode } from "./protocol/errors.js";

/** How long a refused connection may keep sending (drained unread) before it is cut. */
const LINGER_MS = 2000;
const answered = new WeakSet<Socket>();

/** Fastify's clientErrorHandler: one answer per connection, in its surface's format. */
export function answerClientError(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  socket.on("error", () => undefined);
  const status =
    err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
  const { type, body } = render(surfaceOfError(err, socket), status);
  if (socket.writable && !alreadyAnswering(socket))
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  // The client may still be sending its headers: read and drop them, so it reads the answer.
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

interface HttpSocket extends Socket {
  parser?: { incoming?: { url?: unknown; complete?: boolean } } | null;
  _httpMessage?: { headersSent?: boolean } | null;
}

/** Whether the request still arriving was answered already (refused before its body came): no second answer. */
function alreadyAnswering(socket: Socket): boolean {
  const { parser, _httpMessage: response } = socket as HttpSocket;
  return parser?.incoming?.complete === false && (!response || response.headersSent === true);
}

type Surface = "mcp" | "admin" | "oauth" | "other";

/**
 * The surface a refused request was for: from its request line (the packet's first bytes), or,
 * for a request timed out while sending its body, from the request Node already parsed.
 */
function surfaceOfError(err: { rawPacket?: unknown }, socket: Socket): Surface {
  if (Buffer.isBuffer(err.rawPacket)) return surfaceOf(err.rawPacket);
  const parsing = (socket as HttpSocket).parser?.incoming;
  return typeof parsing?.url === "string" ? surfaceOfPath(parsing.url) : "other";
}

/** The surface a refused request was for, from its request line (the packet's first bytes). */
function surfaceOf(packet: Buffer | undefined): Surface {
  const line = packet?.subarray(0, 64).toString("latin1") ?? "";
  return surfaceOfPath(/^[A-Z]+ (\/[^ ?]*)/.exec(line)?.[1] ?? "");
}

/** The surface of a request path: its first segment. */
function surfaceOfPath(path: string): Surface {
  if (path.startsWith("/mcp")) return "mcp";
  if (path.startsWith("/admin")) return "admin";
  if (path.startsWith("/oauth") || path.startsWith("/.well-known")) return "oauth";
  return "other";
}

const DETAIL: Record<number, string> = {
  431: "Request Header Fields Too Large: the request's headers exceed the server's limit (16 KiB)",
  408: "Request Timeout: the request was not received in time",
  400: "Bad Request: the request is not valid HTTP",
};

/**
 * A request whose URL Fastify could not route (bad percent-encoding, an overlong segment), as its
 * surface answers it: the content type and body of a 400 carrying `detail`.
 */
export function badUrlAnswer(url: string, detail: string, status = 400): { type: string; body: string } {
  return render(surfaceOfPath(url), status, detail);
}

function render(surface: Surface, status: number, detail = DETAIL[status]!): { type: string; body: string } {
  switch (surface) {
    case "mcp": {
      const code: ErrorCode =
        status === 431 ? "PORTICO_ERR_MCP_HEADERS_TOO_LARGE" : "PORTICO_ERR_MCP_INVALID_REQUEST";
      const rpc = { jsonrpc: "2.0", id: null, error: { code: fail(code, detail).rpc, message: detail } };
      return { type: "application/json", body: JSON.stringify(rpc) };
    }
    case "admin": {
      const code: ErrorCode =
        status === 431 ? "PORTICO_ERR_ADMIN_HEADERS_TOO_LARGE" : "PORTICO_ERR_ADMIN_MALFORMED";
      const problem = { ...problemOf(fail(code, detail)), status };
      return { type: PROBLEM_JSON, body: JSON.stringify(problem) };
    }
    case "oauth":
      return {
        type: "application/json",
        body: JSON.stringify({ error: "invalid_request", error_description: detail }),
      };
    case "other":
      return {
        type: "application/json",
        body: JSON.stringify({ error: STATUS_CODES[status], message: detail }),
      };
  }
}
