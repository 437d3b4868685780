// Checks every /mcp request makes before a lane sees it (basic/transports): DNS-rebinding (403),
// tenant (404), Accept (406), MCP-Protocol-Version (400), and the CORS headers browser clients need.
import type { FastifyReply, FastifyRequest } from "fastify";
import { excerpt, fail } from "../../protocol/errors.js";
import type { OriginPolicy } from "./origin.js";

export interface Acceptable {
  readonly json: boolean;
  readonly sse: boolean;
}

const BOTH: Acceptable = Object.freeze({ json: true, sse: true });
// Clients send the same few Accept values over and over: remember the verdicts (bounded).
const verdicts = new Map<string, Acceptable>();

/** Which of JSON and SSE the Accept header admits (RFC 9110 §12.5.1, q=0 refuses). */
export function acceptable(header: string | undefined): Acceptable {
  if (header === undefined) return BOTH;
  let verdict = verdicts.get(header);
  if (verdict === undefined) {
    verdict = parseAccept(header);
    if (verdicts.size >= 64) verdicts.clear();
    verdicts.set(header, verdict);
  }
  return verdict;
}

function parseAccept(header: string): Acceptable {
  if (header.trim() === "") return BOTH;
  let json = false;
  let sse = false;
  for (const part of header.split(",")) {
    const [type = "", ...params] = part.split(";");
    const media = type.trim().toLowerCase();
    if (params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(p))) continue;
    if (media === "*/*") json = sse = true;
    else if (media === "application/json" || media === "application/*") json = true;
    else if (media === "text/event-stream" || media === "text/*") sse = true;
  }
  return Object.freeze({ json, sse });
}

/** 403 for a foreign Host or Origin (DNS rebinding); CORS headers for allowed browser origins. */
export function guardOrigin(policy: OriginPolicy, req: FastifyRequest, reply: FastifyReply): void {
  if (!policy.hostAllowed(req.headers.host))
    throw fail(
      "PORTICO_ERR_MCP_HOST_FORBIDDEN",
      `Host '${excerpt(req.headers.host ?? "")}' is not served here; add it to PORTICO_ALLOWED_HOSTS or set PORTICO_PUBLIC_URL`,
    );
  const origin = req.headers.origin;
  if (!policy.originAllowed(origin))
    throw fail(
      "PORTICO_ERR_MCP_ORIGIN_FORBIDDEN",
      `Origin '${excerpt(origin ?? "")}' is not allowed; add it to PORTICO_ALLOWED_ORIGINS`,
    );
  if (origin !== undefined) {
    reply.header("access-control-allow-origin", origin);
    reply.header("access-control-expose-headers", "mcp-session-id, mcp-protocol-version, www-authenticate");
    reply.header("vary", "origin");
  }
}

const ALLOWED_HEADERS =
  "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id, mcp-method, mcp-name";
/** Mcp-Param-{Name} headers are named by tools (x-mcp-header): a preflight may ask for any of them. */
const PARAM_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** Headers a CORS preflight for /mcp allows: the fixed ones, and the Mcp-Param-* it asked for. */
export function corsPreflightHeaders(req: FastifyRequest): Record<string, string> {
  const asked = req.headers["access-control-request-headers"];
  const params =
    typeof asked === "string"
      ? asked
          .split(",")
          .map((h) => h.trim().toLowerCase())
          .filter((h) => PARAM_HEADER.test(h))
      : [];
  return {
    "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
    "access-control-allow-headers": [ALLOWED_HEADERS, ...params].join(", "),
    "access-control-max-age": "600",
  };
}

/** The MCP-Protocol-Version header, checked against the versions this lane speaks (06-18+: 400). */
export function checkVersionHeader(req: FastifyRequest, supported: readonly string[]): void {
  const header = req.headers["mcp-protocol-version"];
  if (header === undefined) return; // absent: assume the session's version (transports §Protocol Version Header)
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !supported.includes(value.trim()))
    throw fail(
      "PORTICO_ERR_MCP_PROTOCOL_VERSION",
      `Unsupported MCP-Protocol-Version '${excerpt(value)}'; this session speaks one of: ${supported.join(", ")}`,
      { supported: [...supported], requested: value === undefined ? value : excerpt(value) },
    );
}

/** The Mcp-Session-Id header, if any. */
export function sessionIdOf(req: FastifyRequest): string | undefined {
  const h = req.headers["mcp-session-id"];
  return Array.isArray(h) ? h[0] : h;
}
