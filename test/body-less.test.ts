// Requests without a body answer on their own terms whatever Content-Type they carry (src/body-less.ts):
// the Python SDK's session DELETE, sent over a real socket with exactly its headers, and the same on
// /admin; bodies that are there are still parsed and refused when malformed.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { ADMIN_TOKEN } from "./support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "./support/portico.js";
import { openSession } from "./support/rpc.js";

let portico: RunningPortico;

before(async () => {
  portico = await startPortico({
    tenants: [staticTenant("acme")],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
});
after(() => portico.close());

interface Raw {
  readonly status: number;
  readonly body: string;
}

/**
 * One request with exactly these headers (node:http adds none to a DELETE without a body) and, when
 * given, this body, framed by its Content-Length unless the headers say chunked.
 */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  const framed =
    body === undefined || headers["transfer-encoding"]
      ? headers
      : { ...headers, "content-length": String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request(`${portico.url}${path}`, { method, headers: framed }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const PYTHON_DELETE = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("session DELETE without a body", () => {
  for (const [name, extra] of [
    ["Content-Type: application/json and no length (the Python SDK)", {}],
    ["Content-Type: application/json and Content-Length: 0", { "content-length": "0" }],
    ["Content-Type: text/plain", { "content-type": "text/plain" }],
  ] as const) {
    it(`ends the session with ${name}`, async () => {
      const sessionId = await openSession(portico.mcpUrl("acme"));
      const headers = { ...PYTHON_DELETE, ...extra, "mcp-session-id": sessionId };
      const del = await send("DELETE", "/mcp/acme", headers);
      assert.equal(del.status, 204, del.body);
      // The session is gone: a second DELETE finds nothing.
      const again = await send("DELETE", "/mcp/acme", headers);
      assert.equal(again.status, 404);
    });
  }

  it("ends the session when the empty body comes chunked (Content-Type: application/json)", async () => {
    const sessionId = await openSession(portico.mcpUrl("acme"));
    const headers = { ...PYTHON_DELETE, "transfer-encoding": "chunked", "mcp-session-id": sessionId };
    const del = await send("DELETE", "/mcp/acme", headers, "");
    assert.equal(del.status, 204, del.body);
  });

  it("still refuses a DELETE without a session id, as the transport says", async () => {
    const res = await send("DELETE", "/mcp/acme", PYTHON_DELETE);
    assert.equal(res.status, 400);
    assert.match(JSON.parse(res.body).error.message, /Mcp-Session-Id header is required/);
  });
});

describe("requests that do carry a body", () => {
  it("a DELETE with a malformed JSON body is still a parse error", async () => {
    const sessionId = await openSession(portico.mcpUrl("acme"));
    const res = await send("DELETE", "/mcp/acme", { ...PYTHON_DELETE, "mcp-session-id": sessionId }, "{oops");
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.body).error.code, -32700, res.body);
  });

  it("a POST with no body is a parse error that says so", async () => {
    const res = await send("POST", "/mcp/acme", { ...PYTHON_DELETE, "content-length": "0" });
    assert.equal(res.status, 400);
    const { error } = JSON.parse(res.body);
    assert.equal(error.code, -32700);
    assert.match(error.message, /no JSON body/);
  });

  it("a chunked POST of non-JSON is refused as the wrong media type, unread", async () => {
    const res = await send(
      "POST",
      "/mcp/acme",
      { "content-type": "text/plain", "transfer-encoding": "chunked", accept: PYTHON_DELETE.accept },
      "hello",
    );
    assert.equal(res.status, 415);
  });
});

describe("/oauth", () => {
  it("a token request with the form's Content-Type and no body is an RFC 6749 error, as before", async () => {
    const res = await send("POST", "/oauth/token", {
      "content-type": "application/x-www-form-urlencoded",
      "content-length": "0",
    });
    assert.ok(res.status === 400 || res.status === 401, `${res.status} ${res.body}`);
    assert.match(JSON.parse(res.body).error, /^invalid_(request|client)$/);
  });
});

describe("/admin", () => {
  it("DELETE of a tenant with Content-Type: application/json and no body succeeds", async () => {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const created = await send(
      "POST",
      "/admin/v1/tenants",
      { ...auth, "content-type": "application/json" },
      JSON.stringify({ id: "gone", auth: "none" }),
    );
    assert.equal(created.status, 201, created.body);
    const del = await send("DELETE", "/admin/v1/tenants/gone", {
      ...auth,
      "content-type": "application/json",
    });
    assert.equal(del.status, 204, del.body);
    const after = await send("GET", "/admin/v1/tenants/gone", auth);
    assert.equal(after.status, 404);
  });

  it("a POST with Content-Type and no body is refused as an empty body, not as malformed JSON", async () => {
    const res = await send("POST", "/admin/v1/tenants", {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      "content-type": "application/json",
      "content-length": "0",
    });
    assert.equal(res.status, 400);
    assert.match(JSON.parse(res.body).detail, /The body is empty/);
  });
});
