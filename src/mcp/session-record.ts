// A session record: what Portico keeps of an MCP session, and how it is stored, with short keys
// that keep an idle session small (docs/storage.md).
import type { ClientCapabilities, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { CapabilityProfile } from "../protocol/profile.js";
import { decodeCapabilities, encodeCapabilities, profileOfBits } from "./capability-bits.js";

export interface Session {
  readonly id: string;
  readonly tenantId: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  /** The capability profile of clientCapabilities: which lists the session sees (shared object). */
  readonly profile: CapabilityProfile;
  /** Threshold set by logging/setLevel; undefined sends every level. */
  readonly logLevel: LoggingLevel | undefined;
  /** Who the session belongs to ("" when the tenant has no authentication). */
  readonly principal: string;
  /** Client's `name/version`, shortened; passed upstream for logs. */
  readonly clientName: string;
  /** Epoch seconds of initialize. */
  readonly createdAt: number;
  /** Whose cap the session counts against (`p:<hash>` or `ip:<address>`); "" when uncapped. */
  readonly owner: string;
  /**
   * "sse": a session of the deprecated HTTP+SSE transport, which lives as long as its stream
   * (session/legacy-sse.ts); absent for Streamable HTTP. Neither transport accepts the other's ids.
   */
  readonly transport?: "sse";
  /**
   * The virtual server the session was opened on (docs/architecture.md §8); absent for the
   * tenant's own URL. A session is served only at the URL that opened it.
   */
  readonly server?: string;
}

interface StoredSession {
  v: string;
  c: number;
  l?: LoggingLevel;
  p?: string;
  n?: string;
  t?: number;
  o?: string;
  x?: "sse";
  s?: string;
}

export function serialize(s: Session): string {
  const stored: StoredSession = { v: s.protocolVersion, c: encodeCapabilities(s.clientCapabilities) };
  if (s.logLevel) stored.l = s.logLevel;
  if (s.principal) stored.p = s.principal;
  if (s.clientName) stored.n = s.clientName;
  stored.t = s.createdAt;
  if (s.owner) stored.o = s.owner;
  if (s.transport) stored.x = s.transport;
  if (s.server) stored.s = s.server;
  return JSON.stringify(stored);
}

export function deserialize(tenantId: string, id: string, raw: string): Session | undefined {
  try {
    const s = JSON.parse(raw) as StoredSession;
    return {
      id,
      tenantId,
      protocolVersion: s.v,
      clientCapabilities: decodeCapabilities(s.c),
      profile: profileOfBits(s.c),
      logLevel: s.l,
      principal: s.p ?? "",
      clientName: s.n ?? "",
      createdAt: s.t ?? 0,
      owner: s.o ?? "",
      ...(s.x === "sse" && { transport: s.x }),
      ...(typeof s.s === "string" && { server: s.s }),
    };
  } catch {
    return undefined;
  }
}
