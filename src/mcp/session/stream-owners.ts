// Requests whose replica died mid-call (docs/architecture.md §4): a request stream's event log
// starts with a marker naming the replica running the request and the request's id, so a client
// resuming the stream on another replica (basic/transports "Resumability and Redelivery") is
// answered PORTICO_ERR_MCP_REQUEST_INTERRUPTED once that replica's heartbeat expires unanswered, or,
// where the operator allows it, has an idempotent tool call run again there. A request run again
// is marked as the survivor's own, without its params: should that replica die too, the next one
// answers the interrupted error instead of running it a third time.
import type { FastifyBaseLogger } from "fastify";
import {
  toErrorResponse,
  type RequestId,
  type RpcRequest,
  type RpcResponse,
} from "../../protocol/jsonrpc.js";
import type { ReplicaLiveness } from "../../store/replicas.js";
import type { TenantRuntime } from "../../tenants/runtime.js";
import type { Session } from "../session-record.js";
import type { StreamHub } from "./streams.js";
import { interrupted } from "../interrupted.js";

/** Who runs the request of a request stream; `params` of a tools/call a survivor may run again. */
export interface StreamOwner {
  readonly replica: string;
  readonly requestId: RequestId;
  readonly params?: Record<string, unknown>;
}

/** Runs a request to its response, its related messages going to `send` (SessionLane.run). */
export type RunRequest = (
  request: RpcRequest,
  send: (json: string) => Promise<void>,
) => Promise<RpcResponse | undefined>;

/** Reads a request stream's owner marker (`@<replica> <JSON>`); undefined when absent. */
export function parseOwner(data: string | undefined): StreamOwner | undefined {
  const m = data === undefined ? null : /^@([A-Za-z0-9_-]{1,32}) (.+)$/s.exec(data);
  if (!m) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(m[2]!);
  } catch {
    return undefined;
  }
  if (typeof value === "string" || typeof value === "number") return { replica: m[1]!, requestId: value };
  const { id, params } = (value ?? {}) as { id?: unknown; params?: unknown };
  if ((typeof id !== "string" && typeof id !== "number") || typeof params !== "object" || params === null)
    return undefined;
  return { replica: m[1]!, requestId: id, params: params as Record<string, unknown> };
}

export class StreamOwners {
  constructor(
    private readonly hub: StreamHub,
    private readonly liveness: ReplicaLiveness,
    private readonly log: FastifyBaseLogger,
    /** PORTICO_RERUN_INTERRUPTED_IDEMPOTENT_CALLS. */
    private readonly rerun = false,
  ) {}

  /**
   * The marker a request stream run here starts its log with: the request's id, and for a
   * tools/call its params too when a survivor may run it again.
   */
  marker(request: RpcRequest): string {
    const { id, method, params } = request;
    const rerunnable = this.rerun && method === "tools/call" && params !== undefined;
    return `@${this.liveness.id} ${JSON.stringify(rerunnable ? { id, params } : id)}`;
  }

  /**
   * Watches the replica running the request of a stream resumed here: once it is gone, the
   * stream ends with its logged response, the request run again here (`run`, when allowed), or
   * the interrupted error. Stop with the returned function.
   */
  guard(
    tenant: TenantRuntime,
    session: Session,
    resumed: { streamId: string; entryId: string },
    owner: StreamOwner | undefined,
    run: RunRequest,
  ): () => void {
    if (!owner || owner.replica === this.liveness.id) return () => undefined;
    const t = tenant.config.id;
    const { streamId, entryId } = resumed;
    let stopped = false;
    const answer = () => {
      if (stopped) return;
      stopped = true;
      const orphan = { tenant: t, owner: owner.replica };
      void this.hub
        .answerOrphan(t, session.id, streamId, entryId, async () => {
          const emit = (json: string) => this.hub.emit(t, session.id, streamId, json).then(() => undefined);
          if (await this.#mayRerun(tenant, session, owner)) {
            // One replica runs it again, even when two resumed the stream at once.
            const marker = `@${this.liveness.id} ${JSON.stringify(owner.requestId)}`;
            if (!(await this.hub.remark(t, session.id, streamId, marker))) return;
            this.log.warn(orphan, "request interrupted: its replica is gone; running it again here");
            const request: RpcRequest = {
              jsonrpc: "2.0",
              id: owner.requestId,
              method: "tools/call",
              params: owner.params,
            };
            const response = await run(request, emit);
            if (response) await emit(JSON.stringify(response));
            return;
          }
          this.log.warn(orphan, "request interrupted: its replica is gone");
          await emit(JSON.stringify(toErrorResponse(owner.requestId, interrupted())));
        })
        .catch((err: unknown) => this.log.warn({ err }, "could not answer a request whose replica is gone"));
    };
    const unwatch = this.liveness.watch(owner.replica, answer);
    // Asked at once: a resumption after the death is answered without waiting for the next look.
    void this.liveness.isAlive(owner.replica).catch(() => undefined);
    return () => {
      stopped = true;
      unwatch();
    };
  }

  /** A tools/call whose tool says it is read-only or idempotent, and the operator allows it. */
  async #mayRerun(tenant: TenantRuntime, session: Session, owner: StreamOwner): Promise<boolean> {
    if (!this.rerun || !owner.params || typeof owner.params.name !== "string") return false;
    const catalog = await tenant.catalogFor(session.profile);
    const annotations = catalog.tools.find((tool) => tool.name === owner.params!.name)?.annotations;
    return annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
  }
}
