// The baseline of bench measurements 1 and 6, run as its own process: bare Fastify with POST routes
// that parse the JSON body and answer the same JSON-RPC result bytes Portico answers for
// resources/read of perf://hello, with the request's id: /mcp/:tenant the session-era result
// (BENCH_RESULT_JSON), /stateless/:tenant the 2026-07-28 one (BENCH_STATELESS_RESULT_JSON).
// No Redis, no session, no header checks.
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";

const port = Number(process.env.PORT ?? "0");

function resultOf(name: string): Record<string, unknown> {
  const json = process.env[name];
  if (json === undefined) throw new Error(`${name} is not set`);
  return JSON.parse(json) as Record<string, unknown>;
}

/** A route handler answering `result` under the request's id. */
function answer(result: Record<string, unknown>) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const body = req.body as { id?: unknown } | undefined;
    const id = body?.id ?? null;
    return reply
      .header("content-type", "application/json")
      .send(JSON.stringify({ jsonrpc: "2.0", id, result }));
  };
}

const app = Fastify({ logger: false });

app.get("/healthz", async () => ({ status: "ok" }));
app.post("/mcp/:tenant", answer(resultOf("BENCH_RESULT_JSON")));
app.post("/stateless/:tenant", answer(resultOf("BENCH_STATELESS_RESULT_JSON")));

await app.listen({ port, host: "127.0.0.1" });
console.log(`bare fastify listening on http://127.0.0.1:${port}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
