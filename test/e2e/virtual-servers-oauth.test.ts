// Each virtual server is a protected resource of its own (docs/architecture.md §8, docs/oauth.md):
// its RFC 9728 metadata, challenges naming it, tokens whose audience is its URL (RFC 8707) and that
// carry its own scopes. A token for /mcp/acme does not open /mcp/acme/eng, nor the other way round.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient } from "../support/clients.js";
import { TestOAuthClient } from "../support/oauth.js";
import { MemoryOAuthProvider, signInAt } from "../support/sdk-oauth.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";
import { postRpcWithToken } from "../support/rpc.js";

const alice = { username: "alice", password: "correct horse battery staple" };
let portico: RunningPortico;
let issuer: string;
let oauthClient: TestOAuthClient;

const INIT = {
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

before(async () => {
  ({ portico, issuer } = await startIssuer({
    tenant: "acme",
    users: [alice],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  }));
  const admin = new AdminClient(portico.url);
  for (const server of [
    {
      id: "eng",
      name: "Engineering",
      scopes: ["eng"],
      providers: [{ provider: "docs", overrides: { prompts: { "code-review": { name: "review" } } } }],
    },
    { id: "open", providers: [{ provider: "docs", prompts: [] }] },
  ])
    assert.equal((await admin.post("/tenants/acme/servers", server)).status, 201);
  oauthClient = await TestOAuthClient.register(issuer);
});
after(async () => {
  await portico.close();
});

describe("a virtual server as a protected resource", () => {
  it("publishes its own Protected Resource Metadata with its scopes", async () => {
    const res = await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp/acme/eng`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as Record<string, unknown>;
    assert.equal(doc.resource, `${issuer}/mcp/acme/eng`);
    assert.deepEqual(doc.authorization_servers, [issuer]);
    assert.deepEqual(doc.scopes_supported, ["mcp:read", "mcp:tools", "eng"]);
    assert.equal(doc.resource_name, "Portico · acme · Engineering");
    const none = await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp/acme/nope`);
    assert.equal(none.status, 404);
  });

  it("challenges name its metadata and scopes", async () => {
    const res = await fetch(`${issuer}/mcp/acme/eng`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", ...INIT }),
    });
    assert.equal(res.status, 401);
    const challenge = res.headers.get("www-authenticate") ?? "";
    assert.match(
      challenge,
      /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp\/acme\/eng"/,
    );
    assert.match(challenge, /scope="mcp:read mcp:tools eng"/);
  });

  it("a token is good only at the URL it was issued for", async () => {
    const tenantToken = (await oauthClient.tokens("acme", alice)).access_token;
    const engToken = (await oauthClient.tokens("acme/eng", alice, "mcp:read mcp:tools eng")).access_token;
    const openToken = (await oauthClient.tokens("acme/open", alice)).access_token;
    const status = async (path: string, token: string) =>
      (await postRpcWithToken(`${issuer}${path}`, token, INIT)).status;
    assert.equal(await status("/mcp/acme", tenantToken), 200);
    assert.equal(await status("/mcp/acme/eng", tenantToken), 401, "a tenant token on a server");
    assert.equal(await status("/mcp/acme/open", tenantToken), 401);
    assert.equal(await status("/mcp/acme/eng", engToken), 200);
    assert.equal(await status("/mcp/acme", engToken), 401, "a server token on the tenant URL");
    assert.equal(await status("/mcp/acme/open", engToken), 401, "a server token on another server");
    assert.equal(await status("/mcp/acme/open", openToken), 200);

    // The SDK client sees the server's selection and names with the server's token.
    const rc = await connectClient(`${issuer}/mcp/acme/eng`, {
      headers: { authorization: `Bearer ${engToken}` },
    });
    assert.deepEqual(
      (await rc.client.listPrompts()).prompts.map((p) => p.name),
      ["review"],
    );
    await rc.client.close();
  });

  it("a token without the server's own scope gets a step-up challenge for it", async () => {
    const token = (await oauthClient.tokens("acme/eng", alice, "mcp:read mcp:tools")).access_token;
    const res = await postRpcWithToken(`${issuer}/mcp/acme/eng`, token, INIT);
    assert.equal(res.status, 403);
    assert.match(
      res.headers.get("www-authenticate") ?? "",
      /error="insufficient_scope", scope="mcp:read mcp:tools eng"/,
    );
  });

  it("a server's scope is unknown for the tenant's URL, and a missing server is no resource", async () => {
    const { url } = await oauthClient.authorizationUrl("acme", "mcp:read eng");
    const refused = await fetch(url, { redirect: "manual" });
    assert.equal(refused.status, 302);
    assert.equal(new URL(refused.headers.get("location")!).searchParams.get("error"), "invalid_scope");
    const { url: nowhere } = await oauthClient.authorizationUrl("acme/nope");
    const target = await fetch(nowhere, { redirect: "manual" });
    assert.equal(new URL(target.headers.get("location")!).searchParams.get("error"), "invalid_target");
  });

  it("a fixed external audience is refused while the tenant has servers, and servers while it has one", async () => {
    const admin = new AdminClient(portico.url);
    const external = { type: "external", issuer: "https://idp.example", jwksUrl: "https://idp.example/jwks" };
    const fixed = await admin.put("/tenants/acme/identity", { ...external, audience: "api://acme" });
    assert.equal(fixed.status, 422);
    assert.equal(fixed.body.pointer, "/audience");
    assert.equal((await admin.get("/tenants/acme/identity")).body.type, "local");
    const created = await admin.post("/tenants", { id: "ext", auth: "oauth" });
    assert.equal(created.status, 201);
    assert.equal(
      (await admin.put("/tenants/ext/identity", { ...external, audience: "api://ext" })).status,
      200,
    );
    await admin.post("/tenants/ext/providers", { id: "docs", kind: "static" });
    const server = await admin.post("/tenants/ext/servers", { id: "eng", providers: [{ provider: "docs" }] });
    assert.equal(server.status, 422);
    assert.match(server.body.detail, /fixed audience/);
  });
});

describe("the SDK's own OAuth on a virtual server", () => {
  it("discovers the server's metadata from its 401, asks for its scopes and audience, and connects", async () => {
    const provider = new MemoryOAuthProvider("virtual server SDK");
    const url = new URL(`${issuer}/mcp/acme/eng`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await assert.rejects(new Client({ name: "sdk-oauth", version: "1" }).connect(first), UnauthorizedError);
    const authorize = provider.authorizationUrl;
    assert.ok(authorize, "the SDK was sent to the authorization endpoint");
    assert.equal(authorize.searchParams.get("resource"), `${issuer}/mcp/acme/eng`);
    assert.deepEqual(authorize.searchParams.get("scope")?.split(" ").sort(), [
      "eng",
      "mcp:read",
      "mcp:tools",
    ]);
    await first.finishAuth(await signInAt(issuer, authorize, alice));
    const client = new Client({ name: "sdk-oauth", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    assert.deepEqual(
      (await client.listPrompts()).prompts.map((p) => p.name),
      ["review"],
    );
    await client.close();
    // The token it got names the server: the tenant's URL does not take it.
    const res = await postRpcWithToken(`${issuer}/mcp/acme`, provider.saved!.access_token, INIT);
    assert.equal(res.status, 401);
  });
});
