// `npm run bench:catalog`: what a large catalog costs (docs/performance.md "Large catalogs"). A
// generated 1,000-tool catalog on three `http` providers (test/fixtures/tool-catalog.ts) behind
// one Portico, served in list mode and in search mode. It counts, with gpt-tokenizer's o200k_base
// encoding (GPT-4o's), the tokens of the whole serialized tools/list in each mode and of a typical
// search → describe → call sequence; and it times tools/list in list mode (every page, one client
// after another, then 16 at once) and search_tools, and measures the heap the catalog takes once
// listed and the search index once searched. Run with
// `node --expose-gc --import tsx bench/tool-catalog.ts` for the heap figure (npm run does).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { QUERIES, toolCatalog } from "../test/fixtures/tool-catalog.js";
import { startPortico } from "../test/support/portico.js";
import { openSession, postRpc } from "../test/support/rpc.js";

const ROUNDS = Number(process.env.CATALOG_ROUNDS ?? 30);
const CONCURRENCY = 16;
const gc = (globalThis as { gc?: () => void }).gc;

const echo = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () =>
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ ok: true, got: JSON.parse(body || "{}") })),
  );
});
await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
const providers = Object.entries(toolCatalog()).map(([id, tools]) => ({
  id,
  kind: "http" as const,
  prefix: id,
  tools: tools.map((t) => ({ ...t, url: `${base}/${id}/${t.name}` })),
}));

const heap = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};
const before = heap();
const portico = await startPortico({
  tenants: [
    { id: "listed", auth: "none", providers },
    { id: "searched", auth: "none", providers, toolDiscovery: "search" },
  ],
});

async function rpc(url: string, sid: string, id: number, method: string, params: object) {
  const res = await postRpc(url, { jsonrpc: "2.0", id, method, params }, sid);
  const body = (await res.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (!body.result) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

let pages = 0;

/** Every page of tools/list; resolves with the tools. */
async function listAll(url: string, sid: string): Promise<unknown[]> {
  const tools: unknown[] = [];
  let cursor: string | undefined;
  let id = 1;
  pages = 0;
  do {
    pages++;
    const result = await rpc(url, sid, id++, "tools/list", cursor ? { cursor } : {});
    tools.push(...(result.tools as unknown[]));
    cursor = result.nextCursor as string | undefined;
  } while (cursor);
  return tools;
}

const tokens = (value: unknown) => encode(JSON.stringify(value)).length;
const listedUrl = portico.mcpUrl("listed");
const searchedUrl = portico.mcpUrl("searched");
const listedSid = await openSession(listedUrl);
const searchedSid = await openSession(searchedUrl);

const all = await listAll(listedUrl, listedSid);
const listPages = pages;
const few = await listAll(searchedUrl, searchedSid);
const listed = heap();

// A typical sequence: one search, one describe, one call, each the tool call the model writes and
// the result it reads.
const [, tool, query] = QUERIES[0]!;
const calls: Array<[string, Record<string, unknown>]> = [
  ["search_tools", { query, limit: 5 }],
  ["describe_tool", { name: `crm__${tool}` }],
  ["call_tool", { name: `crm__${tool}`, arguments: { name: "Ada", email: "ada@example.com" } }],
];
let sequence = 0;
for (const [i, [name, args]] of calls.entries()) {
  const result = await rpc(searchedUrl, searchedSid, 100 + i, "tools/call", { name, arguments: args });
  sequence += tokens({ name, arguments: args }) + tokens(result.content);
}

// search_tools latency over the twenty queries (the index was built by the sequence's search),
// and the heap the index and the word vectors add.
const searchTimes: number[] = [];
for (let round = 0; round < 5; round++)
  for (const [i, [, , q]] of QUERIES.entries()) {
    const started = performance.now();
    await rpc(searchedUrl, searchedSid, 1000 + round * 100 + i, "tools/call", {
      name: "search_tools",
      arguments: { query: q, limit: 5 },
    });
    searchTimes.push(performance.now() - started);
  }
searchTimes.sort((a, b) => a - b);
const searched = heap();

// tools/list latency in list mode: all pages, one after another, then CONCURRENCY clients at once.
const times: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const t0 = performance.now();
  await listAll(listedUrl, listedSid);
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const t0 = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, () => listAll(listedUrl, listedSid)));
const concurrent = performance.now() - t0;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
console.log(`catalog: ${all.length} tools on ${providers.length} providers`);
console.log(
  `tools/list tokens (o200k_base): list mode ${tokens(all)}; search mode ${tokens(few)} (${few.length} tools)`,
);
console.log(`search → describe → call: ${sequence} tokens`);
console.log(
  `tools/list in list mode, all ${listPages} pages: median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms, p95 ${times[Math.floor(times.length * 0.95)]!.toFixed(1)} ms (${ROUNDS} rounds); ${CONCURRENCY} clients at once: ${concurrent.toFixed(0)} ms`,
);
console.log(
  `search_tools (a round trip, 20 queries × 5): median ${searchTimes[Math.floor(searchTimes.length / 2)]!.toFixed(1)} ms, p95 ${searchTimes[Math.floor(searchTimes.length * 0.95)]!.toFixed(1)} ms`,
);
console.log(
  gc
    ? `heap after both tenants were listed: +${mb(listed - before)} over the process before; after searching (index and word vectors): +${mb(searched - listed)} more`
    : "heap: run with --expose-gc",
);
await portico.close();
echo.close();
