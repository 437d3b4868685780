// Hostile input at the authorization server and the resource server: each refused with the
// right status, nothing redirected to an unverified place, nothing issued.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import * as oauth from "oauth4webapi";
import { ClientStore } from "../../src/oauth/clients.js";
import { UserStore } from "../../src/oauth/users.js";
import { formOf, insecure, REDIRECT_URI, TestOAuthClient } from "../support/oauth.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { MCP_HEADERS } from "../support/rpc.js";

let portico: RunningPortico;
let issuer: string;
let a: TestOAuthClient;
let b: TestOAuthClient;
const ada = { username: "ada", password: "correct horse battery" };

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
  await new UserStore(portico.store, portico.keys).create("acme", ada);
  a = await TestOAuthClient.register(issuer, "Client A");
  b = await TestOAuthClient.register(issuer, "Client B");
});
after(() => portico.close());

function authorizeUrl(params: Record<string, string>): string {
  const base = {
    client_id: a.client.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "st",
    resource: `${issuer}/mcp/acme`,
  };
  return `${issuer}/oauth/authorize?${new URLSearchParams({ ...base, ...params })}`;
}

it("redirect URIs that are not exactly registered get an error page, never a redirect", async () => {
  for (const redirect_uri of [
    `${REDIRECT_URI}/../evil`,
    `${REDIRECT_URI}?next=https://evil.example`,
    `${REDIRECT_URI}#x`,
    "http://127.0.0.1:9999.evil.example/callback",
    "https://127.0.0.1:9999/callback",
    "http://localhost:9999/callback",
    "http://evil.example/callback",
    "javascript:alert(1)",
  ]) {
    const res = await fetch(authorizeUrl({ redirect_uri }), { redirect: "manual" });
    assert.equal(res.status, 400, redirect_uri);
    assert.equal(res.headers.get("location"), null, redirect_uri);
  }
  for (const client_id of ["unknown-client", "https://127.0.0.1/client.json", "https://169.254.169.254/c"]) {
    const res = await fetch(authorizeUrl({ client_id }), { redirect: "manual" });
    assert.equal(res.status, 400, client_id);
    assert.equal(res.headers.get("location"), null);
  }
});

it("errors after the redirect URI is verified go back to it with state and iss", async () => {
  for (const [params, error] of [
    [{ response_type: "token" }, "unsupported_response_type"],
    [{ scope: "admin" }, "invalid_scope"],
    [{ resource: "https://evil.example/mcp/acme" }, "invalid_target"],
    [{ resource: `${issuer}/mcp/nope` }, "invalid_target"],
  ] as const) {
    const res = await fetch(authorizeUrl(params), { redirect: "manual" });
    assert.equal(res.status, 302);
    const back = new URL(res.headers.get("location")!);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get("error"), error);
    assert.equal(back.searchParams.get("state"), "st");
    assert.equal(back.searchParams.get("iss"), issuer);
  }
});

it("forms without the browser's flow cookie or with a wrong CSRF token are refused", async () => {
  const page = await fetch(authorizeUrl({}), { redirect: "manual" });
  const fields = formOf(await page.text());
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const post = (headers: Record<string, string>, extra: Record<string, string>) =>
    fetch(`${issuer}/oauth/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams({ ...fields, ...ada, ...extra }),
    });
  assert.equal((await post({}, {})).status, 400, "no cookie");
  assert.equal((await post({ cookie }, { csrf: "A".repeat(22) })).status, 400, "wrong csrf");
  const consent = await fetch(`${issuer}/oauth/consent`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ ...fields, decision: "allow" }),
  });
  assert.equal(consent.status, 400, "consent before signing in");
  const wrong = await post({ cookie }, { password: "wrong" });
  assert.equal(wrong.status, 401);
  assert.match(await wrong.text(), /Wrong username or password/);
});

it("a code issued to one client cannot be redeemed by another", async () => {
  const { location, verifier, state } = await a.authorize("acme", ada);
  const params = oauth.validateAuthResponse(a.as, a.client, location, state);
  const stolen = await oauth.authorizationCodeGrantRequest(
    b.as,
    b.client,
    oauth.None(),
    params,
    REDIRECT_URI,
    verifier,
    insecure,
  );
  await assert.rejects(oauth.processAuthorizationCodeResponse(b.as, b.client, stolen));
});

it("the resource server refuses forged tokens: alg none, another issuer's, garbage", async () => {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: issuer,
    sub: "u",
    aud: `${issuer}/mcp/acme`,
    client_id: "c",
    scope: "mcp:read mcp:tools",
    iat: now,
    exp: now + 600,
    jti: "AAAAAAAAAAAAAAAAAAAAAA",
  };
  for (const token of [
    `${b64({ alg: "none", typ: "at+jwt" })}.${b64(claims)}.`,
    `${b64({ alg: "HS256", typ: "at+jwt" })}.${b64(claims)}.${"x".repeat(43)}`,
    "not-a-jwt",
  ]) {
    const res = await fetch(`${issuer}/mcp/acme`, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {} },
      }),
    });
    assert.equal(res.status, 401, token.slice(0, 30));
    assert.match(res.headers.get("www-authenticate")!, /error="invalid_token"/);
  }
  const query = await fetch(`${issuer}/mcp/acme?access_token=x`, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(query.status, 401, "tokens in the query string are not accepted");
});

it("a code presented by another client or without its verifier burns nothing: its owner still redeems it and keeps its tokens", async () => {
  const post = (fields: Record<string, string>) =>
    fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", redirect_uri: REDIRECT_URI, ...fields }),
    });
  const { location, verifier, state } = await a.authorize("acme", ada);
  const code = location.searchParams.get("code")!;
  // Someone who saw the code (a log, a squatted loopback port) but holds no verifier.
  const stranger = await post({ client_id: b.client.client_id, code, code_verifier: verifier });
  assert.equal(((await stranger.json()) as { error: string }).error, "invalid_grant");
  const guessed = await post({ client_id: a.client.client_id, code, code_verifier: "x".repeat(43) });
  assert.equal(((await guessed.json()) as { error: string }).error, "invalid_grant");
  const tokens = await a.exchange(location, verifier, state);
  assert.ok(tokens.access_token, "the owner redeems its code after the stranger's attempts");
  // After the owner's redemption, a stranger's replay does not revoke the owner's grant.
  const late = await post({ client_id: b.client.client_id, code, code_verifier: verifier });
  assert.equal(((await late.json()) as { error: string }).error, "invalid_grant");
  const refreshed = await a.refresh(tokens.refresh_token!);
  assert.ok(refreshed.access_token, "the owner's grant was not revoked by a stranger's replay");
  // The owner's own replay (code and verifier both leaked) still revokes everything it issued.
  const replay = await post({ client_id: a.client.client_id, code, code_verifier: verifier });
  assert.equal(((await replay.json()) as { error: string }).error, "invalid_grant");
  await assert.rejects(a.refresh(refreshed.refresh_token!));
});

it("the token endpoint: unknown grant types, missing PKCE verifier, duplicated parameters", async () => {
  const post = (body: string) =>
    fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
  const unsupported = await post(`grant_type=password&client_id=${a.client.client_id}`);
  assert.equal(unsupported.status, 400);
  assert.equal(((await unsupported.json()) as { error: string }).error, "unsupported_grant_type");
  assert.equal(unsupported.headers.get("cache-control"), "no-store");
  const { location } = await a.authorize("acme", ada);
  const code = location.searchParams.get("code")!;
  const noVerifier = await post(
    new URLSearchParams({
      grant_type: "authorization_code",
      client_id: a.client.client_id,
      code,
      redirect_uri: REDIRECT_URI,
    }).toString(),
  );
  assert.equal(((await noVerifier.json()) as { error: string }).error, "invalid_grant");
  const twice = await post(
    `grant_type=authorization_code&grant_type=refresh_token&client_id=${a.client.client_id}`,
  );
  assert.equal(((await twice.json()) as { error: string }).error, "invalid_request");
  const noClient = await post("grant_type=authorization_code&code=x");
  assert.equal(noClient.status, 401);
  assert.equal(((await noClient.json()) as { error: string }).error, "invalid_client");
});

it("a client pre-registered for one tenant cannot be authorized for another", async () => {
  const pre = await new ClientStore(portico.store, portico.keys).preRegister("acme", {
    redirect_uris: [REDIRECT_URI],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  });
  const res = await fetch(authorizeUrl({ client_id: pre.client_id, resource: `${issuer}/mcp/other` }), {
    redirect: "manual",
  });
  assert.equal(res.status, 302);
  assert.equal(new URL(res.headers.get("location")!).searchParams.get("error"), "invalid_target");
  const own = await fetch(authorizeUrl({ client_id: pre.client_id }), { redirect: "manual" });
  assert.equal(own.status, 200, "its own tenant is fine");
  const chosen = await fetch(authorizeUrl({ client_id: pre.client_id, resource: "" }), {
    redirect: "manual",
  });
  assert.doesNotMatch(await chosen.text(), /<select/, "no tenant picker: the client's tenant is implied");
});

it("bodies the endpoints cannot read get RFC 6749 errors, not framework ones", async () => {
  const send = (path: string, contentType: string, body: string) =>
    fetch(`${issuer}${path}`, { method: "POST", headers: { "content-type": contentType }, body });
  const json = await send("/oauth/token", "application/json", '{"grant_type":"authorization_code"}');
  assert.equal(json.status, 400);
  assert.deepEqual(await json.json(), {
    error: "invalid_request",
    error_description: "send an application/x-www-form-urlencoded body",
  });
  const broken = await send("/oauth/register", "application/json", "{bad");
  assert.equal(broken.status, 400);
  assert.equal(((await broken.json()) as { error: string }).error, "invalid_request");
  const huge = await send("/oauth/token", "application/x-www-form-urlencoded", "a".repeat(5 * 1024 * 1024));
  assert.equal(huge.status, 413);
  assert.deepEqual(await huge.json(), {
    error: "invalid_request",
    error_description: "the body is too large",
  });
});
