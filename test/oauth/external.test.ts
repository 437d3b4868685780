// A tenant that trusts an external authorization server: tokens it signs are verified against its
// JWKS (served here over loopback, fetched through the provider egress policy and cached) for
// issuer, audience, lifetime and an asymmetric algorithm; the tenant's PRM names that server, and
// Portico's own authorization server refuses to issue tokens for it.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import * as oauth from "oauth4webapi";
import { UserStore } from "../../src/oauth/users.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { insecure, TestOAuthClient } from "../support/oauth.js";
import { initializeWithToken, MCP_HEADERS } from "../support/rpc.js";

const EXTERNAL_ISSUER = "https://idp.acme.example";
let portico: RunningPortico;
let jwksServer: Server;
let jwksHits = 0;
let signingKey: CryptoKey;
let strangerKey: CryptoKey;

before(async () => {
  const pair = await generateKeyPair("ES256", { extractable: true });
  signingKey = pair.privateKey;
  ({ privateKey: strangerKey } = await generateKeyPair("ES256"));
  const signingPublic = await exportJWK(pair.publicKey);
  const jwks = JSON.stringify({ keys: [{ ...signingPublic, kid: "ext-1", alg: "ES256", use: "sig" }] });
  jwksServer = createServer((_req, res) => {
    jwksHits += 1;
    res.writeHead(200, { "content-type": "application/json" }).end(jwks);
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
  const port = await freePort();
  portico = await startPortico({
    tenants: [
      {
        ...staticTenant("ext"),
        auth: "oauth",
        identity: { type: "external", issuer: EXTERNAL_ISSUER, jwksUrl },
        servers: [{ id: "eng", scopes: ["eng"], providers: [{ provider: "docs" }] }],
      },
      {
        ...staticTenant("ext-aud"),
        auth: "oauth",
        identity: { type: "external", issuer: EXTERNAL_ISSUER, jwksUrl, audience: "api://portico" },
      },
      {
        ...staticTenant("ext-groups"),
        auth: "oauth",
        identity: {
          type: "external",
          issuer: EXTERNAL_ISSUER,
          jwksUrl,
          groupsClaim: "grp",
          rolesClaim: "app.roles",
        },
        policy: {
          default: "deny",
          rules: [
            { effect: "allow", subjects: { roles: ["reader"] }, resources: ["perf://*"] },
            { effect: "allow", subjects: { groups: ["writers"] }, prompts: ["*"] },
          ],
        },
      },
      { ...staticTenant("local"), auth: "oauth" },
      { ...staticTenant("switch"), auth: "oauth" },
    ],
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
  await new UserStore(portico.store, portico.keys).create("switch", {
    username: "ada",
    password: "correct horse battery",
  });
});
after(async () => {
  await portico.close();
  await new Promise((resolve) => jwksServer.close(resolve));
});

const now = () => Math.floor(Date.now() / 1000);

/** A token as the external server would sign it, with `claims` overriding the defaults. */
function mint(claims: JWTPayload = {}, options: { key?: CryptoKey; kid?: string } = {}) {
  return new SignJWT({
    client_id: "acme-cli",
    scope: "mcp:read mcp:tools",
    iss: EXTERNAL_ISSUER,
    aud: portico.mcpUrl("ext"),
    sub: "user-7",
    iat: now(),
    exp: now() + 300,
    ...claims,
  })
    .setProtectedHeader({ alg: "ES256", kid: options.kid ?? "ext-1", typ: "at+jwt" })
    .sign(options.key ?? signingKey);
}

function unsigned(claims: JWTPayload): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ iss: EXTERNAL_ISSUER, aud: portico.mcpUrl("ext"), sub: "user-7", scope: "mcp:read mcp:tools", exp: now() + 300, ...claims })}.`;
}

function initialize(tenant: string, token: string) {
  return initializeWithToken(portico.mcpUrl(tenant), token);
}

async function refused(res: Response) {
  assert.equal(res.status, 401);
  const challenge = res.headers.get("www-authenticate")!;
  assert.match(challenge, /error="invalid_token"/);
  assert.match(challenge, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp\/ext"/);
}

it("accepts a token the external server signed for the tenant's MCP URL", async () => {
  const res = await initialize("ext", await mint());
  assert.equal(res.status, 200, await res.clone().text());
  assert.ok(res.headers.get("mcp-session-id"));
});

it("accepts the MCP URL with a trailing slash as audience, not another tenant's (docs/oauth.md#client-quirks)", async () => {
  assert.equal((await initialize("ext", await mint({ aud: `${portico.mcpUrl("ext")}/` }))).status, 200);
  await refused(await initialize("ext", await mint({ aud: `${portico.mcpUrl("local")}/` })));
  await refused(await initialize("ext", await mint({ aud: `${portico.mcpUrl("ext")}//` })));
});

it("refuses a wrong issuer, a wrong audience, an expired token and a foreign key with 401", async () => {
  await refused(await initialize("ext", await mint({ iss: "https://evil.example" })));
  await refused(await initialize("ext", await mint({ aud: portico.mcpUrl("local") })));
  await refused(await initialize("ext", await mint({ exp: now() - 120, iat: now() - 600 })));
  await refused(await initialize("ext", await mint({ nbf: now() + 120 })));
  await refused(await initialize("ext", await mint({}, { key: strangerKey })));
  await refused(await initialize("ext", await mint({ sub: undefined })));
});

it("tolerates 30 s of clock skew on exp", async () => {
  assert.equal((await initialize("ext", await mint({ exp: now() - 10, iat: now() - 300 }))).status, 200);
});

it('refuses alg "none" and HS256 tokens', async () => {
  await refused(await initialize("ext", unsigned({})));
  const secret = new TextEncoder().encode("a-shared-secret-that-is-long-enough-for-hs256");
  const hs = await new SignJWT({ scope: "mcp:read mcp:tools", client_id: "acme-cli" })
    .setProtectedHeader({ alg: "HS256", kid: "ext-1" })
    .setIssuer(EXTERNAL_ISSUER)
    .setAudience(portico.mcpUrl("ext"))
    .setSubject("user-7")
    .setExpirationTime("5m")
    .sign(secret);
  await refused(await initialize("ext", hs));
});

it("reads scopes from scope or scp; a token without mcp scopes gets 403", async () => {
  const scp = await mint({ scope: undefined, scp: ["mcp:read"], client_id: undefined, azp: "acme-web" });
  assert.equal((await initialize("ext", scp)).status, 200);
  const none = await initialize("ext", await mint({ scope: "openid profile" }));
  assert.equal(none.status, 403);
  assert.match(none.headers.get("www-authenticate")!, /error="insufficient_scope"/);
});

it("sessions are bound to `sub via client_id` (or azp)", async () => {
  const opened = await initialize("ext", await mint({ client_id: undefined, azp: "acme-web" }));
  const sid = opened.headers.get("mcp-session-id")!;
  const notify = async (token: string) =>
    (
      await fetch(portico.mcpUrl("ext"), {
        method: "POST",
        headers: {
          ...MCP_HEADERS,
          authorization: `Bearer ${token}`,
          "mcp-session-id": sid,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      })
    ).status;
  assert.equal(await notify(await mint({ client_id: "acme-web" })), 202, "same user, same client");
  assert.equal(await notify(await mint({ sub: "user-8", client_id: "acme-web" })), 404, "another user");
  assert.equal(await notify(await mint()), 404, "the same user through another client");
});

it("a configured audience replaces the MCP URL", async () => {
  assert.equal((await initialize("ext-aud", await mint({ aud: "api://portico" }))).status, 200);
  const mcpUrl = await initialize("ext-aud", await mint({ aud: portico.mcpUrl("ext-aud") }));
  assert.equal(mcpUrl.status, 401);
});

it("fetches the key set once, and an unknown kid at most once per cooldown", async () => {
  const before = jwksHits;
  for (let i = 0; i < 3; i++) assert.equal((await initialize("ext", await mint())).status, 200);
  assert.equal(jwksHits, before, "the key set is cached");
  for (let i = 0; i < 3; i++)
    assert.equal((await initialize("ext", await mint({}, { kid: `forged-${i}` }))).status, 401);
  assert.ok(jwksHits - before <= 1, `refetched ${jwksHits - before} times`);
});

it("the tenant's Protected Resource Metadata names the external issuer", async () => {
  const prm = (await (
    await fetch(`${portico.url}/.well-known/oauth-protected-resource/mcp/ext`)
  ).json()) as Record<string, unknown>;
  assert.equal(prm.resource, portico.mcpUrl("ext"));
  assert.deepEqual(prm.authorization_servers, [EXTERNAL_ISSUER]);
  const local = (await (
    await fetch(`${portico.url}/.well-known/oauth-protected-resource/mcp/local`)
  ).json()) as Record<string, unknown>;
  assert.deepEqual(local.authorization_servers, [portico.url]);
});

it("Portico's own authorization server refuses to issue tokens for the tenant (invalid_target)", async () => {
  const { url } = await (await TestOAuthClient.register(portico.url)).authorizationUrl("ext");
  url.searchParams.set("state", "s1");
  const res = await fetch(url, { redirect: "manual" });
  assert.equal(res.status, 302);
  const back = new URL(res.headers.get("location")!);
  assert.equal(back.searchParams.get("error"), "invalid_target");
  assert.equal(back.searchParams.get("state"), "s1");
  // Nor does its login page offer the tenant when the client names no resource.
  url.searchParams.delete("resource");
  const login = await (await fetch(url, { redirect: "manual" })).text();
  assert.match(login, /<option value="local">/);
  assert.doesNotMatch(login, /<option value="ext"/);
});

it("once a tenant trusts an external server, Portico's refresh tokens for it get invalid_target", async () => {
  const client = await TestOAuthClient.register(portico.url);
  const tokens = await client.tokens(
    "switch",
    { username: "ada", password: "correct horse battery" },
    "mcp:read mcp:tools offline_access",
  );
  assert.equal((await initialize("switch", tokens.access_token)).status, 200);

  await portico.registry.seed({
    ...staticTenant("switch"),
    auth: "oauth",
    identity: { type: "external", issuer: EXTERNAL_ISSUER, jwksUrl: "http://127.0.0.1:9/jwks.json" },
  });
  const refresh = await oauth.refreshTokenGrantRequest(
    client.as,
    client.client,
    oauth.None(),
    tokens.refresh_token!,
    insecure,
  );
  assert.equal(refresh.status, 400);
  assert.equal(((await refresh.json()) as { error: string }).error, "invalid_target");
  assert.equal(
    (await initialize("switch", tokens.access_token)).status,
    401,
    "Portico's token no longer counts there",
  );
});

it("a virtual server of the tenant is an audience of its own at the external server, with its own scopes", async () => {
  const server = `${portico.mcpUrl("ext")}/eng`;
  const prm = await fetch(`${portico.url}/.well-known/oauth-protected-resource/mcp/ext/eng`);
  const doc = (await prm.json()) as Record<string, unknown>;
  assert.equal(doc.resource, server);
  assert.deepEqual(doc.authorization_servers, [EXTERNAL_ISSUER]);
  assert.deepEqual(doc.scopes_supported, ["mcp:read", "mcp:tools", "eng"]);
  const tenantToken = await mint({ scope: "mcp:read mcp:tools eng" });
  assert.equal((await initializeWithToken(server, tenantToken)).status, 401, "the tenant's audience");
  const serverToken = await mint({ aud: server, scope: "mcp:read mcp:tools eng" });
  assert.equal((await initializeWithToken(server, serverToken)).status, 200);
  assert.equal(
    (await initializeWithToken(portico.mcpUrl("ext"), serverToken)).status,
    401,
    "and not the other way",
  );
  const withoutScope = await initializeWithToken(server, await mint({ aud: server }));
  assert.equal(withoutScope.status, 403);
  assert.match(
    withoutScope.headers.get("www-authenticate") ?? "",
    /insufficient_scope.*scope="mcp:read mcp:tools eng"/,
  );
});

it("groups and roles come from the token claims the identity settings name, for the tenant's policy", async () => {
  const lists = async (claims: JWTPayload) => {
    const token = await mint({ aud: portico.mcpUrl("ext-groups"), ...claims });
    const opened = await initialize("ext-groups", token);
    assert.equal(opened.status, 200);
    const list = async (method: string) => {
      const res = await fetch(portico.mcpUrl("ext-groups"), {
        method: "POST",
        headers: {
          ...MCP_HEADERS,
          authorization: `Bearer ${token}`,
          "mcp-session-id": opened.headers.get("mcp-session-id")!,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method, params: {} }),
      });
      const { result } = (await res.json()) as { result: Record<string, Array<{ name: string }>> };
      return (result.resources ?? result.prompts)!.map((e) => e.name);
    };
    return { resources: await list("resources/list"), prompts: await list("prompts/list") };
  };
  assert.deepEqual(await lists({ app: { roles: ["reader"] } }), { resources: ["hello"], prompts: [] });
  assert.deepEqual(await lists({ grp: "writers" }), { resources: [], prompts: ["code-review"] }, "one name");
  assert.deepEqual(
    await lists({ roles: ["reader"], groups: ["writers"] }),
    { resources: [], prompts: [] },
    "other claims are not read",
  );
});
