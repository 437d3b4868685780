// The SDK baseline of bench measurement 6, run as its own process: the official SDK v2
// `createMcpHandler` (one McpServer built per request, as the SDK does) serving perf://hello as
// Portico's static provider does, mounted on node:http at /mcp/:tenant the way the stateless
// upstream fixture is (test/fixtures/stateless-server.ts: loopback Host/Origin guards, node-fetch.ts).
import { createServer } from "node:http";
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  McpServer,
  originValidationResponse,
} from "@modelcontextprotocol/server";
import { serveFetch } from "../test/fixtures/stateless/node-fetch.js";

const port = Number(process.env.PORT ?? "0");
const URI = "perf://hello";

/** The server for one request: the resource with the cache hints Portico gives a public read. */
function buildServer(): McpServer {
  const server = new McpServer({ name: "portico-bench-sdk", version: "1.0.0" });
  server.registerResource(
    "hello",
    URI,
    { mimeType: "text/plain", cacheHint: { ttlMs: 60_000, cacheScope: "public" } },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello" }] }),
  );
  return server;
}

const handler = createMcpHandler(buildServer, {
  onerror: (error) => console.error("sdk handler:", error),
});
const fetchMcp = (request: Request) =>
  Promise.resolve(
    hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
      originValidationResponse(request, localhostAllowedOrigins()) ??
      handler.fetch(request),
  );

const server = createServer((req, res) => {
  if (req.url === "/healthz") return void res.writeHead(200).end("ok");
  if (!req.url?.startsWith("/mcp/")) return void res.writeHead(404).end();
  serveFetch(req, res, fetchMcp).catch((error: unknown) => {
    console.error("sdk handler: request failed", error);
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end("Internal error");
    else res.end();
  });
});
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
console.log(`sdk handler listening on http://127.0.0.1:${port}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void handler.close().then(() => server.close(() => process.exit(0))));
