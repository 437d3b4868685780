// The whole OAuth flow with oauth4webapi as a strict client: discovery, dynamic registration,
// authorization code + PKCE through the login and consent forms (driven as a browser would),
// iss validation, tokens on the tenant's MCP endpoint, refresh rotation with reuse detection,
// and revocation; plus the resource server's challenges.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import * as oauth from "oauth4webapi";
import { UserStore } from "../../src/oauth/users.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { formOf, insecure, REDIRECT_URI, TestOAuthClient } from "../support/oauth.js";
import { MCP_HEADERS } from "../support/rpc.js";

let portico: RunningPortico;
let issuer: string;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let testClient: TestOAuthClient;
const redirectUri = REDIRECT_URI;

before(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  portico = await startPortico({
    tenants: [
      { ...staticTenant("acme"), auth: "oauth" },
      { ...staticTenant("other"), auth: "oauth" },
    ],
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer },
  });
  const users = new UserStore(portico.store, portico.keys);
  await users.create("acme", { username: "ada", password: "correct horse battery" });
  testClient = await TestOAuthClient.register(issuer);
  ({ as, client } = testClient);
});
after(() => portico.close());

/** Follows the login and consent forms the way a browser would; returns the redirect back. */
async function authorize(tenant: string, scope = "mcp:read mcp:tools") {
  const { url, verifier, state } = await testClient.authorizationUrl(tenant, scope);
  const page = await fetch(url, { redirect: "manual" });
  assert.equal(page.status, 200);
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${issuer}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams(fields),
    });
  const loginHtml = await page.text();
  assert.match(loginHtml, /autocomplete="username"/);
  assert.match(loginHtml, /autocomplete="current-password"/);
  const consent = await post("/oauth/login", {
    ...formOf(loginHtml),
    username: "ada",
    password: "correct horse battery",
  });
  let back = consent;
  if (consent.status === 200) {
    const html = await consent.text();
    assert.match(html, /Test Client/);
    assert.match(html, new RegExp(redirectUri.replaceAll("/", "\\/")));
    assert.equal(consent.headers.get("x-frame-options"), "DENY");
    back = await post("/oauth/consent", { ...formOf(html), decision: "allow" });
  }
  assert.equal(back.status, 303);
  return { location: new URL(back.headers.get("location")!), verifier, state };
}

async function tokensFor(tenant: string) {
  const { location, verifier, state } = await authorize(tenant);
  return testClient.exchange(location, verifier, state);
}

function mcp(tenant: string, token?: string) {
  return fetch(`${issuer}/mcp/${tenant}`, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
}

it("without a token, an oauth tenant answers 401 pointing at its metadata", async () => {
  const res = await mcp("acme");
  assert.equal(res.status, 401);
  const challenge = res.headers.get("www-authenticate")!;
  assert.match(
    challenge,
    new RegExp(`resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp/acme"`),
  );
  assert.match(challenge, /scope="mcp:read mcp:tools"/);
  const prm = (await (
    await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp/acme`)
  ).json()) as Record<string, unknown>;
  assert.equal(prm.resource, `${issuer}/mcp/acme`);
  assert.deepEqual(prm.authorization_servers, [issuer]);
  assert.deepEqual(prm.bearer_methods_supported, ["header"]);
});

it("code + PKCE through login and consent gives a token that works on its tenant only", async () => {
  const tokens = await tokensFor("acme");
  assert.equal(tokens.token_type, "bearer");
  assert.ok(tokens.refresh_token);
  const ok = await mcp("acme", tokens.access_token);
  assert.equal(ok.status, 200);
  const elsewhere = await mcp("other", tokens.access_token);
  assert.equal(elsewhere.status, 401);
  assert.match(elsewhere.headers.get("www-authenticate")!, /error="invalid_token"/);
});

it("refresh tokens rotate; reusing one revokes the family", async () => {
  const first = await tokensFor("acme");
  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure),
  );
  assert.notEqual(refreshed.refresh_token, first.refresh_token);
  assert.equal((await mcp("acme", refreshed.access_token)).status, 200);
  const reuse = await oauth.refreshTokenGrantRequest(
    as,
    client,
    oauth.None(),
    first.refresh_token!,
    insecure,
  );
  await assert.rejects(
    oauth.processRefreshTokenResponse(as, client, reuse),
    /invalid_grant|server responded with an error/,
  );
  assert.equal(
    (await mcp("acme", refreshed.access_token)).status,
    401,
    "the family's access token is revoked",
  );
  const again = await oauth.refreshTokenGrantRequest(
    as,
    client,
    oauth.None(),
    refreshed.refresh_token!,
    insecure,
  );
  await assert.rejects(oauth.processRefreshTokenResponse(as, client, again));
});

it("a replayed code fails and revokes what it issued", async () => {
  const { location, verifier, state } = await authorize("acme");
  const params = oauth.validateAuthResponse(as, client, location, state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      redirectUri,
      verifier,
      insecure,
    ),
  );
  const replay = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri,
    verifier,
    insecure,
  );
  await assert.rejects(oauth.processAuthorizationCodeResponse(as, client, replay));
  assert.equal((await mcp("acme", tokens.access_token)).status, 401);
});

it("revocation (RFC 7009) ends a refresh token's grant", async () => {
  const tokens = await tokensFor("acme");
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
  );
  assert.equal((await mcp("acme", tokens.access_token)).status, 401);
});

it("PKCE is required, S256 only; a wrong verifier fails", async () => {
  const base = {
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: "code",
    state: "s1",
    resource: `${issuer}/mcp/acme`,
  };
  for (const extra of [{}, { code_challenge: "x".repeat(43), code_challenge_method: "plain" }] as Record<
    string,
    string
  >[]) {
    const res = await fetch(`${as.authorization_endpoint}?${new URLSearchParams({ ...base, ...extra })}`, {
      redirect: "manual",
    });
    assert.equal(res.status, 302);
    const back = new URL(res.headers.get("location")!);
    assert.equal(back.searchParams.get("error"), "invalid_request");
    assert.equal(back.searchParams.get("state"), "s1");
    assert.equal(back.searchParams.get("iss"), issuer);
  }
  const { location, state } = await authorize("acme");
  const params = oauth.validateAuthResponse(as, client, location, state);
  const wrong = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri,
    oauth.generateRandomCodeVerifier(),
    insecure,
  );
  await assert.rejects(oauth.processAuthorizationCodeResponse(as, client, wrong));
});

it("a redirect_uri that was not registered gets an error page, never a redirect", async () => {
  const res = await fetch(
    `${as.authorization_endpoint}?${new URLSearchParams({ client_id: client.client_id, redirect_uri: "https://evil.example/cb", response_type: "code", code_challenge: "x".repeat(43), code_challenge_method: "S256" })}`,
    { redirect: "manual" },
  );
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("location"), null);
  assert.match(await res.text(), /Invalid redirect URI/);
});
