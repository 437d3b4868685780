// The pass-through path (docs/performance.md): a plain forwarded result reaches the client as its
// upstream wrote it, under the client's id, and is counted; a result Portico must change, or an
// answer whose envelope could hide other bytes, is serialized again and not counted. A hand-written
// session-era upstream answers in each shape the SDKs write, and in some they never would.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { startRawUpstream, type RawUpstream } from "../support/raw-upstream.js";

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
let portico: RunningPortico;

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
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        providers: [{ id: "raw", kind: "mcp", url: upstream.url, prefix: "", era: "session" }],
      },
    ],
  });
});

after(async () => {
  await portico.close();
  await upstream.close();
});

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function openSession(version: string): Promise<Record<string, string>> {
  const init = await fetch(portico.mcpUrl("acme"), {
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
  await fetch(portico.mcpUrl("acme"), {
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
): Promise<string> {
  const res = await fetch(portico.mcpUrl("acme"), {
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

async function passedThrough(): Promise<number> {
  const text = await (await fetch(`${portico.url}/metrics`)).text();
  const line = /^portico_mcp_results_passed_through_total\{method="tools\/call",era="session"\} (\d+)$/m.exec(
    text,
  );
  return Number(line?.[1] ?? 0);
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

  it("a 2026-07-28 client's result is bridged (resultType, serverInfo), not passed through", async () => {
    const before = await passedThrough();
    const body = await call(
      { ...HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "python" },
      "python",
      {},
      {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
      },
    );
    const result = JSON.parse(body).result;
    assert.equal(result.resultType, "complete");
    assert.equal(result.n, 1);
    assert.equal(await passedThrough(), before);
  });
});
