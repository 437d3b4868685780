// Error codes by era (docs/errors.md): a 2026-07-28 client never gets a code that revision keeps
// for itself or calls legacy (basic/index §Error Codes): Portico's own refusals come with codes
// outside JSON-RPC's reserved range and the error's name in data. A session-era client of the
// same tenant gets the codes it always had.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ErrorCodes, fail, type ErrorCode } from "../../src/protocol/errors.js";
import { startIssuer, startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { MCP_HEADERS, openSession } from "../support/rpc.js";

interface RpcError {
  readonly id: unknown;
  readonly error: { readonly code: number; readonly data?: Record<string, unknown> };
}

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
};

/** A 2026-07-28 prompts/list, with its headers. */
function modern(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      ...MCP_HEADERS,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "prompts/list",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "prompts/list", params: { _meta: MODERN_META } }),
  });
}

describe("the codes a 2026-07-28 client can be sent", () => {
  /** Codes the revision defines, and JSON-RPC's own. */
  const allowed = new Set([-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022]);
  /**
   * Never sent to a 2026-07-28 client as they are: -32002 becomes -32602 there, -32042 is
   * session-era only, and sessions are capped at initialize.
   */
  const notSentAsIs = new Set([
    "PORTICO_ERR_MCP_TOO_MANY_SESSIONS",
    "PORTICO_ERR_MCP_RESOURCE_NOT_FOUND",
    "PORTICO_ERR_MCP_URL_ELICITATION_REQUIRED",
  ]);

  for (const code of Object.keys(ErrorCodes) as ErrorCode[]) {
    if (!("rpc" in ErrorCodes[code]) || notSentAsIs.has(code)) continue;
    it(`${code}: defined by the revision, or outside -32768 … -32000; the session era's code unchanged`, () => {
      const error = fail(code, "x", { retryAfterSeconds: 3 });
      const stateless = error.rpcIn("stateless", error.data);
      assert.ok(
        allowed.has(stateless.code) || stateless.code < -32768 || stateless.code > -32000,
        `${stateless.code}`,
      );
      assert.equal(error.rpcIn("session", error.data).code, error.rpc);
      assert.deepEqual(error.rpcIn("session", error.data).data, { retryAfterSeconds: 3 });
      if (stateless.code !== error.rpc)
        assert.deepEqual(stateless.data, { retryAfterSeconds: 3, error: code }, "the name rides in data");
    });
  }
});

describe("refusals at the edge, by era", () => {
  let portico: RunningPortico;
  let issuer: { portico: RunningPortico };

  before(async () => {
    portico = await startPortico({
      tenants: [{ ...staticTenant("acme"), limits: { requestsPerMinute: 3 } }],
    });
    issuer = await startIssuer({ tenant: "locked", users: [] });
  });

  after(async () => {
    await portico.close();
    await issuer.portico.close();
  });

  it("a missing token: 401 with -31002 and the name for 2026-07-28; -32000 for the session era", async () => {
    const url = issuer.portico.mcpUrl("locked");
    const res = await modern(url);
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer resource_metadata=/);
    const body = (await res.json()) as RpcError;
    assert.equal(body.error.code, -31002);
    assert.deepEqual(body.error.data, { error: "PORTICO_ERR_MCP_UNAUTHORIZED" });
    const old = await fetch(url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
    });
    assert.equal(old.status, 401);
    const oldBody = (await old.json()) as RpcError;
    assert.equal(oldBody.error.code, -32000);
    assert.equal(oldBody.error.data, undefined);
  });

  it("a forbidden Origin: 403 with -31000 for 2026-07-28", async () => {
    const res = await modern(portico.mcpUrl("acme"), { origin: "https://evil.example" });
    assert.equal(res.status, 403);
    const body = (await res.json()) as RpcError;
    assert.equal(body.error.code, -31000);
    assert.equal(body.error.data?.error, "PORTICO_ERR_MCP_ORIGIN_FORBIDDEN");
  });

  it("GET without a session under the 2026-07-28 header: 405 with -31001", async () => {
    const res = await fetch(portico.mcpUrl("acme"), {
      headers: { accept: "text/event-stream", "mcp-protocol-version": "2026-07-28" },
    });
    assert.equal(res.status, 405);
    const body = (await res.json()) as RpcError;
    assert.equal(body.error.code, -31001);
    assert.equal(body.error.data?.error, "PORTICO_ERR_MCP_METHOD_NOT_ALLOWED");
  });

  it("the rate limit: 429 with -31004, retryAfterSeconds and the name for 2026-07-28; -32000 in a session", async () => {
    const sid = await openSession(portico.mcpUrl("acme"));
    let res = await modern(portico.mcpUrl("acme"));
    for (let i = 0; res.status === 200 && i < 10; i++) {
      await res.body?.cancel();
      res = await modern(portico.mcpUrl("acme"));
    }
    assert.equal(res.status, 429);
    const body = (await res.json()) as RpcError;
    assert.equal(body.error.code, -31004);
    assert.equal(body.id, 4);
    assert.equal(body.error.data?.error, "PORTICO_ERR_MCP_RATE_LIMITED");
    assert.equal(body.error.data?.retryAfterSeconds, Number(res.headers.get("retry-after")));
    const old = await fetch(portico.mcpUrl("acme"), {
      method: "POST",
      headers: { ...MCP_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
    });
    assert.equal(old.status, 429);
    const oldBody = (await old.json()) as RpcError;
    assert.equal(oldBody.error.code, -32000);
    assert.deepEqual(Object.keys(oldBody.error.data ?? {}), ["retryAfterSeconds"]);
  });
});
