// Listen streams across replicas (basic/patterns/subscriptions, 2026-07-28): changes published on a
// tenant's listen channel reach the streams of every replica once per burst, resourceSubscriptions
// are validated, acknowledged and delivered (sub-resources included), the channel is held only
// while streams are open, and the registry keeps providers' watches on the URIs streams asked for.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import { ListenHub, type Listener } from "../../src/mcp/stateless/listens.js";
import type { SubscriptionFilter } from "../../src/mcp/stateless/listen-wire.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { EMPTY_ENTRIES, type Provider, type ProviderEvents } from "../../src/providers/types.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createStore } from "../../src/store/create-store.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { TenantRegistry } from "../../src/tenants/registry.js";
import { TenantStore } from "../../src/tenants/tenant-store.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const WINDOW_MS = 100;
const quiet = { warn: () => undefined, info: () => undefined } as unknown as FastifyBaseLogger;
const noWatch = () => () => undefined;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until check() holds, for at most 10 s (then the assertions that follow say what is missing). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await sleep(20);
}

/** A listen stream that keeps what it is sent. */
function collector(id: string | number, filter: SubscriptionFilter) {
  const messages: Array<{ method?: string; params?: Record<string, any>; at: number }> = [];
  const ended: string[] = [];
  const listener: Listener = {
    id,
    filter,
    write: (json) => messages.push({ ...(JSON.parse(json) as object), at: Date.now() }),
    end: (finalJson) => ended.push(finalJson ?? ""),
  };
  const of = (method: string) => messages.filter((m) => m.method === method);
  return { listener, messages, ended, of };
}

/** A store that records channel subscriptions and keeps the resync callbacks it is given. */
function spyStore(inner: Store) {
  const log: string[] = [];
  const resyncs: Array<() => void> = [];
  const store = new Proxy(inner, {
    get(target, prop) {
      if (prop === "subscribe")
        return async (channel: string, listener: (m: string) => void, onResync?: () => void) => {
          log.push(`+${channel}`);
          if (onResync) resyncs.push(onResync);
          const unsubscribe = await target.subscribe(channel, listener, onResync);
          return async () => {
            log.push(`-${channel}`);
            await unsubscribe();
          };
        };
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, log, resyncs };
}

describe("fan-out through Redis (two replicas' hubs on one redis-server)", () => {
  // Copies published this close together share a window however slow the machine (a busy one
  // can stall the test process or Redis for hundreds of ms); deliveries are waited for, not slept on.
  const FANOUT_WINDOW_MS = 1000;
  const GAP_MS = 50;
  let stores: Store[];
  let a: ListenHub;
  let b: ListenHub;

  before(async () => {
    const { url } = await getTestRedis();
    const keys = createKeys(uniquePrefix());
    stores = [await createStore({ redisUrl: url }), await createStore({ redisUrl: url })];
    const hub = (store: Store) =>
      new ListenHub({ store, keys, log: quiet, watch: noWatch, coalesceMs: FANOUT_WINDOW_MS });
    a = hub(stores[0]!);
    b = hub(stores[1]!);
  });
  after(async () => {
    a.closeAll();
    b.closeAll();
    await Promise.all(stores.map((s) => s.close()));
  });

  it("copies of one change from every replica reach each stream once, on every replica", async () => {
    const onA = collector(1, { promptsListChanged: true });
    const onB = collector("b", { promptsListChanged: true, toolsListChanged: true });
    const removes = [await a.add("acme", onA.listener), await b.add("acme", onB.listener)];
    const prompts = (l: typeof onA) => l.of("notifications/prompts/list_changed").length;
    // Both registries saw the same admin change and each published it, b a little later.
    a.listChanged("acme", "prompts");
    await sleep(GAP_MS);
    b.listChanged("acme", "prompts");
    await until(() => prompts(onA) >= 1 && prompts(onB) >= 1);
    await sleep(FANOUT_WINDOW_MS / 2); // b's copy, were it not covered, would come GAP_MS later
    assert.equal(prompts(onA), 1);
    assert.equal(prompts(onB), 1);
    assert.equal(onB.of("notifications/tools/list_changed").length, 0, "only what was asked for");
    assert.equal(onA.messages[0]!.params!._meta[SUBSCRIPTION_ID], 1);
    assert.equal(onB.messages[0]!.params!._meta[SUBSCRIPTION_ID], "b");
    // A later change is a new burst: one more notification.
    b.listChanged("acme", "prompts");
    await until(() => prompts(onA) >= 2);
    assert.equal(prompts(onA), 2);
    for (const remove of removes) remove();
  });

  it("a burst gives one notification, sent after the burst's last change", async () => {
    const l = collector(7, { resourcesListChanged: true });
    const remove = await b.add("acme", l.listener);
    const sent = () => l.of("notifications/resources/list_changed");
    a.listChanged("acme", "resources");
    await sleep(GAP_MS);
    const last = Date.now();
    a.listChanged("acme", "resources");
    await until(() => sent().length >= 1);
    await sleep(FANOUT_WINDOW_MS / 2);
    assert.equal(sent().length, 1);
    assert.ok(sent()[0]!.at >= last, "delivered after the last change of the burst");
    remove();
  });

  it("delivers resource updates to the streams subscribed to the URI or a parent of it, on the other replica", async () => {
    const subscribed = collector(3, { resourceSubscriptions: ["file:///project", "x://exact"] });
    const lists = collector(4, { toolsListChanged: true });
    const other = collector(5, { resourceSubscriptions: ["file:///project"] });
    const removes = [
      await b.add("acme", subscribed.listener),
      await b.add("acme", lists.listener),
      await b.add("beta", other.listener),
    ];
    a.resourceUpdated("acme", "file:///project/src/main.rs");
    a.resourceUpdated("acme", "file:///projectile"); // not below file:///project
    a.resourceUpdated("acme", "x://exact");
    a.resourceUpdated("acme", "x://exact"); // a copy from another replica
    const updated = () =>
      subscribed.of("notifications/resources/updated").map((m) => m.params!.uri as string);
    await until(() => updated().length >= 2);
    await sleep(FANOUT_WINDOW_MS / 2); // anything more (a copy, a wrong URI) would have come by now
    assert.deepEqual(updated().sort(), ["file:///project/src/main.rs", "x://exact"]);
    assert.deepEqual(subscribed.messages[0]!.params!._meta, { [SUBSCRIPTION_ID]: 3 });
    assert.equal(lists.messages.length, 0);
    assert.equal(other.messages.length, 0, "another tenant's streams hear nothing");
    for (const remove of removes) remove();
  });
});

describe("the tenant's channel", () => {
  it("is subscribed only while this replica holds a listen stream of the tenant", async () => {
    const keys = createKeys("p");
    const spy = spyStore(new MemoryStore());
    const hub = new ListenHub({ store: spy.store, keys, log: quiet, watch: noWatch, coalesceMs: WINDOW_MS });
    hub.listChanged("acme", "tools"); // publishing needs no subscription
    assert.deepEqual(spy.log, []);
    const first = await hub.add("acme", collector(1, { toolsListChanged: true }).listener);
    const second = await hub.add("acme", collector(2, {}).listener);
    const beta = await hub.add("beta", collector(3, {}).listener);
    assert.deepEqual(spy.log, [`+${keys.listenChannel("acme")}`, `+${keys.listenChannel("beta")}`]);
    first();
    await sleep(10);
    assert.equal(spy.log.length, 2, "still held by the second stream");
    second();
    beta();
    await sleep(10);
    assert.deepEqual(spy.log.slice(2).sort(), [
      `-${keys.listenChannel("acme")}`,
      `-${keys.listenChannel("beta")}`,
    ]);
    assert.equal(hub.open, 0);
  });

  it("after a lost connection, tells each stream that what it asked for may have changed", async () => {
    const spy = spyStore(new MemoryStore());
    const hub = new ListenHub({
      store: spy.store,
      keys: createKeys("p"),
      log: quiet,
      watch: noWatch,
      coalesceMs: 10,
    });
    const l = collector(1, { promptsListChanged: true, resourceSubscriptions: ["u://one"] });
    const remove = await hub.add("acme", l.listener);
    spy.resyncs[0]!();
    await sleep(50);
    assert.deepEqual(l.messages.map((m) => [m.method, m.params!.uri]).sort(), [
      ["notifications/prompts/list_changed", undefined],
      ["notifications/resources/updated", "u://one"],
    ]);
    remove();
  });

  it("asks for a watch per subscribed URI while the stream is open, and ends streams at shutdown", async () => {
    const watched: string[] = [];
    const watch = (tenant: string, uri: string) => {
      watched.push(`+${tenant} ${uri}`);
      return () => watched.push(`-${tenant} ${uri}`);
    };
    const spy = spyStore(new MemoryStore());
    const hub = new ListenHub({ store: spy.store, keys: createKeys("p"), log: quiet, watch });
    const l = collector(9, { resourceSubscriptions: ["u://a", "u://b"] });
    await hub.add("acme", l.listener);
    assert.deepEqual(watched, ["+acme u://a", "+acme u://b"]);
    hub.closeAll();
    assert.deepEqual(watched.slice(2), ["-acme u://a", "-acme u://b"]);
    assert.deepEqual(
      l.ended.map((j) => JSON.parse(j)),
      [{ jsonrpc: "2.0", id: 9, result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: 9 } } }],
    );
    assert.equal(hub.open, 0);
  });

  it("forgets a stream, and its watches, whose client left before the acknowledgement", async () => {
    const watched: string[] = [];
    const watch = (_tenant: string, uri: string) => {
      watched.push(`+${uri}`);
      return () => watched.push(`-${uri}`);
    };
    const hub = new ListenHub({ store: new MemoryStore(), keys: createKeys("p"), log: quiet, watch });
    // The two ways a client can be gone: before the close callback could be registered (the SSE
    // context runs them once, at the close), and while the acknowledgement was being written.
    for (const [connected, uri] of [
      [false, "u://gone-before"],
      [true, "u://gone-during"],
    ] as const) {
      const sse = {
        isConnected: connected,
        keepAlive: () => undefined,
        onClose: () => undefined,
        send: () => Promise.reject(new Error("FST_ERR_SSE_CONNECTION_CLOSED")),
        close: () => undefined,
      };
      const reply = { sse, header: () => reply };
      const request = {
        jsonrpc: "2.0" as const,
        id: 1,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true, resourceSubscriptions: [uri] } },
      };
      await hub.serve("acme", request, reply as never, true);
      assert.equal(hub.open, 0, uri);
    }
    assert.deepEqual(watched, [
      "+u://gone-before",
      "-u://gone-before",
      "+u://gone-during",
      "-u://gone-during",
    ]);
  });
});

/** A provider serving one resource and a template, whose upstream reports what it watches. */
function watchingProvider(id: string, uris: string[]) {
  const log: string[] = [];
  let events: ProviderEvents | undefined;
  const provider = {
    id,
    kind: "mcp",
    prefix: "",
    healthy: true,
    entries: () => ({
      ...EMPTY_ENTRIES,
      resources: uris.map((uri) => ({ uri, name: uri })),
      resourceTemplates: [{ uriTemplate: "tpl://{name}", name: "tpl" }],
    }),
    start: async (e: ProviderEvents) => {
      events = e;
    },
    close: async () => undefined,
    watch: (uri: string) => {
      log.push(`+${uri}`);
      return () => log.push(`-${uri}`);
    },
  } as unknown as Provider;
  return { provider, log, updated: (uri: string) => events?.resourceUpdated?.(uri) };
}

describe("provider watches (registry)", () => {
  const tenant = (uris: string, providers = ["up"]): TenantConfig => ({
    id: "acme",
    auth: "none",
    // The record only tells the registry when to rebuild a provider: the fake ignores it.
    providers: providers.map((id) => ({
      id,
      kind: "static",
      resources: [{ uri: `${uris}`, name: "r", text: "" }],
    })),
  });

  async function registryWith(make: (index: number) => ReturnType<typeof watchingProvider>) {
    const store = new MemoryStore();
    const updates: string[] = [];
    const built: Array<ReturnType<typeof watchingProvider>> = [];
    const registry = new TenantRegistry({
      records: new TenantStore(store, createKeys("p"), new Secrets("0123456789abcdef0123456789abcdef")),
      log: quiet,
      createProvider: (_tenant, index) => {
        const p = make(index);
        built.push(p);
        return p.provider;
      },
      onListChanged: () => undefined,
      onResourceUpdated: (t, uri) => updates.push(`${t} ${uri}`),
    });
    await registry.start();
    return { registry, updates, built, close: () => registry.close() };
  }

  it("counts references: one upstream watch per URI, released with the last stream", async () => {
    const r = await registryWith(() => watchingProvider("up", ["file:///a"]));
    await r.registry.seed(tenant("1"));
    const one = r.registry.watch("acme", "file:///a");
    const two = r.registry.watch("acme", "file:///a");
    const tpl = r.registry.watch("acme", "tpl://x"); // served by a template
    const none = r.registry.watch("acme", "nobody://serves-this");
    const p = r.built[0]!;
    assert.deepEqual(p.log, ["+file:///a", "+tpl://x"]);
    one();
    one();
    assert.deepEqual(p.log, ["+file:///a", "+tpl://x"]);
    two();
    tpl();
    none();
    assert.deepEqual(p.log, ["+file:///a", "+tpl://x", "-file:///a", "-tpl://x"]);
    await r.close();
  });

  it("passes on updates of watched URIs and their sub-resources only", async () => {
    const r = await registryWith(() => watchingProvider("up", ["file:///a"]));
    await r.registry.seed(tenant("1"));
    const release = r.registry.watch("acme", "file:///a");
    const p = r.built[0]!;
    p.updated("file:///a");
    p.updated("file:///a/b.txt");
    p.updated("other://not-asked");
    assert.deepEqual(r.updates, ["acme file:///a", "acme file:///a/b.txt"]);
    release();
    p.updated("file:///a");
    assert.equal(r.updates.length, 2, "nothing once unwatched");
    await r.close();
  });

  it("moves a watch to the provider that serves the URI after a reload", async () => {
    const r = await registryWith(() => watchingProvider("up", ["file:///a"]));
    await r.registry.seed(tenant("1"));
    const release = r.registry.watch("acme", "file:///a");
    await r.registry.seed(tenant("2")); // the record changed: a new provider instance
    const [old, current] = r.built;
    assert.deepEqual(old!.log, ["+file:///a", "-file:///a"]);
    assert.deepEqual(current!.log, ["+file:///a"]);
    old!.updated("file:///a");
    current!.updated("file:///a");
    assert.deepEqual(r.updates, ["acme file:///a"], "the replaced provider is not heard");
    release();
    assert.deepEqual(current!.log, ["+file:///a", "-file:///a"]);
    await r.close();
  });

  it("takes the watch once a provider serving the URI arrives, and releases it when the tenant goes", async () => {
    const r = await registryWith((index) =>
      watchingProvider(index === 0 ? "first" : "later", index === 0 ? [] : ["file:///late"]),
    );
    await r.registry.seed(tenant("1", ["first"]));
    const release = r.registry.watch("acme", "file:///late");
    assert.deepEqual(r.built[0]!.log, []);
    await r.registry.seed(tenant("1", ["first", "later"]));
    assert.deepEqual(r.built[1]!.log, ["+file:///late"]);
    await r.close();
    assert.deepEqual(r.built[1]!.log, ["+file:///late", "-file:///late"]);
    release();
    assert.equal(r.built[1]!.log.length, 2, "released once");
  });
});

/** POSTs a 2026-07-28 subscriptions/listen with request id `id`. */
function postListen(
  url: string,
  id: string,
  notifications: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
        },
        notifications,
      },
    }),
    ...(signal && { signal }),
  });
}

describe("subscriptions/listen with resourceSubscriptions (HTTP)", () => {
  let portico: RunningPortico;
  before(async () => {
    portico = await startPortico({ tenants: [staticTenant("acme")] });
  });
  after(() => portico.close());

  const listen = (notifications: unknown, signal?: AbortSignal) =>
    postListen(portico.mcpUrl("acme"), "l1", notifications, signal);

  it("refuses hostile resourceSubscriptions with -32602 and says why", async () => {
    const cases: Array<[unknown, RegExp]> = [
      ["file:///a", /"resourceSubscriptions" must be an array of at most 100 resource URIs/],
      [Array.from({ length: 101 }, (_, i) => `u://${i}`), /at most 100 resource URIs/],
      [["u://ok", ""], /non-empty strings of at most 2048 characters/],
      [["u://ok", 42], /non-empty strings/],
      [[`u://${"x".repeat(2048)}`], /at most 2048 characters/],
    ];
    for (const [value, message] of cases) {
      const res = await listen({ resourceSubscriptions: value });
      const body = (await res.json()) as { id: unknown; error: { code: number; message: string } };
      assert.equal(body.id, "l1");
      assert.equal(body.error.code, -32602);
      assert.match(body.error.message, message);
    }
    // The list flags are booleans: anything else is refused too, not quietly left out.
    const flag = await listen({ toolsListChanged: "yes" });
    const body = (await flag.json()) as { error: { code: number; message: string } };
    assert.equal(body.error.code, -32602);
    assert.match(body.error.message, /"toolsListChanged" must be true or false/);
  });

  it("acknowledges the URIs (once each) and delivers their updates", async () => {
    const abort = new AbortController();
    const res = await listen(
      { resourceSubscriptions: ["perf://hello", "perf://hello", "u://x"], bogus: 1 },
      abort.signal,
    );
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const next = async (): Promise<Record<string, any>> => {
      while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
      const at = text.indexOf("\n\n");
      const block = text.slice(0, at);
      text = text.slice(at + 2);
      const data = block.split("\n").find((line) => line.startsWith("data:"));
      return data ? (JSON.parse(data.slice(5)) as Record<string, any>) : next();
    };
    const ack = await next();
    assert.equal(ack.method, "notifications/subscriptions/acknowledged");
    assert.deepEqual(ack.params.notifications, { resourceSubscriptions: ["perf://hello", "u://x"] });
    // What app.ts does when the registry turns a provider's update into a tenant-level one.
    portico.listens.resourceUpdated("acme", "perf://hello");
    const updated = await next();
    assert.deepEqual(updated, {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "perf://hello", _meta: { [SUBSCRIPTION_ID]: "l1" } },
    });
    abort.abort();
    await reader.cancel().catch(() => undefined);
  });
});

describe("a listen that reaches a replica shutting down", () => {
  let portico: RunningPortico;
  before(async () => {
    portico = await startPortico({ tenants: [staticTenant("acme")] });
  });
  after(() => portico.close());

  it("is acknowledged and ends at once with its result, so the client listens elsewhere", async () => {
    portico.listens.closeAll();
    const res = await postListen(
      portico.mcpUrl("acme"),
      "late",
      { toolsListChanged: true },
      AbortSignal.timeout(5000),
    );
    assert.equal(res.status, 200);
    const text = await res.text(); // ends: the stream is not held open
    const messages = text
      .split("\n")
      .filter((l) => l.startsWith("data: ") && l.length > 6)
      .map((l) => JSON.parse(l.slice(6)) as { method?: string; id?: string; result?: unknown });
    assert.equal(messages[0]?.method, "notifications/subscriptions/acknowledged");
    assert.equal(messages.at(-1)?.id, "late");
    assert.ok(messages.at(-1)?.result, "its final result");
  });
});
