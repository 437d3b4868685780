// The upstream's session ids, as Portico takes them (basic/transports §Session Management): what an
// initialize answer may assign, and when an answer says the session is gone (docs/upstream-mcp.md
// "Healing and health").
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Answer } from "../answer-reader.js";
import { UpstreamHttpError, UpstreamProtocolError } from "../upstream-errors.js";

/** The longest upstream session id Portico keeps (it is stored per client session and sent on every request). */
export const MAX_UPSTREAM_SESSION_ID = 1024;
/** basic/transports §Session Management: the session ID MUST only contain visible ASCII (0x21 to 0x7E). */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * The upstream session id an initialize answer assigned ("" for none). One that breaks the
 * transport's rule (visible ASCII) or is longer than Portico keeps is refused: it is stored in
 * field names and records split on spaces, and sent back in a header (docs/security.md).
 */
export function sessionIdOf(answer: Answer): string {
  const sid = answer.headers["mcp-session-id"];
  if (sid === undefined) return "";
  if (typeof sid !== "string" || sid.length > MAX_UPSTREAM_SESSION_ID || !VISIBLE_ASCII.test(sid))
    throw new UpstreamProtocolError(
      -1,
      `the upstream's Mcp-Session-Id is not a single value of at most ${MAX_UPSTREAM_SESSION_ID} visible ASCII characters`,
    );
  return sid;
}

/**
 * What an upstream says when it forgot or refused a session: the SDKs' "No valid session ID
 * provided", "Session not found", "Mcp-Session-Id header is required", and the like. Words that
 * merely mention a session (an argument named session_name) do not count.
 */
const SESSION_GONE =
  /no valid session|(session|mcp-session-id)( id| header)? (is )?(not found|expired|unknown|invalid|required|missing|terminated)|(unknown|invalid|expired|missing) (mcp-)?session/i;

/**
 * True when the upstream forgot or refused Portico's session, before processing the request:
 * HTTP 404, HTTP 400 whose body says so (SESSION_GONE), or a JSON-RPC error saying so.
 */
export function isSessionGone(err: unknown): boolean {
  if (err instanceof UpstreamHttpError)
    return err.status === 404 || (err.status === 400 && SESSION_GONE.test(err.body));
  return err instanceof McpError && SESSION_GONE.test(err.message);
}
