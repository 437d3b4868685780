// The headers of a 2026-07-28 request the bridge sends (basic/transports/streamable-http §Request
// Metadata): MCP-Protocol-Version, Mcp-Method, Mcp-Name, and Mcp-Param-* for a tool's
// `x-mcp-header` arguments, encoded as protocol/request-headers.ts reads them.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { encodeHeaderValue, NAMED, paramHeadersOf } from "../protocol/request-headers.js";
import { ACCEPT_BOTH } from "./http-peer.js";

export const STATELESS_VERSION = "2026-07-28";

/** Headers for one request of `method` with `params` (and the tool it calls, when known). */
export function statelessHeaders(
  method: string,
  params: Record<string, unknown>,
  tool?: Tool,
): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: ACCEPT_BOTH,
    "mcp-protocol-version": STATELESS_VERSION,
    "mcp-method": method,
  };
  const field = NAMED.get(method);
  const name = field === undefined ? undefined : params[field];
  if (typeof name === "string") headers["mcp-name"] = encodeHeaderValue(name);
  if (tool === undefined) return headers;
  for (const annotation of paramHeadersOf(tool)) {
    let value: unknown = params.arguments;
    for (const key of annotation.path)
      value =
        typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") continue;
    headers[`mcp-param-${annotation.header.toLowerCase()}`] = encodeHeaderValue(String(value));
  }
  return headers;
}
