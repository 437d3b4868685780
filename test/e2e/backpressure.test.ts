// A client that does not read its response stream while an upstream floods it with progress must
// not grow Portico's memory. On the 2026-07-28
// lane, progress is dropped while the client is far behind and the result still arrives; on the
// session lane, a client far behind for two seconds is dropped and resumes the stream from the
// event log with Last-Event-ID, the response included.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { sendJson, startRawUpstream } from "../support/raw-upstream.js";

const VERSION = "2026-07-28";
const FLOOD = 3000; // × 10 KB: far more than any socket buffer holds
const PAD = "x".repeat(10_000);

/** A 2026-07-28 upstream whose tool streams FLOOD large progress notifications, then its result. */
async function startFloodingUpstream() {
  let done = 0;
  const raw = await startRawUpstream((m, res) => {
    const ok = (result: object) =>
      sendJson(res, { jsonrpc: "2.0", id: m.id, result: { resultType: "complete", ...result } });
    if (m.method === "server/discover")
      return ok({ supportedVersions: [VERSION], capabilities: { tools: {} } });
    if (m.method === "tools/list") return ok({ tools: [{ name: "flood", inputSchema: { type: "object" } }] });
    if (m.method !== "tools/call") return ok({});
    void (async () => {
      const progressToken = m.params?._meta?.progressToken;
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 1; i <= FLOOD; i++) {
        // Over six seconds or more, at about 5 MB/s: the socket buffers on the way (several MB on
        // loopback) fill within two seconds, and the client must then stay behind for two more
        // before it is dropped. Three seconds at 10 MB/s left no margin: on a slow machine the
        // result sometimes came before the drop.
        if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        const note = {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken, progress: i, message: PAD },
        };
        if (!res.write(`data: ${JSON.stringify(note)}\n\n`))
          await new Promise((resolve) => res.once("drain", resolve));
      }
      const result = { resultType: "complete", content: [{ type: "text", text: "flooded" }] };
      res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result })}\n\n`);
      done++;
    })();
  });
  return { ...raw, done: () => done };
}

let upstream: Awaited<ReturnType<typeof startFloodingUpstream>>;
let portico: RunningPortico;

before(async () => {
  upstream = await startFloodingUpstream();
  portico = await startPortico({
    tenants: [{ id: "acme", auth: "none", providers: [{ id: "up", kind: "mcp", url: upstream.url }] }],
    env: { PORTICO_EVENT_LOG_MAX_EVENTS: "5000" },
  });
});
after(async () => {
  await portico.close();
  await upstream.close();
});

/** POSTs `body` and reads nothing until the upstream has sent everything; then reads it all. */
function postWithoutReading(
  headers: Record<string, string>,
  body: object,
): Promise<{ text: string; status: number }> {
  const before = upstream.done();
  const url = new URL(portico.mcpUrl("acme"));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers },
      (res) => {
        res.pause();
        const poll = setInterval(() => {
          if (upstream.done() === before) return;
          clearInterval(poll);
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          // An end, or the connection dropped under it: either way, what arrived.
          res.on("close", () => resolve({ text, status: res.statusCode ?? 0 }));
          res.on("error", () => undefined);
          res.resume();
        }, 100);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

function events(text: string): Array<{ id?: string; message: Record<string, any> }> {
  return text
    .split("\n\n")
    .slice(0, -1) // what follows the last blank line is an event cut short, if anything
    .map((block) => {
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      return data ? { id, message: JSON.parse(data) as Record<string, any> } : undefined;
    })
    .filter((e) => e !== undefined);
}

describe("a client that does not read while an upstream floods its stream", () => {
  it("2026-07-28: progress is dropped while the client is behind; the result still arrives", async () => {
    const { text, status } = await postWithoutReading(
      {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": "flood",
      },
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "flood",
          _meta: {
            progressToken: "p",
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          },
        },
      },
    );
    assert.equal(status, 200);
    const all = events(text);
    const progress = all.filter((e) => e.message.method === "notifications/progress");
    assert.ok(progress.length > 0 && progress.length < FLOOD, `${progress.length} of ${FLOOD} progress kept`);
    assert.deepEqual(all.at(-1)?.message.result.content, [{ type: "text", text: "flooded" }]);
  });

  it("session era: the stream is closed, and resuming it with Last-Event-ID brings the response", async () => {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    };
    const init = await fetch(portico.mcpUrl("acme"), {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    const sid = init.headers.get("mcp-session-id")!;
    await init.text();
    const session = { ...headers, "mcp-session-id": sid };
    const { text } = await postWithoutReading(session, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", _meta: { progressToken: "p" } },
    });
    const first = events(text);
    assert.ok(
      first.every((e) => e.message.id === undefined),
      "the stream closed before the response",
    );
    const lastId = first.at(-1)?.id;
    assert.ok(lastId, "events carry ids to resume from");
    const resumed = await fetch(portico.mcpUrl("acme"), {
      headers: { ...session, accept: "text/event-stream", "last-event-id": lastId },
    });
    assert.equal(resumed.status, 200);
    const rest = events(await resumed.text());
    assert.deepEqual(rest.at(-1)?.message.result?.content, [{ type: "text", text: "flooded" }]);
    const seen = first.length + rest.length;
    assert.ok(seen >= FLOOD, `nothing lost on resumption: ${seen} events`);
  });
});
