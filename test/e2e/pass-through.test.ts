// The pass-through path (docs/performance.md): a plain forwarded result reaches the client as its
// upstream wrote it, under the client's id, and is counted; a result Portico must change, or an
// answer whose envelope could hide other bytes, is serialized again and not counted. Hand-written
// upstreams of each era answer in each shape the SDKs write, and in some they never would; a
// 2026-07-28 client's result keeps the upstream's bytes with Portico's resultType and serverInfo
// written in.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { startRawUpstream, type RawUpstream } from "../support/raw-upstream.js";
import { PORTICO_INFO } from "../../src/protocol/version.js";

/** The result every shape carries; `n` is spelled 1.0, which JSON.stringify would write as 1. */
const RESULT = '{"content":[{"type":"text","text":"done }{\\" ]"}],"n":1.0}';

/** How the upstream writes its answer to tools/call `name` with request id `id`. */
const SHAPES: Record<string, (id: number) => string> = {
  python: (id) => `{"jsonrpc":"2.0","id":${id},"result":${RESULT}}`,
  typescript: (id) => `{"result":${RESULT},"jsonrpc":"2.0","id":${id}}`,
  spaced: (id) => `{"jsonrpc": "2.0", "id": ${id}, "result": ${RESULT}}`,
  twice: (id) => `{"jsonrpc":"2.0","id":${id},"result":{"content":[]},"result":${RESULT}}`,
  link: (id) =>
    `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}}`,
};

let upstream: RawUpstream;
let modern: RawUpstream;
let portico: RunningPortico;

const UPSTREAM_INFO = '{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"},"x":1}';
const PORTICO_META = (meta: string) => {
  const { "io.modelcontextprotocol/serverInfo": _upstream, ...rest } = JSON.parse(meta);
  return { "io.modelcontextprotocol/serverInfo": PORTICO_INFO, ...rest };
};

/** How the 2026-07-28 upstream writes its result to tools/call `name`. */
const MODERN: Record<string, string> = {
  plain: `{"content":[{"type":"text","text":"done }{\\" ]"}],"n":1.0,"resultType":"complete","_meta":${UPSTREAM_INFO}}`,
  spaced: `{ "content" : [] , "_meta" : ${UPSTREAM_INFO} , "n" : 1.0 }`,
  bare: `{"content":[],"n":1.0}`,
  metaTwice: `{"content":[],"_meta":{"x":2},"n":1.0,"_meta":${UPSTREAM_INFO}}`,
  cached: `{"content":[],"n":1.0,"ttlMs":5,"_meta":${UPSTREAM_INFO}}`,
};

before(async () => {
  upstream = await startRawUpstream((m, res) => {
    const answer = (text: string) =>
      void res.writeHead(200, { "content-type": "application/json" }).end(text);
    if (m.method === "initialize")
      return answer(
        JSON.stringify({
          jsonrpc: "2.0",
          id: m.id,
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "raw", version: "1" },
          },
        }),
      );
    if (m.method === "tools/list")
      return answer(
        JSON.stringify({
          jsonrpc: "2.0",
          id: m.id,
          result: { tools: Object.keys(SHAPES).map((name) => ({ name, inputSchema: { type: "object" } })) },
        }),
      );
    if (m.method === "tools/call") {
      const shape = SHAPES[String(m.params?.name)]!(m.id as number);
      if (m.params?.arguments?.sse !== true) return answer(shape);
      const progress = {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: m.params?._meta?.progressToken, progress: 1 },
      };
      return void res
        .writeHead(200, { "content-type": "text/event-stream" })
        .end(`data: ${JSON.stringify(progress)}\n\ndata: ${shape}\n\n`);
    }
    answer(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }));
  });
  modern = await startRawUpstream((m, res) => {
    const answer = (result: string) =>
      void res
        .writeHead(200, { "content-type": "application/json" })
        .end(`{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":${result}}`);
    const meta = `"resultType":"complete","_meta":${UPSTREAM_INFO}`;
    if (m.method === "server/discover")
      return answer(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},${meta}}`);
    if (m.method === "tools/list") {
      const tools = Object.keys(MODERN).map((name) => ({ name, inputSchema: { type: "object" } }));
      return answer(`{"tools":${JSON.stringify(tools)},${meta}}`);
    }
    if (m.method === "tools/call") return answer(MODERN[String(m.params?.name)]!);
    res.writeHead(404).end();
  });
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [{ id: "raw", kind: "mcp", url: upstream.url, prefix: "", era: "session" }],
      },
      {
        id: "modern",
        auth: "none",
        providers: [{ id: "raw", kind: "mcp", url: modern.url, prefix: "", era: "stateless" }],
      },
    ],
  });
});

after(async () => {
  await portico.close();
  await upstream.close();
  await modern.close();
});

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function openSession(version: string, tenant = "acme"): Promise<Record<string, string>> {
  const init = await fetch(portico.mcpUrl(tenant), {
    method: "POST",
    headers: { ...HEADERS, "mcp-protocol-version": version },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
  await init.text();
  const session = {
    ...HEADERS,
    "mcp-protocol-version": version,
    "mcp-session-id": init.headers.get("mcp-session-id")!,
  };
  await fetch(portico.mcpUrl(tenant), {
    method: "POST",
    headers: session,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  return session;
}

/** The body of the response to tools/call `name` (the last SSE event's data when streamed). */
async function call(
  headers: Record<string, string>,
  name: string,
  args: object = {},
  meta?: object,
  tenant = "acme",
): Promise<string> {
  const res = await fetch(portico.mcpUrl(tenant), {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "c-1",
      method: "tools/call",
      params: { name, arguments: args, ...(meta && { _meta: meta }) },
    }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return text;
  return /^data: (.+)$/gm.exec(
    text
      .split("\n\n")
      .filter((e) => e.includes('"id":"c-1"'))
      .at(-1)!,
  )![1]!;
}

async function passedThrough(era = "session"): Promise<number> {
  const text = await (await fetch(`${portico.url}/metrics`)).text();
  const line = new RegExp(
    `^portico_mcp_results_passed_through_total\\{method="tools/call",era="${era}"\\} (\\d+)$`,
    "m",
  ).exec(text);
  return Number(line?.[1] ?? 0);
}

/** tools/call `name` from a 2026-07-28 client. */
function callModern(name: string, tenant = "modern"): Promise<string> {
  return call(
    { ...HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
    name,
    {},
    {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
    },
    tenant,
  );
}

describe("a forwarded result passed through", () => {
  for (const shape of ["python", "typescript"])
    it(`${shape}'s envelope: the client gets the upstream's bytes under its own id, counted`, async () => {
      const session = await openSession("2025-11-25");
      const before = await passedThrough();
      assert.equal(await call(session, shape), `{"jsonrpc":"2.0","id":"c-1","result":${RESULT}}`);
      assert.equal(await passedThrough(), before + 1);
    });

  it("a result after progress on an SSE answer is passed through too", async () => {
    const session = await openSession("2025-11-25");
    const before = await passedThrough();
    assert.equal(
      await call(session, "python", { sse: true }, { progressToken: "p" }),
      `{"jsonrpc":"2.0","id":"c-1","result":${RESULT}}`,
    );
    assert.equal(await passedThrough(), before + 1);
  });

  const serialized: Array<[string, string]> = [
    ["a spaced-out envelope", "spaced"],
    ["a result member written twice (the last one is the result, and only it is sent)", "twice"],
  ];
  for (const [what, shape] of serialized)
    it(`${what}: serialized again, not counted`, async () => {
      const session = await openSession("2025-11-25");
      const before = await passedThrough();
      const body = await call(session, shape);
      assert.equal(body, JSON.stringify({ jsonrpc: "2.0", id: "c-1", result: JSON.parse(RESULT) }));
      assert.equal(await passedThrough(), before);
    });

  it("a result an older client cannot read is down-levelled, not passed through", async () => {
    const session = await openSession("2024-11-05");
    const before = await passedThrough();
    const result = JSON.parse(await call(session, "link")).result;
    assert.equal(result.content[0].type, "text");
    assert.equal(await passedThrough(), before);
  });

  it("a 2026-07-28 client's result keeps the upstream's bytes, with resultType and serverInfo written in", async () => {
    const before = await passedThrough("stateless");
    const meta = JSON.stringify({ "io.modelcontextprotocol/serverInfo": PORTICO_INFO });
    assert.equal(
      await callModern("python", "acme"),
      `{"jsonrpc":"2.0","id":"c-1","result":${RESULT.slice(0, -1)},"resultType":"complete","_meta":${meta}}}`,
    );
    assert.equal(await passedThrough("stateless"), before + 1);
  });
});

describe("a 2026-07-28 upstream's result passed through", () => {
  it("keeps the upstream's bytes, its serverInfo replaced by Portico's in place, counted", async () => {
    const before = await passedThrough("stateless");
    const body = await callModern("plain");
    const meta = JSON.stringify(PORTICO_META(UPSTREAM_INFO));
    assert.equal(body, `{"jsonrpc":"2.0","id":"c-1","result":${MODERN.plain!.replace(UPSTREAM_INFO, meta)}}`);
    assert.equal(await passedThrough("stateless"), before + 1);
  });

  it("a result spaced out, or lacking resultType and _meta, is written in place too", async () => {
    const meta = JSON.stringify(PORTICO_META(UPSTREAM_INFO));
    assert.equal(
      await callModern("spaced"),
      `{"jsonrpc":"2.0","id":"c-1","result":${MODERN.spaced!.replace(UPSTREAM_INFO, meta).slice(0, -1)},"resultType":"complete"}}`,
    );
    const portico = JSON.stringify({ "io.modelcontextprotocol/serverInfo": PORTICO_INFO });
    assert.equal(
      await callModern("bare"),
      `{"jsonrpc":"2.0","id":"c-1","result":{"content":[],"n":1.0,"resultType":"complete","_meta":${portico}}}`,
    );
  });

  const serialized: Array<[string, string, (result: Record<string, any>) => void]> = [
    [
      "_meta written twice (the last one counts, and is the one replaced)",
      "metaTwice",
      (r) => assert.deepEqual(r._meta, PORTICO_META(UPSTREAM_INFO)),
    ],
    ["cache hints on a tools/call result (dropped)", "cached", (r) => assert.equal(r.ttlMs, undefined)],
  ];
  for (const [what, name, check] of serialized)
    it(`${what}: serialized again, not counted`, async () => {
      const before = await passedThrough("stateless");
      const body = await callModern(name);
      const result = JSON.parse(body).result;
      assert.equal(body, JSON.stringify({ jsonrpc: "2.0", id: "c-1", result }));
      assert.equal(result.resultType, "complete");
      check(result);
      assert.equal(await passedThrough("stateless"), before);
    });

  it("a session-era client's result is shaped for its era (no resultType), not passed through", async () => {
    const session = await openSession("2025-11-25", "modern");
    const before = await passedThrough();
    const result = JSON.parse(await call(session, "plain", {}, undefined, "modern")).result;
    assert.equal(result.resultType, undefined);
    assert.deepEqual(result._meta, { x: 1 });
    assert.equal(await passedThrough(), before);
  });
});
