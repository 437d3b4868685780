// subscriptions/listen streams this replica holds (basic/patterns/subscriptions, 2026-07-28): each
// asked for some change notifications; each gets only those, tagged with its subscription id (the
// id of its listen request). List changes reach every replica's registry on their own (admin
// changes are announced through the store, upstream changes reach each replica's upstream client),
// so each replica tells the streams it holds.
import type { FastifyReply } from "fastify";
import { fail } from "../errors.js";
import type { ListChangeKind } from "../providers/types.js";
import type { RequestId, RpcRequest } from "./jsonrpc.js";
import { META } from "./era.js";

/** What a listen stream opted in to (SubscriptionFilter). */
export interface SubscriptionFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
}

export interface Listener {
  readonly id: RequestId;
  readonly filter: SubscriptionFilter;
  /** Writes one message on the stream. */
  write(json: string): void;
  /** Ends the stream: with a final response when the server ends it (shutdown). */
  end(finalJson?: string): void;
}

const FLAG: Readonly<Record<ListChangeKind, keyof SubscriptionFilter>> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
};

export class ListenHub {
  readonly #byTenant = new Map<string, Set<Listener>>();

  get open(): number {
    let n = 0;
    for (const set of this.#byTenant.values()) n += set.size;
    return n;
  }

  /** subscriptions/listen: the acknowledgement first, then the asked-for notifications until closed. */
  async serve(tenant: string, request: RpcRequest, reply: FastifyReply, canStream: boolean): Promise<void> {
    if (!canStream)
      throw fail(
        "PORTICO_ERR_MCP_NOT_ACCEPTABLE",
        "Not Acceptable: subscriptions/listen answers with a stream; accept text/event-stream",
      );
    const asked = request.params?.notifications;
    if (typeof asked !== "object" || asked === null || Array.isArray(asked))
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", 'subscriptions/listen needs "notifications" (an object)');
    const filter = honoured(asked as Record<string, unknown>);
    const id = request.id;
    const sse = reply.sse;
    reply.header("x-accel-buffering", "no");
    sse.keepAlive();
    await sse.send({
      data: notification("notifications/subscriptions/acknowledged", id, { notifications: filter }),
    });
    const write = (json: string) => {
      if (sse.isConnected) sse.send({ data: json }).catch(() => undefined);
    };
    const remove = this.add(tenant, {
      id,
      filter,
      write,
      end: (finalJson) => {
        if (finalJson !== undefined) write(finalJson);
        sse.close();
      },
    });
    sse.onClose(remove);
    if (!sse.isConnected) remove();
  }

  /** Registers a stream; the returned function removes it. */
  add(tenant: string, listener: Listener): () => void {
    let set = this.#byTenant.get(tenant);
    if (!set) this.#byTenant.set(tenant, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#byTenant.get(tenant) === set) this.#byTenant.delete(tenant);
    };
  }

  /** A list of the tenant changed: tell the streams that asked. */
  listChanged(tenant: string, kind: ListChangeKind): void {
    const flag = FLAG[kind];
    for (const l of this.#byTenant.get(tenant) ?? [])
      if (l.filter[flag] === true) l.write(notification(`notifications/${kind}/list_changed`, l.id, {}));
  }

  /** A resource of the tenant changed: tell the streams subscribed to its URI. */
  resourceUpdated(tenant: string, uri: string): void {
    for (const l of this.#byTenant.get(tenant) ?? [])
      if (l.filter.resourceSubscriptions?.includes(uri))
        l.write(notification("notifications/resources/updated", l.id, { uri }));
  }

  /** Ends every stream with its final response (shutdown), so clients know to listen elsewhere. */
  closeAll(): void {
    for (const set of this.#byTenant.values()) for (const l of set) l.end(JSON.stringify(listenResult(l.id)));
    this.#byTenant.clear();
  }
}

/** A notification on a listen stream, tagged with its subscription id. */
export function notification(method: string, id: RequestId, params: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method,
    params: { ...params, _meta: { [META.subscriptionId]: id } },
  });
}

/** The response that ends a listen stream gracefully. */
export function listenResult(id: RequestId) {
  return { jsonrpc: "2.0", id, result: { resultType: "complete", _meta: { [META.subscriptionId]: id } } };
}

/** The part of a filter Portico honours: list changes always; resource updates not yet. */
function honoured(asked: Record<string, unknown>): SubscriptionFilter {
  const out: Record<string, boolean> = {};
  for (const flag of ["toolsListChanged", "promptsListChanged", "resourcesListChanged"])
    if (asked[flag] === true) out[flag] = true;
  return out;
}
