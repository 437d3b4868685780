// A session record as stored: short keys keep an idle session small (docs/storage.md).
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { decodeCapabilities, encodeCapabilities, profileOfBits } from "./capability-bits.js";
import type { Session } from "./sessions.js";

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
