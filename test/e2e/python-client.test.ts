// The official MCP Python SDK's client (test/fixtures/python/client.py) against an OAuth tenant on
// two Portico replicas sharing Redis, each request sent to the other replica: the session era (its
// "legacy" mode, ending with the session DELETE the SDK sends with a Content-Type), 2026-07-28 (its
// "auto" mode, server/discover), and the 2024-11-05 HTTP+SSE transport; sampling and elicitation
// answered by Python callbacks. A bad token fails the way a user would see it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { UserStore } from "../../src/oauth/users.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { reportOf, runPython, skipPython, venvPython } from "../support/python.js";
import { postRpcWithToken } from "../support/rpc.js";
import { freePort, uniquePrefix } from "../support/redis.js";

const USER = { username: "ada", password: "correct horse battery" };

interface Report {
  readonly protocolVersion: string;
  readonly tools: readonly string[];
  readonly simple: string;
  readonly sampled: readonly string[];
  readonly elicited: string;
  readonly error: boolean;
  readonly requests: ReadonlyArray<{ method: string; port: number; status: number; session?: string }>;
}

describe("the Python SDK client", { skip: skipPython }, () => {
  let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
  let a: RunningPortico;
  let b: RunningPortico;
  let token: string;
  let ports: string;

  before(async () => {
    await venvPython();
    upstream = await startConformanceUpstream();
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const redisPrefix = uniquePrefix();
    const tenants: TenantConfig[] = [
      { id: "acme", auth: "oauth", providers: [{ id: "ref", kind: "mcp", url: upstream.url }] },
      { id: "other", auth: "oauth", providers: [{ id: "ref", kind: "mcp", url: upstream.url }] },
    ];
    a = await startPortico({ tenants, redisPrefix, env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer } });
    b = await startPortico({ tenants, redisPrefix, env: { PORTICO_PUBLIC_URL: issuer } });
    await new UserStore(a.store, a.keys).create("acme", USER);
    token = (await (await TestOAuthClient.register(issuer, "python")).tokens("acme", USER)).access_token;
    ports = [a.url, b.url].map((u) => new URL(u).port).join(",");
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await upstream?.close();
  });

  const run = async (mode: string, bearer = token, tenant = "acme") =>
    runPython("client.py", {
      MCP_URL: a.mcpUrl(tenant),
      REPLICA_PORTS: ports,
      MCP_TOKEN: bearer,
      MCP_MODE: mode,
    });

  /** What every mode must show: tools, a call, sampling and elicitation answered in Python, an error result. */
  const assertServed = (report: Report) => {
    assert.ok(report.tools.includes("test_sampling") && report.tools.includes("test_elicitation"));
    assert.equal(report.simple, "This is a simple text response for testing.");
    assert.deepEqual(
      report.sampled,
      [0, 1, 2].map((i) => `LLM response: python heard: question ${i}`),
    );
    assert.match(report.elicited, /accept/);
    assert.match(report.elicited, /ada@example\.com/);
    assert.equal(report.error, true);
    const served = new Set(report.requests.map((r) => r.port));
    assert.equal(served.size, 2, `both replicas served the session: ${JSON.stringify(report.requests)}`);
  };

  it("session era (mode legacy): served across replicas, and the session DELETE ends it", async () => {
    const done = await run("legacy");
    const report = reportOf<Report>(done);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(report.protocolVersion, "2025-11-25");
    assertServed(report);
    const deletes = report.requests.filter((r) => r.method === "DELETE");
    assert.deepEqual(
      deletes.map((r) => r.status),
      [204],
      "the SDK's DELETE (Content-Type: application/json, no body) ends the session",
    );
    assert.doesNotMatch(done.stderr, /Session termination failed/);
    // Gone on both replicas, whichever took the DELETE.
    const sid = report.requests.find((r) => r.session)?.session;
    assert.ok(sid, "initialize answered with a session id");
    for (const replica of [a, b]) {
      const ping = await postRpcWithToken(replica.mcpUrl("acme"), token, { id: 9, method: "ping" }, sid);
      assert.equal(ping.status, 404, `the ended session on ${replica.url}`);
    }
  });

  it("2026-07-28 (mode auto, server/discover): stateless requests on either replica, no DELETE", async () => {
    const done = await run("auto");
    const report = reportOf<Report>(done);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(report.protocolVersion, "2026-07-28");
    assertServed(report);
    assert.ok(
      report.requests.every((r) => r.method === "POST" && r.status === 200),
      JSON.stringify(report.requests),
    );
  });

  it("2024-11-05 HTTP+SSE (sse_client): the stream on one replica, the messages on the other", async () => {
    const done = await run("sse");
    const report = reportOf<Report>(done);
    assert.equal(done.code, 0, done.stderr);
    // The transport is 2024-11-05's; the version is whatever initialize negotiates on it.
    assert.match(report.protocolVersion, /^(2024-11-05|2025-03-26|2025-06-18|2025-11-25)$/);
    assertServed(report);
  });

  it("acme's token at another tenant's URL: 401 (the audience is acme's), nothing is served", async () => {
    const done = await run("legacy", token, "other");
    assert.notEqual(done.code, 0);
    assert.match(done.stderr, /Unauthorized: the access token is invalid, expired, or not for this server/);
    assert.doesNotMatch(done.stdout, /protocolVersion/);
  });

  it("a bad token: the client fails on the 401, nothing is served", async () => {
    const done = await run("legacy", "not-a-token");
    assert.notEqual(done.code, 0);
    assert.match(done.stderr, /401|Unauthorized/);
    assert.doesNotMatch(done.stdout, /protocolVersion/);
  });
});
