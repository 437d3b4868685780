// Opaque, tamper-evident pagination cursors (server/utilities/pagination: an invalid cursor is
// -32602). A cursor names the list, the tenant and an offset, and is MACed so it cannot be forged.
import { fail } from "../protocol/errors.js";
import type { Secrets } from "../crypto/secrets.js";

export type ListKind = "tools" | "prompts" | "resources" | "templates" | "tasks";

export class Cursors {
  constructor(private readonly secrets: Secrets) {}

  encode(tenant: string, list: ListKind, offset: number): string {
    const body = offset.toString(36);
    return `${body}.${this.secrets.mac("cursor", `${tenant}|${list}|${body}`)}`;
  }

  /** The offset a cursor points at; throws -32602 for anything Portico did not issue. */
  decode(tenant: string, list: ListKind, cursor: unknown): number {
    if (cursor === undefined) return 0;
    if (typeof cursor !== "string" || cursor.length > 64) throw invalid();
    const dot = cursor.indexOf(".");
    const body = cursor.slice(0, dot);
    if (dot <= 0 || !/^[0-9a-z]{1,10}$/.test(body)) throw invalid();
    if (!this.secrets.verify("cursor", `${tenant}|${list}|${body}`, cursor.slice(dot + 1))) throw invalid();
    return parseInt(body, 36);
  }
}

function invalid() {
  return fail(
    "PORTICO_ERR_MCP_INVALID_PARAMS",
    "Invalid cursor: pass back a nextCursor exactly as the server returned it",
  );
}
