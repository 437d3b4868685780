// The per-request `_meta` of 2026-07-28 (basic/index §_meta, basic/versioning): what each request
// says about its protocol version, client capabilities, client and wanted log level, checked in
// the order the conformance suite's reference server uses: a missing or malformed field (-32602),
// then the MCP-Protocol-Version header against it (-32020), then the version itself (-32022).
import type { IncomingHttpHeaders } from "node:http";
import type { ClientCapabilities, Implementation, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { excerpt, fail } from "../../protocol/errors.js";
import { isLogLevel } from "../../protocol/log-levels.js";
import { statelessProfile, type CapabilityProfile } from "../../protocol/profile.js";
import { encodeCapabilities, profileOfBits } from "../capability-bits.js";
import { ALL_VERSIONS, META, SESSION_VERSIONS, STATELESS_VERSIONS } from "../../protocol/era.js";

export interface RequestMeta {
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  /** The profile of clientCapabilities, read once per request (docs/architecture.md §3). */
  readonly profile: CapabilityProfile;
  readonly clientInfo: Implementation | undefined;
  /** Log messages go to this request only when it names a level. */
  readonly logLevel: LoggingLevel | undefined;
  readonly progressToken: string | number | undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function invalid(message: string): never {
  throw fail("PORTICO_ERR_MCP_META_INVALID", `Invalid params: ${message}`);
}

/** Reads and checks a stateless request's `_meta` and its MCP-Protocol-Version header. */
export function requestMetaOf(
  params: Record<string, unknown> | undefined,
  headers: IncomingHttpHeaders,
): RequestMeta {
  const meta = params?._meta;
  if (!isRecord(meta))
    invalid(
      `2026-07-28 requests carry "_meta" with "${META.protocolVersion}" and "${META.clientCapabilities}"`,
    );
  const version = meta[META.protocolVersion];
  if (typeof version !== "string" || version === "")
    invalid(`"_meta" needs "${META.protocolVersion}" (a protocol version string)`);
  const capabilities = meta[META.clientCapabilities];
  if (!isRecord(capabilities))
    invalid(`"_meta" needs "${META.clientCapabilities}" (an object; {} when the client has none)`);
  const level = meta[META.logLevel];
  if (level !== undefined && !isLogLevel(level))
    invalid(
      `"${META.logLevel}" must be one of debug, info, notice, warning, error, critical, alert, emergency`,
    );
  const info = meta[META.clientInfo];

  const header = headers["mcp-protocol-version"];
  // Only Mcp-Name and Mcp-Param-* may use the Base64 sentinel; a version is compared as sent.
  const sent = typeof header === "string" ? header.trim() : undefined;
  if (sent === undefined)
    throw fail(
      "PORTICO_ERR_MCP_HEADER_MISMATCH",
      "Header mismatch: the MCP-Protocol-Version header is required",
    );
  if (sent !== version)
    throw fail(
      "PORTICO_ERR_MCP_HEADER_MISMATCH",
      `Header mismatch: MCP-Protocol-Version header value '${excerpt(sent)}' does not match _meta value '${excerpt(version)}'`,
    );
  if (!STATELESS_VERSIONS.includes(version))
    throw fail(
      "PORTICO_ERR_MCP_UNSUPPORTED_VERSION",
      SESSION_VERSIONS.includes(version)
        ? `Unsupported protocol version '${excerpt(version)}' without a session: send initialize first, or use ${STATELESS_VERSIONS.join(", ")} per request`
        : `Unsupported protocol version '${excerpt(version)}'; this server speaks ${STATELESS_VERSIONS.join(", ")} per request, and ${SESSION_VERSIONS.join(", ")} after initialize`,
      { supported: ALL_VERSIONS, requested: excerpt(version) },
    );
  const token = meta.progressToken;
  return {
    protocolVersion: version,
    clientCapabilities: capabilities,
    profile: statelessProfile(profileOfBits(encodeCapabilities(capabilities))),
    clientInfo: isRecord(info) ? (info as unknown as Implementation) : undefined,
    logLevel: level,
    progressToken: typeof token === "string" || typeof token === "number" ? token : undefined,
  };
}
