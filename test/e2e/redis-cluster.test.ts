// Two Portico replicas on a real Redis Cluster (three masters; docs/operations.md "Redis") share
// what they share on one Redis: a session opened on one is served by the other, and what travels
// by pub/sub reaches the other replica — a provider change made through the admin API, and the end
// of a session, which closes its stream there.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { Redis } from "ioredis";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { getTestRedisCluster } from "../support/redis-cluster.js";
import { openSession, postRpc } from "../support/rpc.js";
import { readEvents, type SseEvent } from "../support/sse.js";

let a: RunningPortico;
let b: RunningPortico;
let admin: AdminClient;
/** A plain connection to each node of the cluster. */
let nodes: Redis[];

before(async () => {
  const { url } = await getTestRedisCluster();
  const env = {
    PORTICO_REDIS_URL: url,
    PORTICO_REDIS_CLUSTER: "true",
    PORTICO_REDIS_KEY_PREFIX: uniquePrefix(),
    PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
  };
  const tenants = [staticTenant("acme")];
  [a, b] = await Promise.all([startPortico({ tenants, env }), startPortico({ tenants, env })]);
  admin = new AdminClient(a.url);
  nodes = url.split(",").map((node) => new Redis(node));
});
after(async () => {
  await Promise.all([a.close(), b.close(), ...nodes.map((node) => node.quit())]);
});

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const rpc = async (replica: RunningPortico, sid: string, id: number, method: string, params = {}) => {
  const res = await postRpc(replica.mcpUrl("acme"), { jsonrpc: "2.0", id, method, params }, sid);
  return { status: res.status, body: (await res.json()) as { result?: any; error?: { message: string } } };
};

/**
 * Opens the session's standalone stream on `replica` and resolves once that replica listens on the
 * session's channel (a cluster node counts its own subscribers only, so every node is asked).
 */
async function openStream(replica: RunningPortico, sid: string) {
  const abort = new AbortController();
  const res = await fetch(replica.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
    signal: abort.signal,
  });
  assert.equal(res.status, 200);
  let events: SseEvent[] = [];
  const ended = readEvents(res, (seen) => {
    events = seen;
    return false;
  });
  const channel = replica.keys.sessionChannel("acme", sid);
  await eventually("the replica listens on the session's channel", async () => {
    const counts = await Promise.all(nodes.map((node) => node.pubsub("NUMSUB", channel)));
    return counts.some((reply) => (reply as [string, number])[1] > 0);
  });
  return {
    events: () => events,
    /** Resolves true when the server ended the stream, false when abort() did. */
    ended: ended.then(
      () => true,
      () => false,
    ),
    abort: () => abort.abort(),
  };
}

it("serves on one replica a session opened on the other", async () => {
  const sid = await openSession(a.mcpUrl("acme"));
  const prompt = await rpc(b, sid, 1, "prompts/get", { name: "code-review", arguments: { language: "go" } });
  assert.equal(prompt.status, 200);
  assert.deepEqual(prompt.body.result.messages, [
    { role: "user", content: { type: "text", text: "Review this go code." } },
  ]);
  const read = await rpc(a, sid, 2, "resources/read", { uri: "perf://hello" });
  assert.equal(read.body.result.contents[0].text, "hello");
});

it("a provider added through one replica is served by the other, whose open stream hears list_changed", async () => {
  const sid = await openSession(a.mcpUrl("acme"));
  const stream = await openStream(b, sid);
  const added = await admin.post("/tenants/acme/providers", {
    id: "extra",
    kind: "static",
    prompts: [{ name: "one", messages: [{ role: "user", text: "one" }] }],
  });
  assert.equal(added.status, 201);
  await eventually("list_changed on the other replica's stream", () =>
    stream.events().some((e) => e.data.includes("notifications/prompts/list_changed")),
  );
  const listed = await rpc(b, sid, 3, "prompts/list");
  assert.deepEqual(listed.body.result.prompts.map((p: { name: string }) => p.name).sort(), [
    "code-review",
    "one",
  ]);
  stream.abort();
  await stream.ended;
});

it("a session ended through the admin API on one replica closes its stream on the other, which then answers 404", async () => {
  const sid = await openSession(a.mcpUrl("acme"));
  const stream = await openStream(b, sid);
  const ended = await admin.delete(`/tenants/acme/sessions/${sid}`);
  assert.equal(ended.status, 204);
  const timeout = setTimeout(() => stream.abort(), 5000);
  assert.equal(await stream.ended, true, "the stream on the other replica closed");
  clearTimeout(timeout);
  const after = await postRpc(b.mcpUrl("acme"), { jsonrpc: "2.0", id: 5, method: "ping" }, sid);
  assert.equal(after.status, 404);
});
