// One request's work turned into its JSON-RPC answer, the same way on both lanes: the result, an
// error response (logging only the unexpected errors), or nothing when the request was cancelled
// meanwhile (nobody listens for it). Each answer is counted by method, era and outcome.
import type { FastifyBaseLogger } from "fastify";
import { served } from "../tracing/spans.js";
import type { McpEra, McpOutcome, Metrics } from "../metrics/metrics.js";
import type { Cancellation } from "./cancellation.js";
import {
  isExpectedError,
  resultResponse,
  toErrorResponse,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.js";

export interface AnswerScope {
  readonly era: McpEra;
  readonly tenant: string;
  readonly metrics: Metrics;
  readonly log: FastifyBaseLogger;
  /** The session's id and protocol version, for the request's span (tracing/spans.ts). */
  readonly session?: string;
  readonly protocolVersion?: string;
}

/**
 * Runs `work` for `request`; undefined when `cancellation` fired before it settled. With tracing on,
 * in the request's MCP span (docs/operations.md "Tracing").
 */
export function answer(
  request: RpcRequest,
  cancellation: Cancellation,
  work: () => Promise<Record<string, unknown>>,
  scope: AnswerScope,
): Promise<RpcResponse | undefined> {
  return served(
    request,
    { tenant: scope.tenant, session: scope.session, protocolVersion: scope.protocolVersion },
    () => answered(request, cancellation, work, scope),
    (response) => response,
  );
}

async function answered(
  request: RpcRequest,
  cancellation: Cancellation,
  work: () => Promise<Record<string, unknown>>,
  scope: AnswerScope,
): Promise<RpcResponse | undefined> {
  const started = performance.now();
  let outcome: McpOutcome = "error";
  try {
    const result = await work();
    outcome = cancellation.aborted ? "cancelled" : "ok";
    return cancellation.aborted ? undefined : resultResponse(request.id, result);
  } catch (err) {
    if (cancellation.aborted) {
      outcome = "cancelled";
      return undefined;
    }
    if (!isExpectedError(err))
      scope.log.error({ err, method: request.method, tenant: scope.tenant }, "request failed");
    return toErrorResponse(request.id, err, scope.era);
  } finally {
    scope.metrics.mcpRequest(request.method, scope.era, outcome, (performance.now() - started) / 1000);
  }
}

/**
 * Resolves on the event loop's next turn. Both lanes write an answer there, never from inside the
 * read callback that produced it (the client's request, or the upstream's answer): the answers of
 * one poll phase are then written together after it. Written from inside, a static read cost about
 * as much again as serving it (bench run I), and a forwarded call ≈ 40 % more of Portico's CPU
 * (run R, docs/performance.md).
 */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
