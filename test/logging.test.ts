// Structured logs as an operator reads them: JSON lines bound to the request id, tenant, session
// and JSON-RPC method, and never a credential: bearer tokens, cookies, session ids, admin keys
// and the secrets of an admin request body are redacted wherever they would appear.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { after, it } from "node:test";
import { fileURLToPath } from "node:url";
import { buildApp, type Portico } from "../src/app.js";
import { loadConfig } from "../src/config/env.js";
import { ADMIN_TOKEN } from "./support/admin.js";
import { staticTenant, TEST_SECRET } from "./support/portico.js";
import { MCP_HEADERS } from "./support/rpc.js";

type Line = Record<string, any>;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function start(
  level: string,
  format = "auto",
): Promise<{ portico: Portico; lines: Line[]; raw: string[] }> {
  const raw: string[] = [];
  const config = loadConfig({
    PORTICO_LOG_LEVEL: level,
    PORTICO_LOG_FORMAT: format,
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

it("pretty format: one readable line per entry, redacted as the JSON is, no line forged by a message", async () => {
  const logs = await start("debug", "pretty");
  opened.push(logs.portico);
  const { app } = logs.portico;
  const secret = "tok-SECRET-9-abcdefghijklmnop";
  const res = await app.inject({
    method: "POST",
    url: "/mcp/acme",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${secret}`, "x-request-id": "pretty-1" },
    payload: {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {} },
    },
  });
  assert.equal(res.statusCode, 200);
  app.log.warn({ body: { auth: { token: secret } }, tenant: "acme" }, "probe\nFORGED 00:00:00.000 INFO  x");
  app.log.error(
    { err: Object.assign(new Error(`upstream said Bearer ${secret}`), { code: "EPROBE" }) },
    "failed",
  );

  const text = logs.raw.join("");
  assert.ok(!text.includes(secret), "the bearer token appears in the pretty logs");
  assert.ok(
    logs.raw.every((l) => !l.startsWith("{")),
    "no JSON line",
  );
  const completed = logs.raw.find((l) => l.includes("reqId=pretty-1"));
  assert.match(completed!, /^\d\d:\d\d:\d\d\.\d{3} DEBUG request completed {2}reqId=pretty-1 /);
  assert.match(completed!, /"authorization":"\[redacted\]"/);
  const probe = logs.raw.find((l) => l.includes("probe"))!;
  assert.match(probe, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}probe\\x0aFORGED .*tenant=acme/);
  assert.equal(probe.split("\n").length, 2, "one line (and its end)");
  const failed = logs.raw.find((l) => l.includes("failed"))!;
  const [head, stack] = failed.split("\n");
  assert.match(head!, /ERROR failed \(EPROBE\)$/);
  assert.match(stack!, /^ {4}Error: upstream said Bearer \[redacted\]$/);
  // Colour only at a terminal: a test's destination is none.
  assert.ok(!text.includes("\x1b["));
});

/** Starts main.ts, under a terminal (`script`) or with stdout on a pipe, until its first log line about tenants. */
function firstLines(env: Record<string, string>, terminal: boolean): Promise<string> {
  const cmd = `${process.execPath} --import tsx src/main.ts`;
  const [file, args] = terminal
    ? ["script", ["-qfec", cmd, "/dev/null"]]
    : [process.execPath, ["--import", "tsx", "src/main.ts"]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
      env: { PATH: process.env.PATH, HOST: "127.0.0.1", PORT: "0", PORTICO_SECRET_KEY: TEST_SECRET, ...env },
    });
    let out = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("MCP endpoint for tenant")) child.kill("SIGTERM");
    });
    child.on("exit", () => {
      clearTimeout(timer);
      if (out.includes("MCP endpoint for tenant")) resolve(out);
      else reject(new Error(`main.ts printed no endpoint line:\n${out}`));
    });
  });
}

it("auto format: human-readable and coloured at a terminal, JSON on a pipe; `json` forces JSON", async () => {
  const tty = await firstLines({}, true);
  // eslint-disable-next-line no-control-regex -- the colour codes are what is tested
  assert.match(tty, /\x1b\[32mINFO \x1b\[0m MCP endpoint for tenant 'demo'/);
  assert.doesNotMatch(tty, /^\{/m);
  const piped = await firstLines({}, false);
  const line = piped.split("\n").find((l) => l.includes("MCP endpoint"))!;
  assert.equal(JSON.parse(line).msg.startsWith("MCP endpoint for tenant 'demo'"), true);
  const forced = await firstLines({ PORTICO_LOG_FORMAT: "json" }, true);
  assert.match(forced, /^\{"level":30,.*"msg":"MCP endpoint for tenant 'demo'/m);
});
