// Graceful shutdown of a replica (gracefulClose, what main.ts runs on SIGTERM): an official SDK
// client behind a failover (replica A first, B when A refuses) keeps its session: its standalone
// stream ends with a retry hint, it resumes on B with Last-Event-ID, later calls and
// notifications work; a call in flight on A finishes first; the deadline cuts what runs longer;
// even a plain app.close() does not wait out the keep-alive of a connection whose stream ended.
import assert from "node:assert/strict";
import { Agent, createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { gracefulClose } from "../../src/shutdown.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { MCP_HEADERS, openSession, postRpc } from "../support/rpc.js";
import { readEvents } from "../support/sse.js";

// An HTTP tool that answers after the number of milliseconds it is asked to wait.
const arrivals: number[] = [];
const slow = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const { ms } = JSON.parse(Buffer.concat(chunks).toString()) as { ms: number };
    arrivals.push(ms);
    setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(`{"waited":${ms}}`), ms);
  });
});

let prefix: string;
let tenant: TenantConfig;
let a: RunningPortico;
let b: RunningPortico;

before(async () => {
  await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/wait`;
  tenant = {
    id: "acme",
    auth: "none",
    providers: [{ id: "slow", kind: "http", tools: [{ name: "wait", url, timeoutMs: 30_000 }] }],
  };
  prefix = uniquePrefix();
  const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_SSE_RETRY_MS: "200" };
  a = await startPortico({ redisPrefix: prefix, tenants: [tenant], env });
  b = await startPortico({ redisPrefix: prefix, tenants: [tenant], env });
});
after(async () => {
  await b.close();
  slow.close();
});

interface Hit {
  readonly replica: "a" | "b";
  readonly method: string;
  readonly status: number;
  readonly lastEventId: string | null;
}

/** A load balancer in front of A and B: A while it takes connections, then B. */
function failover(hits: Hit[], primary: RunningPortico, secondary: RunningPortico) {
  let primaryDown = false;
  const send = async (replica: "a" | "b", url: URL, init?: RequestInit) => {
    const target = new URL(url);
    target.port = new URL(replica === "a" ? primary.url : secondary.url).port;
    const res = await fetch(target, init);
    const headers = new Headers(init?.headers);
    hits.push({
      replica,
      method: init?.method ?? "GET",
      status: res.status,
      lastEventId: headers.get("last-event-id"),
    });
    return res;
  };
  return async (url: URL, init?: RequestInit): Promise<Response> => {
    if (!primaryDown) {
      try {
        const res = await send("a", url, init);
        // 503 is what a closing Fastify answers on a kept-alive connection: not processed.
        if (res.status !== 503) return res;
        await res.body?.cancel();
      } catch {
        // Connection refused or reset: A is gone.
      }
      primaryDown = true;
    }
    return send("b", url, init);
  };
}

/** One request with Node's client on `agent` (whose connections it keeps, as a balancer does). */
function exchange(
  agent: Agent,
  url: URL,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: init.method ?? "GET", headers: init.headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket }),
      );
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** Resolves with the next notification of `method` after the ones already received. */
async function next(rc: RecordingClient, method: string, seen = rc.notifications.length, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = rc.notifications.slice(seen).find((n) => n.method === method);
    if (found) return found;
    if (Date.now() > deadline) assert.fail(`no new ${method} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it("hands the client's stream to the other replica; its call in flight finishes; its session goes on", async () => {
  const hits: Hit[] = [];
  const rc = await connectClient(a.mcpUrl("acme"), { fetch: failover(hits, a, b) });
  const { client } = rc;
  const adminA = new AdminClient(a.url);
  const adminB = new AdminClient(b.url);

  // The standalone stream is carried by A: a catalog change made there reaches the client.
  let seen = rc.notifications.length;
  await adminA.post("/tenants/acme/providers", { id: "p1", kind: "static", prompts: [p("one")] });
  await next(rc, "notifications/prompts/list_changed", seen);

  const inFlight = client.callTool({ name: "wait", arguments: { ms: 1500 } });
  while (!arrivals.includes(1500)) await new Promise((resolve) => setTimeout(resolve, 10));
  const started = Date.now();
  const report = await gracefulClose(a, 5000);
  assert.deepEqual(report, { forced: false });
  assert.ok(Date.now() - started >= 1000, "close waited for the call in flight");
  const result = await inFlight;
  assert.deepEqual(result.structuredContent, { waited: 1500 }, "the call in flight was answered by A");

  // The client came back through B, resuming its standalone stream from its last event.
  await waitUntil(() => hits.some((h) => h.replica === "b" && h.method === "GET" && h.status === 200));
  const resumed = hits.find((h) => h.replica === "b" && h.method === "GET")!;
  assert.match(resumed.lastEventId ?? "", /^g\.\d+-\d+$/, "resumed with Last-Event-ID");

  const tools = await client.listTools();
  assert.deepEqual(
    tools.tools.map((t) => t.name),
    ["wait"],
  );
  seen = rc.notifications.length;
  await adminB.post("/tenants/acme/providers", { id: "p2", kind: "static", prompts: [p("two")] });
  await next(rc, "notifications/prompts/list_changed", seen);
  const prompts = await client.listPrompts();
  assert.deepEqual(prompts.prompts.map((x) => x.name).sort(), ["one", "two"]);
  assert.ok(
    hits.filter((h) => h.replica === "b" && h.method === "POST").length >= 2,
    "later calls were served by B",
  );
  await client.close();
});

it("cuts what still runs at the deadline, and exits the close promptly", async () => {
  const c = await startPortico({ redisPrefix: prefix, tenants: [tenant] });
  const rc = await connectClient(c.mcpUrl("acme"));
  const call = rc.client.callTool({ name: "wait", arguments: { ms: 20_000 } }).then(
    () => "answered",
    () => "failed",
  );
  while (!arrivals.includes(20_000)) await new Promise((resolve) => setTimeout(resolve, 10));
  const started = Date.now();
  const report = await gracefulClose(c, 300);
  assert.deepEqual(report, { forced: true });
  assert.ok(Date.now() - started < 3000, `closed in ${Date.now() - started} ms`);
  assert.equal(await call, "failed", "the client saw its call cut");
  await rc.client.close().catch(() => undefined);
});

it("ends each SSE stream with a retry field and no event id, so the client resumes from its last one", async () => {
  const d = await startPortico({
    redisPrefix: prefix,
    tenants: [tenant],
    env: { PORTICO_SSE_RETRY_MS: "750" },
  });
  const sid = await openSession(d.mcpUrl("acme"));
  const stream = await fetch(d.mcpUrl("acme"), {
    headers: { accept: "text/event-stream", "mcp-session-id": sid },
  });
  let primed = false;
  const reading = readEvents(stream, () => ((primed = true), false));
  while (!primed) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(await gracefulClose(d, 2000), { forced: false });
  const all = await reading;
  assert.equal(all.length, 2, "the priming event, then the hint");
  assert.match(all[0]!.id ?? "", /^g\./);
  assert.deepEqual(all[1], { data: "", retry: 750 });
});

const p = (name: string) => ({ name, messages: [{ role: "user" as const, text: name }] });

async function waitUntil(check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it("any close, not only the graceful one, releases a kept-alive connection once its call ends", async () => {
  const e = await startPortico({ redisPrefix: prefix, tenants: [tenant] });
  const url = e.mcpUrl("acme");
  const sid = await openSession(url);
  // fetch keeps the connection alive: it goes idle only once the call ends, after the close began.
  const message = {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "wait", arguments: { ms: 300 } },
  };
  const call = postRpc(url, message, sid);
  while (!arrivals.includes(300)) await new Promise((resolve) => setTimeout(resolve, 10));
  const started = Date.now();
  const late = new Promise<string>((resolve) => setTimeout(resolve, 5000, "still closing").unref());
  assert.equal(await Promise.race([e.app.close().then(() => "closed"), late]), "closed");
  assert.ok(Date.now() - started < 2000, `closed in ${Date.now() - started} ms`);
  const answered = await call;
  assert.equal(answered.status, 200, "the call in flight finished");
  assert.match(await answered.text(), /waited/);
});

it("keeps a connection that went idle after the close began for its own grace, so a request sent on it is served", async () => {
  const f = await startPortico({ redisPrefix: prefix, tenants: [tenant] });
  const url = new URL(f.mcpUrl("acme"));
  const sid = await openSession(url.href);
  // One kept-alive connection, as a balancer holds: the call's answer began before the close, so
  // the connection is kept after it, idle from ~600 ms into the close.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const message = {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "wait", arguments: { ms: 600 } },
  };
  const headers = { ...MCP_HEADERS, "mcp-session-id": sid };
  const call = exchange(agent, url, { method: "POST", headers, body: JSON.stringify(message) });
  while (!arrivals.includes(600)) await new Promise((resolve) => setTimeout(resolve, 10));
  const started = Date.now();
  const closed = gracefulClose(f, 5000);
  const answered = await call;
  assert.equal(answered.status, 200);
  assert.match(answered.body, /waited/);
  // Past 1 s into the close, but well under 1 s since the connection went idle.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 1200 - Date.now())));
  const next = await exchange(agent, new URL("/healthz", url));
  assert.equal(next.reused, true, "sent on the connection the call used");
  assert.equal(next.status, 200, "served, not cut");
  assert.equal(next.headers.connection, "close", "and its connection closed after the answer");
  assert.deepEqual(await closed, { forced: false });
  agent.destroy();
});
