// `npm run stress`: correctness under load. Two replicas on one Redis; CLIENTS official-SDK
// clients, half session-era (SDK v1) and half 2026-07-28 (SDK v2), whose requests alternate
// between the replicas, each make CALLS calls mixing progress, sampling answered through the
// other replica, and reads. A 2026-07-28 client's sampling is the era bridge under load: the
// upstream call is held on one replica while the client's retry with the answer lands on the
// other. Every answer is checked; exits 1 on any error.
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { startConformanceUpstream } from "../test/fixtures/conformance-server.js";
import { connectClient } from "../test/support/clients.js";
import { startPortico } from "../test/support/portico.js";
import { uniquePrefix } from "../test/support/redis.js";

const CLIENTS = Number(process.env.STRESS_CLIENTS ?? 200);
const CALLS = Number(process.env.STRESS_CALLS ?? 15);
/**
 * Every stress client comes from 127.0.0.1: CLIENTS × CALLS requests in well under a minute is
 * past the default per-address limit (docs/security.md), so the limits are set explicitly.
 */
const LIMITS = {
  PORTICO_RATE_LIMIT_REQUESTS_PER_MINUTE: "100000000",
  PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "100000000",
  PORTICO_MAX_SESSIONS_PER_ADDRESS: "0",
};

/** What both SDKs' clients offer for the three kinds of call. */
interface Caller {
  readonly era: "session" | "2026-07-28";
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    onprogress?: (p: { progress: number }) => void,
  ): Promise<Record<string, unknown>>;
  readResource(uri: string): Promise<{ contents: unknown }>;
  close(): Promise<void>;
}

async function oneCall(caller: Caller, tag: string, kind: number): Promise<void> {
  if (kind === 0) {
    const seen: number[] = [];
    await caller.callTool({ name: "test_tool_with_progress" }, (p) => seen.push(p.progress));
    if (seen.join() !== "0,50,100") throw new Error(`progress arrived as [${seen.join()}]`);
  } else if (kind === 1) {
    const r = await caller.callTool({ name: "test_sampling", arguments: { prompt: tag } });
    const text = (r.content as Array<{ text?: string }>)[0]?.text;
    if (text !== `LLM response: echo: ${tag}`) throw new Error(`sampling answered ${JSON.stringify(text)}`);
  } else {
    const r = await caller.readResource("test://static-text");
    if (!JSON.stringify(r.contents).includes("static text resource"))
      throw new Error("read returned the wrong content");
  }
}

/** The sampling answer both eras' clients give: the prompt echoed, so a mixed-up answer shows. */
function echo(messages: Array<{ content: unknown }>) {
  const content = messages[0]?.content as { text?: string } | undefined;
  return {
    model: "m",
    role: "assistant" as const,
    content: { type: "text" as const, text: `echo: ${content?.text}` },
  };
}

async function sessionCaller(url: string, route: (url: URL) => URL): Promise<Caller> {
  const rc = await connectClient(url, { route });
  return {
    era: "session",
    callTool: (params, onprogress) => rc.client.callTool(params, undefined, onprogress ? { onprogress } : {}),
    readResource: (uri) => rc.client.readResource({ uri }),
    close: () => rc.client.close(),
  };
}

async function modernCaller(url: string, route: (url: URL) => URL): Promise<Caller> {
  const client = new V2Client(
    { name: "stress-v2", version: "1.0.0" },
    { capabilities: { sampling: {} }, versionNegotiation: { mode: "auto" } },
  );
  client.setRequestHandler("sampling/createMessage", async (req) => echo(req.params.messages));
  const fetchRouted: typeof fetch = (input, init) =>
    fetch(route(new URL(input instanceof Request ? input.url : String(input))), init);
  await client.connect(new V2Transport(new URL(url), { fetch: fetchRouted }));
  if (client.getProtocolEra() !== "modern")
    throw new Error(`the SDK v2 client chose ${client.getProtocolEra()}`);
  return {
    era: "2026-07-28",
    callTool: (params, onprogress) => client.callTool(params, onprogress ? { onprogress } : {}),
    readResource: (uri) => client.readResource({ uri }),
    close: () => client.close(),
  };
}

const upstream = await startConformanceUpstream();
const tenants = [
  { id: "acme", auth: "none" as const, providers: [{ id: "ref", kind: "mcp" as const, url: upstream.url }] },
];
const prefix = uniquePrefix();
const [a, b] = await Promise.all([
  startPortico({ redisPrefix: prefix, tenants, env: LIMITS }),
  startPortico({ redisPrefix: prefix, tenants, env: LIMITS }),
]);
const errors = new Map<string, number>();
const passed = { session: 0, "2026-07-28": 0 };
const note = (what: string) => errors.set(what, (errors.get(what) ?? 0) + 1);
const started = Date.now();
try {
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      let n = i;
      const route = (url: URL) =>
        Object.assign(new URL(url), { port: new URL(n++ % 2 ? b.url : a.url).port });
      const era = i % 2 ? "2026-07-28" : "session";
      try {
        const caller = await (era === "session" ? sessionCaller : modernCaller)(a.mcpUrl("acme"), route);
        for (let j = 0; j < CALLS; j++) {
          await oneCall(caller, `q${i}-${j}`, j % 3).then(
            () => passed[era]++,
            (err: unknown) => note(`${era}: ${String(err)}`),
          );
        }
        await caller.close();
      } catch (err) {
        note(`${era} connect: ${String(err)}`);
      }
    }),
  );
} finally {
  await Promise.all([a.close(), b.close()]);
  await upstream.close();
}
const failed = [...errors.values()].reduce((x, y) => x + y, 0);
console.log(`${CLIENTS} clients × ${CALLS} calls over two replicas in ${Date.now() - started} ms`);
for (const [message, count] of errors) console.log(`  ${count} × ${message}`);
console.log(
  `stress: ${passed.session + passed["2026-07-28"]} passed (session era ${passed.session}, ` +
    `2026-07-28 ${passed["2026-07-28"]}), ${failed} failed`,
);
process.exit(failed === 0 ? 0 : 1);
