// Requests whose replica died mid-call (docs/architecture.md §4): a request stream's event log
// starts with a marker naming the replica running the request and the request's id, so a client
// resuming the stream on another replica (basic/transports "Resumability and Redelivery") is
// answered PORTICO_ERR_MCP_REQUEST_INTERRUPTED once that replica's heartbeat expires unanswered.
import type { FastifyBaseLogger } from "fastify";
import { fail, type PorticoError } from "../errors.js";
import { toErrorResponse, type RequestId } from "../protocol/jsonrpc.js";
import type { ReplicaLiveness } from "../store/replicas.js";
import type { StreamHub } from "./streams.js";

/** Who runs the request of a request stream. */
export interface StreamOwner {
  readonly replica: string;
  readonly requestId: RequestId;
}

/** The error a request gets when the replica running it is gone; `data` says the outcome is unknown. */
export function interrupted(): PorticoError {
  return fail(
    "PORTICO_ERR_MCP_REQUEST_INTERRUPTED",
    "Request interrupted: the gateway replica running it stopped before answering; the work may or may not have completed, so check before sending it again",
    { interrupted: true, completed: "unknown" },
  );
}

/** Reads a request stream's owner marker (`@<replica> <request id as JSON>`); undefined when absent. */
export function parseOwner(data: string | undefined): StreamOwner | undefined {
  const m = data === undefined ? null : /^@([A-Za-z0-9_-]{1,32}) (.+)$/.exec(data);
  if (!m) return undefined;
  try {
    const requestId: unknown = JSON.parse(m[2]!);
    return typeof requestId === "string" || typeof requestId === "number"
      ? { replica: m[1]!, requestId }
      : undefined;
  } catch {
    return undefined;
  }
}

export class StreamOwners {
  constructor(
    private readonly hub: StreamHub,
    private readonly liveness: ReplicaLiveness,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The marker a request stream run here starts its log with. */
  marker(requestId: RequestId): string {
    return `@${this.liveness.id} ${JSON.stringify(requestId)}`;
  }

  /**
   * Watches the replica running the request of a stream resumed here: once it is gone, the
   * stream ends with its logged response or the interrupted error. Stop with the returned function.
   */
  guard(
    tenant: string,
    sid: string,
    resumed: { streamId: string; entryId: string },
    owner: StreamOwner | undefined,
  ): () => void {
    const { streamId, entryId } = resumed;
    if (!owner || owner.replica === this.liveness.id) return () => undefined;
    let stopped = false;
    const answer = () => {
      if (stopped) return;
      stopped = true;
      const json = JSON.stringify(toErrorResponse(owner.requestId, interrupted()));
      void this.hub.answerOrphan(tenant, sid, streamId, entryId, json).then(
        (answered) =>
          answered &&
          this.log.warn({ tenant, owner: owner.replica }, "request interrupted: its replica is gone"),
        (err: unknown) => this.log.warn({ err }, "could not answer a request whose replica is gone"),
      );
    };
    const unwatch = this.liveness.watch(owner.replica, answer);
    // Asked at once: a resumption after the death is answered without waiting for the next look.
    void this.liveness.isAlive(owner.replica).catch(() => undefined);
    return () => {
      stopped = true;
      unwatch();
    };
  }
}
