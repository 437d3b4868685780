// The baseline of bench measurement 1, run as its own process: bare Fastify with one POST route
// that parses the JSON body and answers the same JSON-RPC result bytes Portico answers for
// resources/read of perf://hello (BENCH_RESULT_JSON), with the request's id. No Redis, no session.
import Fastify from "fastify";

const port = Number(process.env.PORT ?? "0");
const resultJson = process.env.BENCH_RESULT_JSON;
if (resultJson === undefined) throw new Error("BENCH_RESULT_JSON is not set");
const result = JSON.parse(resultJson) as Record<string, unknown>;

const app = Fastify({ logger: false });

app.get("/healthz", async () => ({ status: "ok" }));
app.post<{ Params: { tenant: string } }>("/mcp/:tenant", async (req, reply) => {
  const body = req.body as { id?: unknown } | undefined;
  const id = body?.id ?? null;
  return reply
    .header("content-type", "application/json")
    .send(JSON.stringify({ jsonrpc: "2.0", id, result }));
});

await app.listen({ port, host: "127.0.0.1" });
console.log(`bare fastify listening on http://127.0.0.1:${port}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
