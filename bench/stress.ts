// `npm run stress`: correctness under load. Two replicas on one Redis; CLIENTS official-SDK
// clients whose requests alternate between the replicas each make CALLS calls mixing progress,
// sampling relayed through the other replica, and reads. Every answer is checked; exits 1 on any error.
import { startConformanceUpstream } from "../test/fixtures/conformance-server.js";
import { connectClient, type RecordingClient } from "../test/support/clients.js";
import { startPortico } from "../test/support/portico.js";
import { uniquePrefix } from "../test/support/redis.js";

const CLIENTS = Number(process.env.STRESS_CLIENTS ?? 200);
const CALLS = Number(process.env.STRESS_CALLS ?? 15);

async function oneCall(rc: RecordingClient, tag: string, kind: number): Promise<void> {
  if (kind === 0) {
    const seen: number[] = [];
    await rc.client.callTool({ name: "test_tool_with_progress" }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    if (seen.join() !== "0,50,100") throw new Error(`progress arrived as [${seen.join()}]`);
  } else if (kind === 1) {
    const r = await rc.client.callTool({ name: "test_sampling", arguments: { prompt: tag } });
    const text = (r.content as Array<{ text?: string }>)[0]?.text;
    if (text !== `LLM response: echo: ${tag}`) throw new Error(`sampling answered ${JSON.stringify(text)}`);
  } else {
    const r = await rc.client.readResource({ uri: "test://static-text" });
    if (!JSON.stringify(r.contents).includes("static text resource"))
      throw new Error("read returned the wrong content");
  }
}

const upstream = await startConformanceUpstream();
const tenants = [
  { id: "acme", auth: "none" as const, providers: [{ id: "ref", kind: "mcp" as const, url: upstream.url }] },
];
const prefix = uniquePrefix();
const [a, b] = await Promise.all([
  startPortico({ redisPrefix: prefix, tenants }),
  startPortico({ redisPrefix: prefix, tenants }),
]);
const errors = new Map<string, number>();
let ok = 0;
const started = Date.now();
try {
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      let n = i;
      const route = (url: URL) =>
        Object.assign(new URL(url), { port: new URL(n++ % 2 ? b.url : a.url).port });
      try {
        const rc = await connectClient(a.mcpUrl("acme"), { route });
        for (let j = 0; j < CALLS; j++) {
          await oneCall(rc, `q${i}-${j}`, j % 3).then(
            () => ok++,
            (err: unknown) => errors.set(String(err), (errors.get(String(err)) ?? 0) + 1),
          );
        }
        await rc.client.close();
      } catch (err) {
        errors.set(`connect: ${String(err)}`, (errors.get(`connect: ${String(err)}`) ?? 0) + 1);
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
console.log(`stress: ${ok} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
