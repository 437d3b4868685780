// Task records in the store (docs/storage.md `task:<id>`, docs/upstream-mcp.md#tasks): one JSON
// record per task, bound to its tenant, virtual server and caller, written by compare-and-set so
// that a cancellation, a completion and a take-over on different replicas never undo each other;
// a caller's index (tasks/list) and the live-task caps beside it.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../protocol/errors.js";
import type { TaskState, TaskStatus, UpstreamTaskRef } from "../providers/types.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

/** What a task's call was, so that any replica can report it, reach it, or (idempotent) run it again. */
export interface TaskCall {
  /** The tool's name as the caller called it (a prefix or a virtual server's rename included). */
  readonly tool: string;
  readonly provider: string;
  /** The provider's own name of the tool. */
  readonly name: string;
  /** The arguments, kept only when the call may be run again (idempotent, and allowed). */
  readonly args?: Record<string, unknown>;
  readonly sessionId?: string;
  readonly user?: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
}

/** How a task ended: the call's result, or the JSON-RPC error tasks/result answers. */
export type TaskOutcome =
  | { readonly result: Record<string, unknown> }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

/** A request the call made of the client, waiting for tasks/result to carry it (input_required). */
export interface TaskInput {
  readonly seq: number;
  readonly method: string;
  readonly params: Record<string, unknown> | undefined;
}

export interface TaskRecord {
  readonly id: string;
  readonly tenant: string;
  readonly server?: string;
  /** The caller it is bound to: `p:<hash>` (a user), or `s:<session>` on a tenant without auth. */
  readonly owner: string;
  /** Whom the live-task caps count it against when not the owner (TaskCaller.counted). */
  readonly counted?: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** Epoch ms after which the task is gone. */
  readonly expiresAt: number;
  /** The replica running it (a gateway-made task) or that started it (an upstream's). */
  readonly replica: string;
  readonly call: TaskCall;
  /** Present when the upstream runs the task itself (pass-through). */
  readonly ref?: UpstreamTaskRef;
  readonly outcome?: TaskOutcome;
  readonly input?: TaskInput;
  /**
   * The last request for input's sequence number: a re-run on another replica numbers on from it,
   * so the 2026-07-28 form's inputRequests keys are unique over the task's life.
   */
  readonly inputSeq?: number;
  /**
   * A pass-through task whose upstream asks on its tasks/result stream, for a 2026-07-28 client:
   * the replica holding that stream open to turn its requests into inputRequests.
   */
  readonly relay?: string;
}

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

/** The task as the wire shows it (2025-11-25 `Task`). */
export function taskState(record: TaskRecord): TaskState {
  return {
    taskId: record.id,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttl: record.ttlMs,
    pollInterval: record.pollIntervalMs,
  };
}

export interface TaskCaps {
  readonly perCaller: number;
  readonly perTenant: number;
}

/** Entries whose score passed that one sweep drops, at most. */
const SWEEP = 200;
/** Tasks one tasks/list looks at, at most (pages of the newest). */
export const MAX_LISTED = 1000;

/** What the store tells of tasks as it writes them (metrics). */
export interface TaskStoreEvents {
  /** A task reached a terminal status: told by the write that ended it, so once across replicas. */
  readonly ended?: (record: TaskRecord) => void;
  /** A new task was refused at a cap. */
  readonly refused?: (tenant: string) => void;
}

export class TaskStore {
  /**
   * `ttlMaxMs`: the longest a task lives. The index and cap sets outlive each task they hold by
   * getting that long again at every task added, so a caller who stops making tasks leaves no key
   * behind.
   */
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly ttlMaxMs: number,
    private readonly now: () => number = Date.now,
    private readonly events: TaskStoreEvents = {},
  ) {}

  /** Writes a new task, refused with PORTICO_ERR_MCP_TOO_MANY_TASKS past either cap. */
  async create(record: TaskRecord, caps: TaskCaps): Promise<void> {
    const { tenant, id } = record;
    const mine = this.keys.liveTasks(tenant, record.counted ?? record.owner);
    const all = this.keys.liveTasks(tenant, undefined);
    await Promise.all([this.#sweep(mine), this.#sweep(all)]);
    // Added first, counted after: of two creations racing for the last place, neither passes.
    await Promise.all([
      this.store.sortedAdd(mine, id, record.expiresAt),
      this.store.sortedAdd(all, id, record.expiresAt),
    ]);
    const [n, total] = await Promise.all([this.store.sortedCount(mine), this.store.sortedCount(all)]);
    if (n > caps.perCaller || total > caps.perTenant) {
      await Promise.all([this.store.sortedRemove(mine, id), this.store.sortedRemove(all, id)]);
      const which =
        n > caps.perCaller
          ? `this caller has ${caps.perCaller} live tasks, the most it may have`
          : `this tenant has ${caps.perTenant} live tasks, the most it may have`;
      this.events.refused?.(tenant);
      throw fail(
        "PORTICO_ERR_MCP_TOO_MANY_TASKS",
        `Too many tasks: ${which}; wait for one to end or cancel one (tasks/cancel)`,
        { retryAfterSeconds: Math.ceil(record.pollIntervalMs / 1000) },
      );
    }
    // Only a user's tasks are listed (tasks/list is not offered without authentication): no index else.
    const listed = record.owner.startsWith("p:");
    const index = this.keys.callerTasks(tenant, listOwner(record.owner, record.server));
    await Promise.all([
      this.store.set(this.keys.task(tenant, id), JSON.stringify(record), {
        ttlSeconds: secondsLeft(record, this.now()),
        onlyIfAbsent: true,
      }),
      listed && this.store.sortedAdd(index, id, record.expiresAt),
    ]);
    const keep = Math.ceil(this.ttlMaxMs / 1000) + 60;
    await Promise.all((listed ? [mine, all, index] : [mine, all]).map((key) => this.store.expire(key, keep)));
  }

  /** The task, or undefined when it does not exist or expired. */
  async read(tenant: string, id: string): Promise<TaskRecord | undefined> {
    return this.#parse(await this.store.get(this.keys.task(tenant, id)));
  }

  /**
   * Applies `change` to the task by compare-and-set, again on a conflict; `change` returns
   * undefined to leave it. Resolves with the task as it is after (undefined: gone).
   */
  async update(
    tenant: string,
    id: string,
    change: (record: TaskRecord) => TaskRecord | undefined,
  ): Promise<TaskRecord | undefined> {
    const key = this.keys.task(tenant, id);
    for (let attempt = 0; attempt < 20; attempt++) {
      const raw = await this.store.get(key);
      const record = this.#parse(raw);
      if (!record) return undefined;
      const next = change(record);
      if (!next) return record;
      const updated = { ...next, lastUpdatedAt: new Date(this.now()).toISOString() };
      if (!(await this.store.compareAndSet(key, raw, JSON.stringify(updated)))) continue;
      // A compare-and-set writes the value without its TTL: given back at once.
      await this.store.expire(key, secondsLeft(updated, this.now()));
      if (isTerminal(updated.status) && !isTerminal(record.status)) {
        this.events.ended?.(updated);
        await this.#ended(updated);
      }
      return updated;
    }
    throw fail("PORTICO_ERR_MCP_INTERNAL", "Internal error: the task changed too often to update");
  }

  /** A caller's tasks, oldest first, from `offset`; `more` when there are others after. */
  async list(
    tenant: string,
    server: string | undefined,
    owner: string,
    offset: number,
    limit: number,
  ): Promise<{ tasks: TaskRecord[]; more: boolean }> {
    const index = this.keys.callerTasks(tenant, listOwner(owner, server));
    await this.#sweep(index);
    const ids = await this.store.sortedUpTo(
      index,
      Number.MAX_SAFE_INTEGER,
      Math.min(offset + limit + 1, MAX_LISTED),
    );
    const page = ids.slice(offset, offset + limit);
    const records = await Promise.all(page.map((id) => this.read(tenant, id)));
    return {
      tasks: records.filter(
        (r): r is TaskRecord => r !== undefined && r.owner === owner && r.server === server,
      ),
      more: ids.length > offset + limit,
    };
  }

  /** Drops an ended task from the live-task caps. */
  async #ended(record: TaskRecord): Promise<void> {
    await Promise.all([
      this.store.sortedRemove(this.keys.liveTasks(record.tenant, record.counted ?? record.owner), record.id),
      this.store.sortedRemove(this.keys.liveTasks(record.tenant, undefined), record.id),
    ]);
  }

  /** Removes members whose score (an expiry) has passed. */
  async #sweep(key: string): Promise<void> {
    const gone = await this.store.sortedUpTo(key, this.now(), SWEEP);
    await Promise.all(gone.map((id) => this.store.sortedRemove(key, id)));
  }

  #parse(raw: string | null): TaskRecord | undefined {
    if (raw === null) return undefined;
    const record = JSON.parse(raw) as TaskRecord;
    return record.expiresAt > this.now() ? record : undefined;
  }
}

/** Whose list a task is in: its caller's, at the URL it was made (a virtual server's tasks apart). */
function listOwner(owner: string, server: string | undefined): string {
  return server === undefined ? owner : `${owner}/${server}`;
}

function secondsLeft(record: TaskRecord, now: number): number {
  return Math.max(1, Math.ceil((record.expiresAt - now) / 1000));
}
