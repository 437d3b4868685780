// For a session-era local client of a 2026-07-28 server (docs/connect.md): the list-changed and
// resource-updated notifications it would get on its session come from one subscriptions/listen
// stream (basic/patterns/subscriptions), opened again when it ends or when the set of watched
// resources changes.
import { META } from "../protocol/era.js";
import { isRecord } from "../protocol/jsonrpc.js";
import { describe } from "./connect-error.js";
import { readMessages, type HttpPeer } from "./http-peer.js";
import type { LocalSink } from "./session-relay.js";
import { statelessHeaders } from "./stateless-headers.js";

const RECONNECT_MS = 1000;

type Json = Record<string, unknown>;

export class ListenStream {
  readonly #watched = new Set<string>();
  #capabilities: Json | undefined;
  #abort: AbortController | undefined;
  #stopped = false;

  constructor(
    private readonly peer: HttpPeer,
    private readonly local: LocalSink,
    private readonly log: (line: string) => void,
    private readonly meta: () => Json,
  ) {}

  /** Starts listening for what the server's capabilities say it announces. */
  start(capabilities: Json): void {
    this.#capabilities = capabilities;
    this.#restart();
  }

  /** Adds or removes a resource URI (resources/subscribe, resources/unsubscribe). */
  watch(uri: string, on: boolean): void {
    if (on === this.#watched.has(uri)) return;
    if (on) this.#watched.add(uri);
    else this.#watched.delete(uri);
    if (this.#capabilities) this.#restart();
  }

  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
  }

  #filter(): Json | undefined {
    const caps = this.#capabilities ?? {};
    const changes = (name: string) => isRecord(caps[name]) && (caps[name] as Json).listChanged === true;
    const filter: Json = {
      ...(changes("tools") && { toolsListChanged: true }),
      ...(changes("prompts") && { promptsListChanged: true }),
      ...(changes("resources") && { resourcesListChanged: true }),
      ...(this.#watched.size > 0 && { resourceSubscriptions: [...this.#watched] }),
    };
    return Object.keys(filter).length > 0 ? filter : undefined;
  }

  #restart(): void {
    this.#abort?.abort();
    const filter = this.#filter();
    if (this.#stopped || filter === undefined) return;
    const abort = new AbortController();
    this.#abort = abort;
    void this.#run(filter, abort.signal);
  }

  async #run(filter: Json, signal: AbortSignal): Promise<void> {
    const params = { notifications: filter, _meta: this.meta() };
    while (!signal.aborted && !this.#stopped) {
      try {
        const response = await this.peer.send(
          "POST",
          statelessHeaders("subscriptions/listen", params),
          JSON.stringify({ jsonrpc: "2.0", id: "listen", method: "subscriptions/listen", params }),
          signal,
        );
        await readMessages(response, (m) => {
          if (!isRecord(m) || typeof m.method !== "string" || "id" in m) return;
          if (m.method === "notifications/subscriptions/acknowledged") return;
          this.local.send(withoutSubscriptionId(m));
        });
      } catch (err) {
        if (signal.aborted || this.#stopped) return;
        this.log(`the server's notification stream broke: ${describe(err)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS).unref());
    }
  }
}

/** A notification as a session-era client knows it: no subscription id in `_meta`. */
function withoutSubscriptionId(m: Json): Json {
  const params = isRecord(m.params) ? m.params : undefined;
  if (!params || !isRecord(params._meta) || !(META.subscriptionId in params._meta)) return m;
  const { [META.subscriptionId]: _id, ...meta } = params._meta;
  const { _meta: _old, ...rest } = params;
  return { ...m, params: Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest };
}
