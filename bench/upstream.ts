// The upstream of bench measurement 7 (docs/performance.md), run as its own process: a minimal MCP
// server on node:http that answers in microseconds, so the upstream is never the bottleneck. Two
// ports, one per era: a session-era-only server (initialize → Mcp-Session-Id, basic/transports
// §Session Management) and a 2026-07-28-only server (server/discover, `_meta` and the Mcp-Method /
// Mcp-Name headers checked, `resultType` on every result). JSON answers only, never SSE; no GET stream.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const SESSION_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"];
const STATELESS_VERSION = "2026-07-28";
const SERVER_INFO = { name: "portico-bench-upstream", version: "1.0.0" };
const MAX_BODY_BYTES = 1024 * 1024;

/** The one tool: answers "echo: <text>", so a relayed answer shows it came from this request. */
export const ECHO_TOOL = {
  name: "echo",
  description: "Answers with its text argument.",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
};

interface Rpc {
  readonly jsonrpc?: unknown;
  readonly id?: string | number | null;
  readonly method?: unknown;
  readonly params?: Record<string, unknown>;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

const result = (id: unknown, r: unknown): Answer => ({
  status: 200,
  body: { jsonrpc: "2.0", id, result: r },
});
const error = (status: number, id: unknown, code: number, message: string, data?: unknown): Answer => ({
  status,
  body: {
    jsonrpc: "2.0",
    id: id ?? null,
    error: data === undefined ? { code, message } : { code, message, data },
  },
});

function echo(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (params?.name !== ECHO_TOOL.name) return undefined;
  const args = params.arguments as { text?: unknown } | undefined;
  return { content: [{ type: "text", text: `echo: ${typeof args?.text === "string" ? args.text : ""}` }] };
}

/** The session era: sessions held in a Set, 400 without a session id, 404 for one it never issued. */
/** Sessions the session-era server has opened in all and holds now: GET /stats answers them. */
const stats = { initialized: 0, open: 0 };

function sessionEra() {
  const sessions = new Set<string>();
  return (req: IncomingMessage, rpc: Rpc | undefined): Answer => {
    const sid = req.headers["mcp-session-id"];
    if (req.method === "DELETE") {
      const deleted = typeof sid === "string" && sessions.delete(sid);
      stats.open = sessions.size;
      return { status: deleted ? 200 : 404 };
    }
    if (rpc === undefined) return error(400, null, -32700, "Parse error");
    if (rpc.method === "initialize") {
      const asked = rpc.params?.protocolVersion;
      const version =
        typeof asked === "string" && SESSION_VERSIONS.includes(asked) ? asked : SESSION_VERSIONS[0];
      const id = randomBytes(16).toString("hex");
      sessions.add(id);
      stats.initialized++;
      stats.open = sessions.size;
      const r = { protocolVersion: version, capabilities: { tools: {} }, serverInfo: SERVER_INFO };
      return { ...result(rpc.id, r), headers: { "mcp-session-id": id } };
    }
    if (typeof sid !== "string")
      return error(400, rpc.id, -32000, "Bad Request: Mcp-Session-Id header is required");
    if (!sessions.has(sid)) return error(404, rpc.id, -32001, "Session not found");
    if (rpc.id === undefined) return { status: 202 }; // a notification
    switch (rpc.method) {
      case "ping":
        return result(rpc.id, {});
      case "tools/list":
        return result(rpc.id, { tools: [ECHO_TOOL] });
      case "tools/call": {
        const r = echo(rpc.params);
        return r
          ? result(rpc.id, r)
          : error(200, rpc.id, -32602, `Tool ${String(rpc.params?.name)} not found`);
      }
      default:
        return error(200, rpc.id, -32601, "Method not found");
    }
  };
}

/** Checks a header against the body as a 2026-07-28 server must (basic/transports §Request Metadata). */
function mismatch(req: IncomingMessage, name: string, body: unknown): Answer | undefined {
  const header = req.headers[name];
  if (header === body) return undefined;
  const data = { mismatch: { header: header ?? "(missing)", body } };
  return error(400, null, -32020, `Bad Request: the ${name} header and the body disagree`, data);
}

/** 2026-07-28 only: every request's `_meta` and headers checked; every result has its resultType. */
function statelessEra() {
  const complete = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": SERVER_INFO } };
  const cacheable = { ...complete, ttlMs: 0, cacheScope: "private" };
  return (req: IncomingMessage, rpc: Rpc | undefined): Answer => {
    if (req.method !== "POST") return { status: 405, headers: { allow: "POST" } };
    if (rpc === undefined) return error(400, null, -32700, "Parse error");
    const meta = rpc.params?._meta as Record<string, unknown> | undefined;
    const version = meta?.["io.modelcontextprotocol/protocolVersion"];
    if (version !== STATELESS_VERSION || meta?.["io.modelcontextprotocol/clientCapabilities"] === undefined)
      return error(400, rpc.id, -32022, "Unsupported protocol version", {
        supported: [STATELESS_VERSION],
        requested: version ?? null,
      });
    const bad =
      mismatch(req, "mcp-protocol-version", STATELESS_VERSION) ??
      mismatch(req, "mcp-method", rpc.method) ??
      (rpc.method === "tools/call" ? mismatch(req, "mcp-name", rpc.params?.name) : undefined);
    if (bad) return bad;
    if (rpc.id === undefined) return { status: 202 };
    switch (rpc.method) {
      case "server/discover":
        return result(rpc.id, {
          supportedVersions: [STATELESS_VERSION],
          capabilities: { tools: {} },
          ...cacheable,
        });
      case "tools/list":
        return result(rpc.id, { tools: [ECHO_TOOL], ...cacheable });
      case "tools/call": {
        const r = echo(rpc.params);
        return r ? result(rpc.id, { ...r, ...complete }) : error(200, rpc.id, -32602, "Tool not found");
      }
      default:
        return error(404, rpc.id, -32601, "Method not found");
    }
  };
}

/** A server on 127.0.0.1 that reads the whole body, parses it, and writes one JSON answer. */
function serve(handle: (req: IncomingMessage, rpc: Rpc | undefined) => Answer): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET" && req.url === "/stats") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
      return;
    }
    if (req.method === "GET") {
      res.writeHead(405, { allow: "POST, DELETE" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      let rpc: Rpc | undefined;
      try {
        const parsed: unknown = size === 0 ? undefined : JSON.parse(Buffer.concat(chunks, size).toString());
        rpc = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : undefined;
      } catch {
        rpc = undefined;
      }
      const a = handle(req, rpc);
      const text = a.body === undefined ? "" : JSON.stringify(a.body);
      const headers: Record<string, string | number> = {
        ...a.headers,
        "content-length": Buffer.byteLength(text),
      };
      if (text !== "") headers["content-type"] = "application/json";
      res.writeHead(a.status, headers).end(text);
    });
  });
}

async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return (server.address() as AddressInfo).port;
}

const servers = [serve(sessionEra()), serve(statelessEra())];
for (const s of servers) s.keepAliveTimeout = 60_000;
const [sessionPort, statelessPort] = await Promise.all([
  listen(servers[0]!, Number(process.env.SESSION_PORT ?? 0)),
  listen(servers[1]!, Number(process.env.STATELESS_PORT ?? 0)),
]);
console.log(`bench upstream listening on session=${sessionPort} stateless=${statelessPort}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    for (const s of servers) s.closeAllConnections();
    process.exit(0);
  });
