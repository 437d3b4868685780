// The test balancer keeps nginx's promises (`proxy_next_upstream error`, no retry of a request
// once sent): a refused connection moves the request to the next backend, a backend whose
// readiness probe fails is skipped, and a POST that reached a backend which then failed is not
// sent to another.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { startBalancer } from "./balancer.js";
import { freePort } from "./redis.js";

const received: Array<{ server: string; method: string; body: string }> = [];
let ready = true;

function backend(name: string, behaviour: "answer" | "reset"): Server {
  return createServer((req, res) => {
    if (req.url === "/readyz") return void res.writeHead(ready || name !== "b" ? 200 : 503).end();
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push({ server: name, method: req.method ?? "", body });
      if (behaviour === "reset") return void req.socket.destroy();
      res.writeHead(200, { "content-type": "text/plain" }).end(`${name}:${body}`);
    });
  });
}

const servers = { b: backend("b", "answer"), c: backend("c", "answer"), r: backend("r", "reset") };
const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

before(async () => {
  for (const s of Object.values(servers))
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
});
after(() => {
  for (const s of Object.values(servers)) s.close();
});

it("moves a request whose connection was refused to the next backend, body and all", async () => {
  const balancer = await startBalancer();
  balancer.use([`http://127.0.0.1:${await freePort()}`, url(servers.b)]);
  const answers = await Promise.all(
    [1, 2, 3, 4].map(async (n) => (await fetch(balancer.url, { method: "POST", body: `m${n}` })).text()),
  );
  assert.deepEqual(answers.sort(), ["b:m1", "b:m2", "b:m3", "b:m4"]);
  assert.ok(balancer.routed.some((r) => r.refusedBy.includes(0) && r.backend === 1));
  await balancer.close();
});

it("skips a backend whose readiness probe fails, and takes it back once it passes", async () => {
  const balancer = await startBalancer(0, { readinessPath: "/readyz", pollMs: 50 });
  balancer.use([url(servers.b), url(servers.c)]);
  ready = false;
  while (balancer.ready(0)) await new Promise((resolve) => setTimeout(resolve, 20));
  const answers = await Promise.all([1, 2, 3, 4].map(async () => (await fetch(balancer.url)).text()));
  assert.deepEqual(answers, ["c:", "c:", "c:", "c:"]);
  ready = true;
  while (!balancer.ready(0)) await new Promise((resolve) => setTimeout(resolve, 20));
  const later = await Promise.all([1, 2].map(async () => (await fetch(balancer.url)).text()));
  assert.deepEqual(later.sort(), ["b:", "c:"]);
  await balancer.close();
});

it("never sends a POST twice: a backend failing after it received the request fails the request", async () => {
  const balancer = await startBalancer();
  balancer.use([url(servers.r), url(servers.b)]);
  received.length = 0;
  const first = await fetch(balancer.url, { method: "POST", body: "once" }).then(
    (r) => r.status,
    () => "failed",
  );
  assert.equal(first, "failed");
  assert.deepEqual(
    received.map((r) => r.server),
    ["r"],
    "the request reached r only",
  );
  await balancer.close();
});
