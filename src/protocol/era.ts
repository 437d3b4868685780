// Which protocol era a POST to /mcp speaks (docs/architecture.md §2, docs/protocol-eras.md), decided once
// at the edge: per-request `_meta` with a protocol version, or a version header that no
// session-era revision uses, means 2026-07-28; a session id means the session era, unless the
// request is plainly 2026-07-28 (both its `_meta` and its header say so: that revision ignores a
// session header, and no session-era request carries either). Everything else, including a plain
// initialize, is the session era.

/** Revisions the stateless lane speaks. */
export const STATELESS_VERSIONS: readonly string[] = ["2026-07-28"];

/**
 * Session-era revisions, newest first; initialize falls back to the first. 2024-11-05 is served on
 * Streamable HTTP as the official SDK servers do (docs/protocol-eras.md "Older revisions").
 */
export const SESSION_VERSIONS: readonly string[] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/** Every revision served, newest first: what -32022 and server/discover list (basic/versioning). */
export const ALL_VERSIONS: readonly string[] = Object.freeze([...STATELESS_VERSIONS, ...SESSION_VERSIONS]);

/** The `_meta` keys of 2026-07-28 (basic/index §_meta). */
export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

export type Era = "session" | "stateless";

/**
 * The revision an initialize asking `requested` gets, whatever transport carries it: the same when
 * served, else the latest, and the client decides (lifecycle §Version Negotiation).
 */
export function negotiateSessionVersion(requested: string): string {
  return SESSION_VERSIONS.includes(requested) ? requested : SESSION_VERSIONS[0]!;
}

/** The era of one POST, from its session header, its version header and its parsed body. */
export function eraOf(sessionId: string | undefined, versionHeader: string | undefined, body: unknown): Era {
  const params =
    typeof body === "object" && body !== null ? (body as { params?: unknown }).params : undefined;
  const meta =
    typeof params === "object" && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  const modernMeta = typeof meta === "object" && meta !== null && META.protocolVersion in meta;
  if (sessionId !== undefined)
    return modernMeta && isStatelessVersion(versionHeader) ? "stateless" : "session";
  if (modernMeta) return "stateless";
  // A batch under a 2026-07-28 header is that revision's client: it hears why batches are refused.
  return isStatelessVersion(versionHeader) ? "stateless" : "session";
}

/** True for an MCP-Protocol-Version header that names no session-era revision. */
export function isStatelessVersion(versionHeader: string | string[] | undefined): boolean {
  const version = typeof versionHeader === "string" ? versionHeader.trim() : undefined;
  return version !== undefined && version !== "" && !SESSION_VERSIONS.includes(version);
}
