// What both eras' upstream clients share: the upstream and how to reach it, stored upstream
// session records, every page of a list, and turning upstream failures into gateway errors
// (docs/upstream-mcp.md).
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Dispatcher } from "undici";
import { fail, PorticoError } from "../../protocol/errors.js";
import { MCP_RESERVED_CODES, RpcCode } from "../../protocol/codes.js";
import { isStatelessVersion } from "../../protocol/era.js";
import type { Fetch } from "../../egress/fetch.js";
import type { McpProviderConfig } from "../../records/tenant.js";
import { UpstreamHttp } from "./exchange.js";
import { UpstreamGone, UpstreamHttpError, UpstreamProtocolError } from "./upstream-errors.js";
import type { SessionRecord } from "./session/client.js";
import { UpstreamAuthError, type Authorizer } from "../upstream-auth.js";

/** An upstream and how to reach it. */
export interface UpstreamTarget {
  readonly cfg: McpProviderConfig;
  /** A fetch bound to the egress policy (the token endpoint of `auth`). */
  readonly fetch: Fetch;
  /** The egress Agent: one keep-alive pool per upstream origin. */
  readonly dispatcher: Dispatcher;
  /** The provider's `auth`, shared by all its clients (one token per provider and process). */
  readonly credentials: Authorizer;
  readonly timeoutMs: number;
}

/** The HTTP side of a target (one per client object; they share the dispatcher's pools). */
export function httpOf(target: UpstreamTarget): UpstreamHttp {
  return new UpstreamHttp({
    // A stdio upstream (no URL) never sends HTTP: its part opens sessions on a child instead.
    url: target.cfg.url ?? "http://stdio.invalid/",
    dispatcher: target.dispatcher,
    credentials: target.credentials,
    provider: target.cfg.id,
  });
}

/** An upstream session as stored for other replicas: "<sessionId> <version>". */
export function sessionRecord(record: SessionRecord | undefined): string | undefined {
  return record ? `${record.sessionId} ${record.protocolVersion}` : undefined;
}

export function parseSessionRecord(raw: string | null): SessionRecord | undefined {
  if (!raw) return undefined;
  const [sessionId, protocolVersion] = raw.split(" ");
  return sessionId && protocolVersion ? { sessionId, protocolVersion } : undefined;
}

/** The most entries Portico keeps of one upstream list (per profile), and the most pages it asks for. */
export const MAX_LIST_ENTRIES = 10_000;
const MAX_LIST_PAGES = 100;

/**
 * Every page of a list, bounded (docs/security.md "Hostile upstreams"): paging stops at a cursor
 * already followed (an upstream whose pages never end), after MAX_LIST_PAGES pages, or once
 * MAX_LIST_ENTRIES entries are kept; what was read so far is the list.
 */
export async function listAll<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  const followed = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_LIST_PAGES; pages++) {
    const page = await fetchPage(cursor);
    const room = MAX_LIST_ENTRIES - all.length;
    for (let i = 0; i < page.items.length && i < room; i++) all.push(page.items[i]!);
    if (!page.nextCursor || all.length >= MAX_LIST_ENTRIES || followed.has(page.nextCursor)) break;
    followed.add(page.nextCursor);
    cursor = page.nextCursor;
  }
  return all;
}

/** A JSON-RPC error the upstream answered with, as Portico relays it (relayedError); else undefined. */
export function upstreamRpcError(
  err: unknown,
  providerId: string,
  clientVersion: string,
  keepsUrlElicitation = false,
): PorticoError | McpError | undefined {
  if (!(err instanceof McpError)) return undefined;
  // The SDK reports its own timeout as an McpError too; say whose it was.
  if (err.code === RpcCode.RequestTimeout)
    return fail("PORTICO_ERR_PROVIDER_TIMEOUT", `Provider '${providerId}' did not answer in time`);
  return relayedError(err, providerId, clientVersion, keepsUrlElicitation);
}

/** MCP's own codes (basic/index §Error Codes) and the revision each means something in. */
const MCP_RESERVED = MCP_RESERVED_CODES;
const MISSING_CAPABILITY = RpcCode.MissingRequiredClientCapability;
/**
 * Codes that speak of the request Portico made upstream (its JSON, its envelope, the method, its
 * headers, its version), never of what the client asked: the provider failed the client.
 */
const ABOUT_PORTICOS_REQUEST: ReadonlySet<number> = new Set([
  RpcCode.ParseError,
  RpcCode.InvalidRequest,
  RpcCode.MethodNotFound,
  RpcCode.HeaderMismatch,
  RpcCode.UnsupportedProtocolVersion,
]);
/** URL elicitation required: defined in 2025-11-25 only. */
export const URL_ELICITATION_REQUIRED = RpcCode.UrlElicitationRequired;

/**
 * A JSON-RPC error an upstream answered with, as Portico's client gets it: the upstream's code,
 * message (without the SDK's prefix) and data, unless the code would say something false of
 * Portico. "Method not found" would say Portico lacks a method it serves, and parse errors,
 * invalid requests, -32020 and -32022 speak of Portico's own request upstream, not the client's:
 * those are the provider's failure. For a
 * 2026-07-28 client, a code of MCP's reserved range that its revision does not define becomes
 * -32603 (implementations MUST NOT emit undefined codes there, nor -32042).
 * -32021 keeps its meaning: the upstream saw the client's own capabilities.
 */
export function relayedError(
  err: McpError,
  providerId: string,
  clientVersion: string,
  /** A gateway-made task's call: its task handles -32042 itself (CallContext.keepsUrlElicitation). */
  keepsUrlElicitation = false,
): PorticoError | McpError {
  // The upstream's own words: the wire clients keep an error's message as it was sent.
  const { code, message } = err;
  if (ABOUT_PORTICOS_REQUEST.has(code))
    return fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${providerId}' refused the request (its error ${code}: ${message})`,
    );
  // The range is reserved from 2026-07-28 on: older revisions' clients get an upstream's code as is.
  const reserved =
    code >= MCP_RESERVED.first && code <= MCP_RESERVED.last && isStatelessVersion(clientVersion);
  const defined =
    code === MISSING_CAPABILITY ||
    (code === URL_ELICITATION_REQUIRED && (clientVersion === "2025-11-25" || keepsUrlElicitation));
  if (reserved && !defined)
    return fail(
      "PORTICO_ERR_PROVIDER_FAILED",
      `Provider '${providerId}' failed (its error ${code}: ${message})`,
    );
  return Object.assign(new McpError(code, message, err.data), { message });
}

/** Words for a transport failure, safe for the wire (no URLs, no stacks). */
export function describeFailure(err: unknown): string {
  if (err instanceof UpstreamAuthError || err instanceof UpstreamGone) return err.message;
  if (err instanceof UpstreamProtocolError) return err.code > 0 ? `HTTP ${err.code}` : err.why;
  if (err instanceof UpstreamHttpError) return `HTTP ${err.status}`;
  for (const e of [err, (err as { cause?: unknown } | undefined)?.cause]) {
    const code = (e as { code?: unknown } | undefined)?.code;
    if (code === "EGRESS_REFUSED" || code === "EGRESS_CROSS_ORIGIN_REDIRECT")
      return (e as Error).message || "refused by the egress policy";
    if (code === "ECONNREFUSED") return "connection refused";
    if (typeof code === "string" && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
  }
  if (err instanceof Error && (err.name === "AbortError" || err.name === "RequestAbortedError"))
    return "aborted";
  // Words for an initialize that agreed on no revision Portico speaks.
  const version =
    err instanceof Error && /^Server's protocol version is not supported: (.{1,40})$/.exec(err.message);
  if (version)
    return `it answered initialize with protocol version ${JSON.stringify(version[1])}, which Portico does not speak`;
  if (err instanceof Error && /timed? ?out/i.test(err.message)) return "timed out";
  return "unreachable";
}
