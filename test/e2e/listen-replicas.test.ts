// Listen streams (2026-07-28) on two Portico replicas sharing one Redis: an admin change made
// through one replica, which both replicas' registries observe and publish, reaches the listeners on
// both exactly once; a resource update raised on one replica reaches the subscribed listeners on both.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { Redis } from "ioredis";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
// Both replicas announce an admin change; a busy machine may hear the second copy well after the
// first, so the listen streams gather copies for a second (PORTICO_LISTEN_COALESCE_MS).
const COALESCE_MS = "1000";
/** Longer than the coalescing window: time for any duplicate to show. */
const SETTLE_MS = 1500;

let a: RunningPortico;
let b: RunningPortico;

before(async () => {
  const prefix = uniquePrefix();
  const opts = {
    redisPrefix: prefix,
    tenants: [staticTenant("acme")],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_LISTEN_COALESCE_MS: COALESCE_MS },
  };
  a = await startPortico(opts);
  b = await startPortico(opts);
});
after(async () => {
  await Promise.all([a.close(), b.close()]);
});

interface Stream {
  readonly messages: Array<Record<string, any>>;
  /** Resolves once `count` messages arrived. */
  until(count: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens a listen stream and keeps reading it in the background. */
async function listen(replica: RunningPortico, id: string, notifications: object): Promise<Stream> {
  const abort = new AbortController();
  const res = await fetch(replica.mcpUrl("acme"), {
    method: "POST",
    signal: abort.signal,
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
  });
  assert.equal(res.status, 200);
  const messages: Array<Record<string, any>> = [];
  const reading = (async () => {
    let text = "";
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      let at: number;
      while ((at = text.indexOf("\n\n")) >= 0) {
        const data = text
          .slice(0, at)
          .split("\n")
          .find((line) => line.startsWith("data:"));
        text = text.slice(at + 2);
        if (data) messages.push(JSON.parse(data.slice(5)) as Record<string, any>);
      }
    }
  })().catch(() => undefined);
  const until = async (count: number, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    while (messages.length < count) {
      if (Date.now() > deadline)
        assert.fail(`expected ${count} messages on ${id}, got ${JSON.stringify(messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await until(1); // the acknowledgement: the replica is subscribed from now on
  return {
    messages,
    until,
    close: () => {
      abort.abort();
      void reading;
    },
  };
}

const methods = (s: Stream) => s.messages.map((m) => m.method as string);

it("an admin change reaches the listeners on both replicas once", async () => {
  const filter = { promptsListChanged: true, toolsListChanged: true };
  const onA = await listen(a, "on-a", filter);
  const onB = await listen(b, "on-b", filter);
  const changed = await new AdminClient(a.url).patch("/tenants/acme/providers/docs", { prompts: [] });
  assert.equal(changed.status, 200);
  await Promise.all([onA.until(2), onB.until(2)]);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  for (const [s, id] of [
    [onA, "on-a"],
    [onB, "on-b"],
  ] as const) {
    assert.deepEqual(methods(s), [
      "notifications/subscriptions/acknowledged",
      "notifications/prompts/list_changed",
    ]);
    assert.equal(s.messages[1]!.params._meta[SUBSCRIPTION_ID], id);
  }
  onA.close();
  onB.close();
});

it("a resource update raised on one replica reaches the subscribed listeners on both", async () => {
  const onA = await listen(a, "ra", { resourceSubscriptions: ["perf://hello"] });
  const onB = await listen(b, "rb", { resourceSubscriptions: ["perf://hello"] });
  const lists = await listen(b, "lists", { resourcesListChanged: true });
  // What app.ts does with a provider's update, as the registry reports it on replica a.
  a.listens.resourceUpdated("acme", "perf://hello");
  await Promise.all([onA.until(2), onB.until(2)]);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  for (const s of [onA, onB]) {
    assert.deepEqual(methods(s), [
      "notifications/subscriptions/acknowledged",
      "notifications/resources/updated",
    ]);
    assert.equal(s.messages[1]!.params.uri, "perf://hello");
  }
  assert.deepEqual(methods(lists), ["notifications/subscriptions/acknowledged"]);
  for (const s of [onA, onB, lists]) s.close();
});

it("the listen channel is held only while a replica has listeners of the tenant", async () => {
  const channel = b.keys.listenChannel("acme");
  const subscribers = async () => {
    const redis = new Redis((await getTestRedis()).url);
    try {
      return Number(((await redis.pubsub("NUMSUB", channel)) as [string, number])[1]);
    } finally {
      redis.disconnect();
    }
  };
  /** Until nobody holds the channel (a closed stream's unsubscribe takes a moment, more on a busy machine). */
  const released = async (what: string) => {
    const deadline = Date.now() + 5000;
    while ((await subscribers()) !== 0) {
      assert.ok(Date.now() < deadline, what);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await released("the earlier tests' streams unsubscribed");
  const s = await listen(b, "held", { toolsListChanged: true });
  assert.equal(await subscribers(), 1);
  s.close();
  await released("unsubscribed once the stream closed");
});
