// Bridging between the eras (docs/protocol-eras.md, docs/upstream-mcp.md): 2026-07-28 input
// requests (MRTR) asked of session-era clients, an upstream's -32042 URL rounds for 2026-07-28
// clients, results shaped for the client's revision, and progress and logs relayed to the call.
import { McpError, type ClientCapabilities, type CompleteResult } from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../../protocol/errors.js";
import { RpcCode } from "../../protocol/codes.js";
import { INPUT_METHODS, mayAsk, missingCapability } from "../../protocol/input-requests.js";
import { isLogLevel } from "../../protocol/log-levels.js";
import { URL_ELICITATION_REQUIRED } from "./upstream.js";
import type { CallContext } from "../types.js";

export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * An upstream's InputRequiredResult as a 2026-07-28 client may get it: only sampling, elicitation
 * and roots requests, each of a capability the request declared (basic/patterns/mrtr); the
 * upstream saw those capabilities, so asking beyond them is its failure, answered -32021.
 */
export function relayable(
  result: Record<string, unknown>,
  ctx: CallContext,
  providerId: string,
): Record<string, unknown> {
  const requests = objectOf(result.inputRequests) ?? {};
  tooMany(requests, providerId);
  let missing: ClientCapabilities | undefined;
  for (const request of Object.values(requests)) {
    const { method, params } = objectOf(request) ?? {};
    if (typeof method !== "string" || !INPUT_METHODS.has(method))
      throw fail(
        "PORTICO_ERR_PROVIDER_UNAVAILABLE",
        `Provider '${providerId}' asked the client for ${typeof method === "string" ? method : "something without a method"}, which is not an input request`,
      );
    const lacking = missingCapability(method, objectOf(params), ctx.clientCapabilities);
    if (lacking) missing = mergeCapabilities(missing, lacking);
  }
  if (Object.keys(requests).length === 0)
    throw fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${providerId}' asked for input without input requests`,
    );
  if (missing)
    throw fail(
      "PORTICO_ERR_MCP_MISSING_CAPABILITY",
      `This request needs the client capabilities ${JSON.stringify(missing)}; declare them in _meta`,
      { requiredCapabilities: missing },
    );
  return result;
}

/** The most input requests one round may hold (docs/security.md "Hostile upstreams"). */
export const MAX_INPUT_REQUESTS = 32;

function tooMany(requests: object, providerId: string): void {
  const count = Object.keys(requests).length;
  if (count > MAX_INPUT_REQUESTS)
    throw fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${providerId}' asked for ${count} inputs at once (at most ${MAX_INPUT_REQUESTS})`,
    );
}

/**
 * Asks a session-era client the questions of an InputRequiredResult, all at once: at most
 * MAX_INPUT_REQUESTS, each an input request of a capability the client declared (the upstream
 * saw them), checked before any is asked.
 */
export async function askClient(
  requests: unknown,
  ctx: CallContext,
  providerId: string,
): Promise<Record<string, unknown>> {
  const asked = objectOf(requests) ?? {};
  tooMany(asked, providerId);
  const entries = Object.entries(asked).map(([key, r]): [string, string, Record<string, unknown>] => {
    const { method, params } = objectOf(r) ?? {};
    if (typeof method !== "string" || !mayAsk(method, objectOf(params), ctx.clientCapabilities))
      throw fail(
        "PORTICO_ERR_PROVIDER_UNAVAILABLE",
        `Provider '${providerId}' asked the client for ${typeof method === "string" ? method.slice(0, 64) : "input without a method"}, which it cannot be asked`,
      );
    return [key, method, objectOf(params) ?? {}];
  });
  const answers = await Promise.all(entries.map(([, method, params]) => ctx.request(method, params)));
  return Object.fromEntries(entries.map(([key], i) => [key, answers[i]]));
}

export const NO_COMPLETIONS: CompleteResult = Object.freeze({ completion: Object.freeze({ values: [] }) });

/** Portico asks every 2026-07-28 upstream for progress; the client's request decides whether it is relayed. */
export const PROGRESS_TOKEN = "portico";
export const MAX_INPUT_ROUNDS = 10;

/**
 * What follows an upstream's input_required in round `rounds`: for a 2026-07-28 client that answers
 * itself (ctx.mrtr), the result to relay as it is; else the next round's params, the answers of the
 * session-era client asked (at most MAX_INPUT_ROUNDS rounds).
 */
export async function nextRound(
  result: Record<string, unknown>,
  rounds: number,
  ctx: CallContext,
  providerId: string,
): Promise<{ readonly relay: Record<string, unknown> } | { readonly round: Record<string, unknown> }> {
  if (ctx.mrtr) return { relay: relayable(result, ctx, providerId) };
  if (rounds >= MAX_INPUT_ROUNDS)
    throw fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Provider '${providerId}' still asked for input after ${MAX_INPUT_ROUNDS} rounds`,
    );
  const round: Record<string, unknown> = {
    inputResponses: await askClient(result.inputRequests, ctx, providerId),
  };
  if (typeof result.requestState === "string") round.requestState = result.requestState;
  return { round };
}
export const UNSUPPORTED_VERSION = RpcCode.UnsupportedProtocolVersion;

/** Progress and log messages of an upstream request, to the client request it serves. */
export function relayNotification(ctx: CallContext, method: string, p: Record<string, unknown>): void {
  if (method === "notifications/progress" && typeof p.progress === "number")
    ctx.progress(
      p.progress,
      typeof p.total === "number" ? p.total : undefined,
      typeof p.message === "string" ? p.message : undefined,
    );
  else if (method === "notifications/message" && isLogLevel(p.level))
    ctx.log(p.level, p.data, typeof p.logger === "string" ? p.logger : undefined);
}

/** requiredCapabilities of several input requests in one object. */
export function mergeCapabilities(
  a: ClientCapabilities | undefined,
  b: ClientCapabilities,
): ClientCapabilities {
  const out: Record<string, Record<string, unknown>> = { ...(a as Record<string, Record<string, unknown>>) };
  for (const [name, value] of Object.entries(b)) out[name] = { ...out[name], ...(value as object) };
  return out;
}

/**
 * A session-era upstream's -32042 (URL elicitation required, 2025-11-25) for a 2026-07-28 client:
 * the URLs to visit become URL-mode input requests, and the client's retry calls the upstream
 * again, as -32042 asks. Nothing is held: the upstream call is over.
 */
export function urlElicitationRound(
  err: unknown,
  ctx: CallContext,
  providerId: string,
): Record<string, unknown> | undefined {
  if (!(err instanceof McpError) || err.code !== URL_ELICITATION_REQUIRED) return undefined;
  const data = objectOf(err.data);
  const elicitations = Array.isArray(data?.elicitations) ? data.elicitations : [];
  tooMany(elicitations, providerId);
  const inputRequests: Record<string, unknown> = {};
  for (const [i, e] of elicitations.entries()) {
    const { url, message } = objectOf(e) ?? {};
    if (typeof url !== "string") continue;
    const params = { mode: "url", url, message: typeof message === "string" ? message : "" };
    inputRequests[`${URL_ROUND_KEY}${i + 1}`] = { method: "elicitation/create", params };
  }
  if (Object.keys(inputRequests).length === 0) return undefined;
  if (missingCapability("elicitation/create", { mode: "url" }, ctx.clientCapabilities))
    throw fail(
      "PORTICO_ERR_MCP_MISSING_CAPABILITY",
      "The upstream needs the user to open a URL first (URL-mode elicitation); declare elicitation.url in _meta",
      { requiredCapabilities: { elicitation: { url: {} } } },
    );
  return { resultType: "input_required", inputRequests };
}

const URL_ROUND_KEY = "elicitation-url-";

/** The action of a retry's answer to a URL round that is not "accept": the user did not go there. */
export function declinedUrl(ctx: CallContext): string | undefined {
  const responses = ctx.mrtr?.inputResponses;
  if (!responses) return undefined;
  for (const [key, answer] of Object.entries(responses)) {
    if (!key.startsWith(URL_ROUND_KEY)) continue;
    const action = objectOf(answer)?.action;
    if (action !== "accept") return typeof action === "string" ? action : "no answer";
  }
  return undefined;
}

export function definedOf(mrtr: NonNullable<CallContext["mrtr"]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (mrtr.inputResponses !== undefined) out.inputResponses = mrtr.inputResponses;
  if (mrtr.requestState !== undefined) out.requestState = mrtr.requestState;
  return out;
}

/** A 2026-07-28 result for a session-era client: without the fields that revision added. */
export function sessionShaped(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = result;
  const meta = rest._meta;
  if (typeof meta === "object" && meta !== null && SERVER_INFO in meta) {
    const { [SERVER_INFO]: _s, ...others } = meta as Record<string, unknown>;
    if (Object.keys(others).length > 0) rest._meta = others;
    else delete rest._meta;
  }
  return rest;
}

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** JSON text back to a value; undefined when a redaction left it unreadable. */
export function parsed(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
