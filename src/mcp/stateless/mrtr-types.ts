// The shapes a multi round-trip request is served with (basic/patterns/mrtr, 2026-07-28): the
// request as the rounds see it, what a retry brings, and what Mrtr (mrtr.ts) depends on.
import type { Keys } from "../../store/keys.js";
import type { ReplicaLiveness } from "../../store/replicas.js";
import type { Store } from "../../store/store.js";
import type { RpcRequest } from "../../protocol/jsonrpc.js";
import type { CallRun, RoundMeta } from "./call-run.js";
import type { RequestStates } from "./request-state.js";

/** What a retry brings for the provider of a pass-through round. */
export interface RetryInput {
  readonly inputResponses?: Record<string, unknown>;
  /** The upstream's own requestState, unsealed. */
  readonly requestState?: string;
}

/** The request being served, as the rounds see it. */
export interface RoundCall {
  readonly tenant: string;
  /** The virtual server it came to (docs/architecture.md §8): its state opens only there. */
  readonly server?: string | undefined;
  readonly principal: string;
  /** The user (`sub`) when authenticated, else undefined: whose held calls this one counts against. */
  readonly user?: string | undefined;
  /** The client's connection (its address is read only if the call is held). */
  readonly peer?: { readonly ip: string };
  readonly request: RpcRequest;
  /** What the request's _meta says: its progress token, log level and capabilities. */
  readonly meta: RoundMeta;
  /** Writes a progress or log message on the request's response stream. */
  send(json: string): void;
  /** Runs `listener` if the client closes the response stream before its answer. */
  onClose(listener: () => void): void;
}

/** Starts a call's work: builds its context around the run and calls the handler. */
export type StartCall = (run: CallRun, retry: RetryInput) => Promise<Record<string, unknown>>;

export interface MrtrDeps {
  readonly states: RequestStates;
  readonly store: Store;
  readonly keys: Keys;
  /** How long a held call waits for its retry (PORTICO_INPUT_TIMEOUT_SECONDS). */
  readonly timeoutSeconds: number;
  /** How many calls of one tenant this replica holds at once (PORTICO_MAX_HELD_CALLS). */
  readonly maxHeldPerTenant?: number;
  /** How many of them one user may hold (PORTICO_MAX_HELD_CALLS_PER_PRINCIPAL); 0 or absent: no cap. */
  readonly maxHeldPerPrincipal?: number;
  /** How many one client address may hold on a tenant without auth (PORTICO_MAX_HELD_CALLS_PER_ADDRESS). */
  readonly maxHeldPerAddress?: number;
  /** Replica heartbeats: a retry of a call held by a replica that died is answered at once. */
  readonly liveness?: ReplicaLiveness;
}
