// Structured logs as an operator reads them: JSON lines bound to the request id, tenant, session
// and JSON-RPC method, and never a credential: bearer tokens, cookies, session ids, admin keys
// and the secrets of an admin request body are redacted wherever they would appear.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { buildApp, type Portico } from "../src/app.js";
import { loadConfig } from "../src/config/env.js";
import { ADMIN_TOKEN } from "./support/admin.js";
import { staticTenant, TEST_SECRET } from "./support/portico.js";
import { MCP_HEADERS } from "./support/rpc.js";

type Line = Record<string, any>;

async function start(level: string): Promise<{ portico: Portico; lines: Line[]; raw: string[] }> {
  const raw: string[] = [];
  const config = loadConfig({
    PORTICO_LOG_LEVEL: level,
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
  });
  const portico = await buildApp(config, {
    tenants: [staticTenant("acme")],
    logStream: { write: (line: string) => void raw.push(line) },
  });
  return {
    portico,
    raw,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Line);
    },
  };
}

const opened: Portico[] = [];
after(() => Promise.all(opened.map((p) => p.app.close())));

it("binds request lines to request id, tenant, session and method, and redacts every credential", async () => {
  const logs = await start("debug");
  opened.push(logs.portico);
  const { app } = logs.portico;
  const init = await app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: MCP_HEADERS,
    payload: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    },
  });
  const sid = init.headers["mcp-session-id"] as string;
  const secrets = {
    bearer: "tok-SECRET-1-abcdefghijklmnop",
    cookie: "COOKIE-SECRET-2",
    header: "HEADER-SECRET-3",
    token: "BEARER-SECRET-4",
  };
  const ping = await app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: {
      ...MCP_HEADERS,
      authorization: `Bearer ${secrets.bearer}`,
      cookie: `portico=${secrets.cookie}`,
      "mcp-session-id": sid,
      "x-request-id": "trace-abc-123",
    },
    payload: { jsonrpc: "2.0", id: 1, method: "ping" },
  });
  assert.equal(ping.statusCode, 200);
  const created = await app.inject({
    method: "POST",
    url: "/admin/v1/tenants/acme/providers",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    payload: {
      id: "wx",
      kind: "http",
      tools: [{ name: "w", url: "http://127.0.0.1:9/w", headers: { "x-api-key": secrets.header } }],
      auth: { type: "bearer", token: secrets.token },
    },
  });
  assert.equal(created.statusCode, 201);
  // Whatever logs a body by mistake still loses its secrets.
  app.log.warn(
    { body: { tools: [{ headers: { "x-api-key": secrets.header } }], auth: { token: secrets.token } } },
    "probe",
  );

  const pingLine = logs.lines.find((l) => l.reqId === "trace-abc-123");
  assert.ok(pingLine, "the ping has a line under its X-Request-Id");
  assert.equal(pingLine.msg, "request completed");
  assert.equal(pingLine.level, 20);
  assert.equal(pingLine.tenant, "acme");
  assert.equal(pingLine.session, sid.slice(0, 8), "sessions are named by a prefix of their id");
  assert.equal(pingLine.method, "ping");
  assert.equal(pingLine.res.statusCode, 200);
  assert.equal(pingLine.req.headers.authorization, "[redacted]");
  assert.equal(pingLine.req.headers.cookie, "[redacted]");
  assert.equal(pingLine.req.headers["mcp-session-id"], "[redacted]");
  assert.equal(pingLine.req.headers.accept, MCP_HEADERS.accept, "other headers stay readable");

  const adminLine = logs.lines.find((l) => l.req?.url === "/admin/v1/tenants/acme/providers");
  assert.ok(adminLine);
  assert.equal(adminLine.tenant, "acme");
  assert.match(
    adminLine.reqId,
    /^[\w-]{12}-[0-9a-z]+$/,
    "the process prefix and a counter when the client sent none",
  );
  assert.equal(adminLine.req.headers.authorization, "[redacted]");

  const everything = logs.raw.join("");
  for (const value of [...Object.values(secrets), sid, ADMIN_TOKEN])
    assert.ok(!everything.includes(value), `${value} appears in the logs`);
});

it("logs nothing per request above debug: no hook on the hot path", async () => {
  const logs = await start("info");
  opened.push(logs.portico);
  const before = logs.raw.length;
  const res = await logs.portico.app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: MCP_HEADERS,
    payload: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    },
  });
  assert.equal(res.statusCode, 200);
  assert.equal(logs.raw.length, before);
});
