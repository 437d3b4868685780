// The ceiling of bench measurement 7 (docs/performance.md), run as its own process: bare Fastify
// with one route per era that relays the POST body, unparsed, with the MCP headers, to the upstream
// through an undici Pool (keep-alive, one per upstream origin) and answers with the upstream's
// status, content type, session id and body. No Redis, no session of its own, no checks.
import Fastify from "fastify";
import { Pool } from "undici";

const port = Number(process.env.PORT ?? "0");

/** Request headers relayed as they came (basic/transports: session, version, request metadata). */
const RELAYED = [
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
];

function upstreamOf(name: string): { pool: Pool; path: string } {
  const url = process.env[name];
  if (url === undefined) throw new Error(`${name} is not set`);
  const u = new URL(url);
  return { pool: new Pool(u.origin, { keepAliveTimeout: 60_000 }), path: u.pathname };
}

const upstreams = {
  session: upstreamOf("BENCH_UPSTREAM_SESSION"),
  stateless: upstreamOf("BENCH_UPSTREAM_STATELESS"),
};

const app = Fastify({ logger: false });
// The body is relayed as the client sent it: kept as a Buffer, never parsed.
app.removeAllContentTypeParsers();
app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));

app.get("/healthz", async () => ({ status: "ok" }));
for (const [era, upstream] of Object.entries(upstreams))
  app.post(`/forward/${era}`, async (req, reply) => {
    const headers: Record<string, string> = {};
    for (const name of RELAYED) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const res = await upstream.pool.request({
      method: "POST",
      path: upstream.path,
      headers,
      body: req.body as Buffer,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    reply.code(res.statusCode);
    const type = res.headers["content-type"];
    if (typeof type === "string") reply.header("content-type", type);
    const sid = res.headers["mcp-session-id"];
    if (typeof sid === "string") reply.header("mcp-session-id", sid);
    return reply.send(body);
  });

const address = await app.listen({ port, host: "127.0.0.1" });
console.log(`bare forwarder listening on ${address}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
