// An `http` provider through Portico, as an MCP client sees it: arguments POSTed as JSON with the
// configured headers, JSON replies as structuredContent, failures as tool errors.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let portico: RunningPortico;
let seen: { headers: IncomingHttpHeaders; body: string } | undefined;
const weather = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    seen = { headers: req.headers, body: Buffer.concat(chunks).toString() };
    if (req.url === "/broken")
      return void res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway upstream");
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ city: "Rome", celsius: 21 }));
  });
});

before(async () => {
  await new Promise<void>((resolve) => weather.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(weather.address() as AddressInfo).port}`;
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [
          {
            id: "wx",
            kind: "http",
            tools: [
              {
                name: "get_weather",
                url: `${base}/weather`,
                headers: { "x-api-key": "k-123" },
                timeoutMs: 2000,
              },
              { name: "broken", url: `${base}/broken` },
            ],
          },
        ],
      },
    ],
  });
});
after(async () => {
  await portico.close();
  weather.close();
});

it("POSTs the arguments with the configured headers and returns structured content", async () => {
  const { client } = await connectClient(portico.mcpUrl("acme"));
  const result = await client.callTool({ name: "get_weather", arguments: { city: "Rome" } });
  assert.deepEqual(result.structuredContent, { city: "Rome", celsius: 21 });
  assert.equal(seen?.headers["x-api-key"], "k-123");
  assert.deepEqual(JSON.parse(seen.body), { city: "Rome" });
  assert.equal(seen?.headers.authorization, undefined, "no client credential goes upstream");
  const broken = await client.callTool({ name: "broken" });
  assert.equal(broken.isError, true);
  assert.match(JSON.stringify(broken.content), /502/);
  await client.close();
});

it("answers /healthz and /readyz", async () => {
  assert.equal((await fetch(`${portico.url}/healthz`)).status, 200);
  const ready = await fetch(`${portico.url}/readyz`);
  assert.equal(ready.status, 200);
  assert.equal(((await ready.json()) as { store: string }).store, "memory");
});
