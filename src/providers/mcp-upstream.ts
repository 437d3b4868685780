// Talking to one upstream MCP server with the official SDK client: opening clients (fresh or on a
// stored upstream session), listing every page, and turning upstream failures into gateway errors.
import { AsyncLocalStorage } from "node:async_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { fail, PorticoError } from "../errors.js";
import { isStatelessVersion } from "../protocol/era.js";
import { PORTICO_INFO } from "../version.js";
import type { Fetch } from "../egress/fetch.js";
import type { McpProviderConfig } from "./config.js";
import type { Deadline } from "./deadline.js";
import type { CallContext } from "./types.js";
import { authorizedFetch, UpstreamAuthError, type UpstreamCredentials } from "./upstream-auth.js";

/** An upstream call in progress: the client request it serves, and its deadline. */
export interface UpstreamCall {
  readonly ctx: CallContext;
  readonly deadline: Deadline;
}

/**
 * The client request on whose behalf an upstream call runs. Messages the upstream sends on that
 * call's stream (logs, sampling, elicitation, roots) run in the same async context, so handlers
 * find the request to relay them to; messages from the upstream's GET stream find none.
 */
export const callScope = new AsyncLocalStorage<UpstreamCall>();

export interface OpenOptions {
  readonly capabilities: ClientCapabilities;
  /** Resume this upstream session instead of initializing a new one. */
  readonly resume?: { sessionId: string; protocolVersion: string };
  readonly clientName?: string;
  readonly setup?: (client: Client) => void;
}

/**
 * Portico relays tool results as the upstream sent them: the client at the end checks them against
 * the tool's outputSchema. Validating here too would cost an Ajv instance per upstream client
 * (the SDK's default) and could turn a result the client would accept into an error.
 */
const PASS_THROUGH: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** Connects a client; the GET stream it may open belongs to no client request. */
/** An upstream and how to reach it. */
export interface UpstreamTarget {
  readonly cfg: McpProviderConfig;
  /** A fetch bound to the egress policy. */
  readonly fetch: Fetch;
  /** The provider's `auth`, shared by all its clients (one token per provider and process). */
  readonly credentials: UpstreamCredentials;
  readonly timeoutMs: number;
}

export async function openClient(target: UpstreamTarget, opts: OpenOptions): Promise<Client> {
  const { cfg, timeoutMs } = target;
  const client = new Client(
    { ...PORTICO_INFO, ...(opts.clientName ? { title: `via portico: ${opts.clientName}` } : {}) },
    { capabilities: opts.capabilities, jsonSchemaValidator: PASS_THROUGH },
  );
  opts.setup?.(client);
  const transport = new StreamableHTTPClientTransport(new URL(cfg.url), {
    // Adds the Authorization header of `auth` and retries once with a new token after a 401.
    fetch: authorizedFetch(target.fetch, target.credentials),
    requestInit: { headers: { ...cfg.headers } },
    sessionId: opts.resume?.sessionId,
    reconnectionOptions: {
      initialReconnectionDelay: 1000,
      maxReconnectionDelay: 30000,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 2,
    },
  });
  if (opts.resume) transport.setProtocolVersion(opts.resume.protocolVersion);
  await callScope.exit(() => client.connect(transport, { timeout: Math.min(timeoutMs, 10_000) }));
  return client;
}

/** The upstream session a client holds, as stored for other replicas: "<sessionId> <version>". */
export function sessionRecord(client: Client): string | undefined {
  const transport = client.transport as StreamableHTTPClientTransport | undefined;
  const sid = transport?.sessionId;
  return sid ? `${sid} ${transport.protocolVersion ?? "2025-03-26"}` : undefined;
}

export function parseSessionRecord(
  raw: string | null,
): { sessionId: string; protocolVersion: string } | undefined {
  if (!raw) return undefined;
  const [sessionId, protocolVersion] = raw.split(" ");
  return sessionId && protocolVersion ? { sessionId, protocolVersion } : undefined;
}

/** Every page of a list. */
export async function listAll<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await fetchPage(cursor);
    all.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return all;
}

/** True when the upstream forgot our session (transports: 404 means re-initialize). */
export function isSessionExpired(err: unknown): boolean {
  return err instanceof StreamableHTTPError && err.code === 404;
}

/** A JSON-RPC error the upstream answered with, as Portico relays it (relayedError); else undefined. */
export function upstreamRpcError(
  err: unknown,
  providerId: string,
  clientVersion: string,
): PorticoError | McpError | undefined {
  if (!(err instanceof McpError)) return undefined;
  // The SDK reports its own timeout as an McpError too; say whose it was.
  if (err.code === -32001)
    return fail("PORTICO_ERR_PROVIDER_TIMEOUT", `Provider '${providerId}' did not answer in time`);
  return relayedError(err, providerId, clientVersion);
}

/** MCP's own codes (basic/index §Error Codes) and the revision each means something in. */
const MCP_RESERVED = { first: -32099, last: -32020 } as const;
const MISSING_CAPABILITY = -32021;
/**
 * Codes that speak of the request Portico made upstream (its JSON, its envelope, the method, its
 * headers, its version), never of what the client asked: the provider failed the client.
 */
const ABOUT_PORTICOS_REQUEST: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32020, -32022]);
/** URL elicitation required: defined in 2025-11-25 only. */
export const URL_ELICITATION_REQUIRED = -32042;

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
): PorticoError | McpError {
  const message = err.message.replace(/^MCP error -?\d+: /, "");
  const { code } = err;
  if (ABOUT_PORTICOS_REQUEST.has(code))
    return fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${providerId}' refused the request (its error ${code}: ${message})`,
    );
  // The range is reserved from 2026-07-28 on: older revisions' clients get an upstream's code as is.
  const reserved =
    code >= MCP_RESERVED.first && code <= MCP_RESERVED.last && isStatelessVersion(clientVersion);
  const defined =
    code === MISSING_CAPABILITY || (code === URL_ELICITATION_REQUIRED && clientVersion === "2025-11-25");
  if (reserved && !defined)
    return fail(
      "PORTICO_ERR_PROVIDER_FAILED",
      `Provider '${providerId}' failed (its error ${code}: ${message})`,
    );
  return Object.assign(new McpError(code, message, err.data), { message });
}

/**
 * An upstream answer that breaks the transport's rules (not JSON-RPC, a stream without the
 * response, an oversized message). Its message is Portico's own words, safe for the wire.
 */
export class UpstreamProtocolError extends StreamableHTTPError {
  /** The words alone, without the SDK's "Streamable HTTP error: " prefix. */
  readonly why: string;

  constructor(code: number, why: string) {
    super(code, why);
    this.why = why;
  }
}

/** Words for a transport failure, safe for the wire (no URLs, no stacks). */
export function describeFailure(err: unknown): string {
  if (err instanceof UpstreamAuthError) return err.message;
  if (err instanceof UpstreamProtocolError && (err.code ?? 0) <= 0) return err.why;
  if (err instanceof StreamableHTTPError)
    return (err.code ?? 0) > 0 ? `HTTP ${err.code}` : "unexpected response";
  const cause = (err as { cause?: { code?: unknown; message?: string } } | undefined)?.cause;
  if (cause?.code === "EGRESS_REFUSED") return cause.message ?? "refused by the egress policy";
  if (typeof cause?.code === "string")
    return cause.code === "ECONNREFUSED" ? "connection refused" : cause.code;
  if (err instanceof Error && err.name === "AbortError") return "aborted";
  // The SDK client's words when initialize agreed on no revision it speaks.
  const version =
    err instanceof Error && /^Server's protocol version is not supported: (.{1,40})$/.exec(err.message);
  if (version)
    return `it answered initialize with protocol version ${JSON.stringify(version[1])}, which Portico does not speak`;
  if (err instanceof Error && /timed? ?out/i.test(err.message)) return "timed out";
  return "unreachable";
}
