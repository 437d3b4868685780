// OAuth grant rules (docs/security.md "OAuth grant rules"), through the real endpoints with
// oauth4webapi as the client: RFC 7009 §2.1 (revoking another client's token changes nothing),
// refresh tokens by the client's registered grant_types (RFC 7591 §2; MCP 2026-07-28
// authorization "Refresh Tokens"), offline_access in the AS metadata only, redirect_uri at the
// token endpoint (OAuth 2.1 §4.1.3), and the authorization endpoint's error path (never a 500, never
// a redirect to a URI that was not verified).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as oauth from "oauth4webapi";
import { ResourceServer } from "../../src/auth/resource-server.js";
import { ClientMetadataFetcher, type ClientIdMetadata } from "../../src/oauth/client-metadata.js";
import { ClientStore, validateRegistration } from "../../src/oauth/clients.js";
import { insecure, REDIRECT_URI, TestOAuthClient } from "../support/oauth.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";
import { initializeWithToken, MCP_HEADERS } from "../support/rpc.js";

const ada = { username: "ada", password: "correct horse battery staple" };
let portico: RunningPortico;
let issuer: string;
/** Registered with ["authorization_code", "refresh_token"], as the MCP SDK's clients are. */
let alice: TestOAuthClient;
let mallory: TestOAuthClient;
/** Registered with the RFC 7591 default, ["authorization_code"]. */
let codeOnly: TestOAuthClient;

before(async () => {
  ({ portico, issuer } = await startIssuer({ tenant: "acme", users: [ada] }));
  alice = await TestOAuthClient.register(issuer, "Alice's app");
  mallory = await TestOAuthClient.register(issuer, "Mallory's app");
  codeOnly = await TestOAuthClient.register(issuer, "Code only", ["authorization_code"]);
});
after(() => portico.close());

const mcpStatus = async (token: string) => (await initializeWithToken(`${issuer}/mcp/acme`, token)).status;

/** A raw form POST to an OAuth endpoint (to send what oauth4webapi would not). */
async function form(path: string, fields: Record<string, string>) {
  const res = await fetch(`${issuer}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, string>) };
}

const revoke = (who: TestOAuthClient, token: string) =>
  oauth.revocationRequest(who.as, who.client, oauth.None(), token, insecure);

describe("RFC 7009 §2.1: a client revoking another client's token changes nothing", () => {
  it("another client's refresh token: 200, and its owner still refreshes and calls", async () => {
    const tokens = await alice.tokens("acme", ada);
    const res = await revoke(mallory, tokens.refresh_token!);
    assert.equal(res.status, 200);
    assert.equal(await mcpStatus(tokens.access_token), 200, "the grant was not revoked");
    // Not marked rotated either: a rotated token presented again would revoke the whole grant.
    const refreshed = await alice.refresh(tokens.refresh_token!);
    assert.ok(refreshed.access_token);
    assert.equal(await mcpStatus(refreshed.access_token), 200);
  });

  it("another client's access token: 200, and it still works", async () => {
    const tokens = await alice.tokens("acme", ada);
    assert.equal((await revoke(mallory, tokens.access_token)).status, 200);
    assert.equal(await mcpStatus(tokens.access_token), 200);
  });

  it("the owner's revocation still works, for both kinds", async () => {
    const first = await alice.tokens("acme", ada);
    await oauth.processRevocationResponse(await revoke(alice, first.access_token));
    assert.equal(await mcpStatus(first.access_token), 401);
    const second = await alice.tokens("acme", ada);
    await oauth.processRevocationResponse(await revoke(alice, second.refresh_token!));
    assert.equal(await mcpStatus(second.access_token), 401);
    await assert.rejects(alice.refresh(second.refresh_token!));
  });

  it("another client presenting a refresh token at the token endpoint gets invalid_grant and burns nothing", async () => {
    const tokens = await alice.tokens("acme", ada);
    const stolen = await form("/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: mallory.client.client_id,
    });
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body!.error, "invalid_grant");
    assert.doesNotMatch(stolen.body!.error_description!, /another client/);
    const refreshed = await alice.refresh(tokens.refresh_token!);
    assert.equal(await mcpStatus(refreshed.access_token), 200);
  });
});

describe("refresh tokens follow the client's registered grant_types", () => {
  it("a client registered with refresh_token gets one, without asking for offline_access", async () => {
    const tokens = await alice.tokens("acme", ada, "mcp:read mcp:tools");
    assert.equal(typeof tokens.refresh_token, "string");
  });

  it("a client without it never gets one, even asking for offline_access", async () => {
    for (const scope of ["mcp:read mcp:tools", "mcp:read mcp:tools offline_access"]) {
      const tokens = await codeOnly.tokens("acme", ada, scope);
      assert.equal(tokens.refresh_token, undefined, scope);
      assert.equal(await mcpStatus(tokens.access_token), 200);
    }
  });

  it("a client without it cannot use one: unauthorized_client, and the token's owner is untouched", async () => {
    const tokens = await alice.tokens("acme", ada);
    const res = await form("/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: codeOnly.client.client_id,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body!.error, "unauthorized_client");
    assert.ok((await alice.refresh(tokens.refresh_token!)).access_token);
  });

  it("the refreshed response of an allowed client carries a new refresh token", async () => {
    const tokens = await alice.tokens("acme", ada);
    const refreshed = await alice.refresh(tokens.refresh_token!);
    assert.equal(typeof refreshed.refresh_token, "string");
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
  });
});

describe("a client pre-registered for the tenant (admin API): the same rule", () => {
  const preRegistered = async (grantTypes?: string[]) => {
    const metadata = validateRegistration({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      client_name: "pre-registered",
      ...(grantTypes ? { grant_types: grantTypes } : {}),
    });
    const { client_id } = await new ClientStore(portico.store, portico.keys).preRegister("acme", metadata);
    return TestOAuthClient.forClient(issuer, client_id);
  };

  it("registered without refresh_token (the RFC 7591 default): no refresh token, even for offline_access", async () => {
    const client = await preRegistered();
    const tokens = await client.tokens("acme", ada, "mcp:read mcp:tools offline_access");
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(await mcpStatus(tokens.access_token), 200);
    const theirs = (await alice.tokens("acme", ada)).refresh_token!;
    await assert.rejects(
      client.refresh(theirs),
      (err: { error?: string }) => err.error === "unauthorized_client",
    );
    assert.equal(
      typeof (await alice.refresh(theirs)).access_token,
      "string",
      "the owner's token is untouched",
    );
  });

  it("registered with refresh_token: one, and it refreshes", async () => {
    const client = await preRegistered(["authorization_code", "refresh_token"]);
    const tokens = await client.tokens("acme", ada);
    assert.equal(typeof tokens.refresh_token, "string");
    assert.equal(typeof (await client.refresh(tokens.refresh_token!)).access_token, "string");
  });
});

describe("a metadata-document client: refresh tokens follow its document as it reads now", () => {
  const clientId = "https://app.example/clients/portico.json";
  let grantTypes = ["authorization_code", "refresh_token"];
  const fetched: string[] = [];
  const resolve = Object.getOwnPropertyDescriptor(ClientMetadataFetcher.prototype, "resolve")!;
  before(() => {
    // The document server, in process: what the fetcher would download (and cache) for the URL.
    ClientMetadataFetcher.prototype.resolve = function (id: string) {
      fetched.push(id);
      if (id !== clientId) return Promise.reject(new Error("no such document"));
      const doc = { client_id: clientId, client_name: "CIMD app", redirect_uris: [REDIRECT_URI] };
      return Promise.resolve({
        ...doc,
        grant_types: [...grantTypes],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      } as unknown as ClientIdMetadata);
    };
  });
  after(() => {
    Object.defineProperty(ClientMetadataFetcher.prototype, "resolve", resolve);
    grantTypes = ["authorization_code", "refresh_token"];
  });

  it("listed throughout: a refresh token, and it refreshes", async () => {
    grantTypes = ["authorization_code", "refresh_token"];
    const app = await TestOAuthClient.forClient(issuer, clientId);
    const tokens = await app.tokens("acme", ada);
    assert.equal(typeof tokens.refresh_token, "string");
    assert.ok((await app.refresh(tokens.refresh_token!)).access_token);
  });

  it("dropped between the authorization request and the code's exchange: no refresh token", async () => {
    grantTypes = ["authorization_code", "refresh_token"];
    const app = await TestOAuthClient.forClient(issuer, clientId);
    const { location, verifier, state } = await app.authorize("acme", ada);
    grantTypes = ["authorization_code"];
    const tokens = await app.exchange(location, verifier, state);
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(await mcpStatus(tokens.access_token), 200);
  });

  it("a stranger's token request naming a document URL makes Portico fetch nothing", async () => {
    const stranger = "https://stranger.example/clients/c.json";
    for (const fields of [
      { grant_type: "refresh_token", refresh_token: "not-a-token" } as Record<string, string>,
      { grant_type: "authorization_code", code: "not-a-code", code_verifier: "v".repeat(43) },
    ]) {
      const res = await form("/oauth/token", { ...fields, client_id: stranger });
      assert.equal(res.status, 400);
      assert.equal(res.body!.error, "invalid_grant");
    }
    assert.ok(!fetched.includes(stranger), "no document fetched for a request that fails anyway");
  });

  it("dropped after the refresh token was issued: unauthorized_client, nothing issued", async () => {
    grantTypes = ["authorization_code", "refresh_token"];
    const app = await TestOAuthClient.forClient(issuer, clientId);
    const tokens = await app.tokens("acme", ada);
    grantTypes = ["authorization_code"];
    const res = await form("/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: clientId,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body!.error, "unauthorized_client");
    assert.equal(res.body!.access_token, undefined);
  });
});

describe("offline_access: in the authorization server's metadata only", () => {
  it("the AS metadata lists it", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const meta = (await (await fetch(`${issuer}${path}`)).json()) as { scopes_supported: string[] };
      assert.ok(meta.scopes_supported.includes("offline_access"), path);
    }
  });

  it("the Protected Resource Metadata does not", async () => {
    const prm = (await (await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp/acme`)).json()) as {
      scopes_supported: string[];
    };
    assert.deepEqual(prm.scopes_supported, ["mcp:read", "mcp:tools"]);
  });

  it("no WWW-Authenticate scope names it: 401 without or with a bad token", async () => {
    for (const headers of [{}, { authorization: "Bearer not-a-token" }] as Record<string, string>[]) {
      const res = await fetch(`${issuer}/mcp/acme`, {
        method: "POST",
        headers: { ...MCP_HEADERS, ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(res.status, 401);
      const challenge = res.headers.get("www-authenticate")!;
      assert.match(challenge, /scope="mcp:read mcp:tools"/);
      assert.doesNotMatch(challenge, /offline_access/);
    }
  });

  it("nor the 403 step-up of a token that was granted it", async () => {
    const tokens = await alice.tokens("acme", ada, "mcp:read offline_access");
    const init = await initializeWithToken(`${issuer}/mcp/acme`, tokens.access_token);
    const sid = init.headers.get("mcp-session-id")!;
    const call = await fetch(`${issuer}/mcp/acme`, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${tokens.access_token}`, "mcp-session-id": sid },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "x", arguments: {} },
      }),
    });
    assert.equal(call.status, 403);
    const challenge = call.headers.get("www-authenticate")!;
    assert.match(challenge, /error="insufficient_scope"/);
    assert.match(challenge, /scope="mcp:read mcp:tools"/);
    assert.doesNotMatch(challenge, /offline_access/);
  });
});

describe("the 403 step-up challenge names only well-formed scopes", () => {
  it("a token (an external server's) carrying quotes, line breaks or huge scopes: none of them echoed", () => {
    const rs = new ResourceServer("https://portico.example", () => {
      throw new Error("not used");
    });
    const caller = {
      principal: "p",
      user: "u",
      clientId: "c",
      scopes: ["mcp:read", 'x", error="forged', "a\r\nSet-Cookie: y=1", "s".repeat(5000), "offline_access"],
    };
    let challenge = "";
    try {
      rs.requireScope("acme", caller, "mcp:tools");
    } catch (err) {
      challenge = (err as { data?: { challenge?: string } }).data?.challenge ?? "";
    }
    assert.match(challenge, /scope="mcp:read mcp:tools"/);
    assert.doesNotMatch(challenge, /forged|Set-Cookie|sssss|offline_access|[\r\n]/);
  });
});

describe("redirect_uri at the token endpoint (OAuth 2.1 §4.1.3)", () => {
  /** A code for alice, from an authorization request that named REDIRECT_URI (or none). */
  async function code(withRedirectUri = true) {
    const { url, verifier, state } = await alice.authorizationUrl("acme");
    if (!withRedirectUri) url.searchParams.delete("redirect_uri");
    const page = await fetch(url, { redirect: "manual" });
    assert.equal(page.status, 200);
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const fields = Object.fromEntries(
      [...(await page.text()).matchAll(/name="(flow|csrf)" value="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    const post = (path: string, body: Record<string, string>) =>
      fetch(`${issuer}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams(body),
      });
    let back = await post("/oauth/login", { ...fields, ...ada });
    if (back.status === 200) {
      const consent = Object.fromEntries(
        [...(await back.text()).matchAll(/name="(flow|csrf)" value="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]),
      );
      back = await post("/oauth/consent", { ...consent, decision: "allow" });
    }
    assert.equal(back.status, 303);
    const location = new URL(back.headers.get("location")!);
    assert.equal(location.searchParams.get("state"), state);
    return { code: location.searchParams.get("code")!, verifier };
  }
  const exchange = (c: { code: string; verifier: string }, extra: Record<string, string>) =>
    form("/oauth/token", {
      grant_type: "authorization_code",
      code: c.code,
      code_verifier: c.verifier,
      client_id: alice.client.client_id,
      ...extra,
    });

  it("the same redirect_uri: tokens", async () => {
    const res = await exchange(await code(), { redirect_uri: REDIRECT_URI });
    assert.equal(res.status, 200);
    assert.ok(res.body!.access_token);
  });

  it("omitted, with PKCE: tokens", async () => {
    const res = await exchange(await code(), {});
    assert.equal(res.status, 200);
  });

  it("another, empty or differently spelled redirect_uri: invalid_grant", async () => {
    for (const redirect_uri of [
      "http://127.0.0.1:9999/other",
      "",
      "http://127.0.0.1:9999/callback/",
      "http://localhost:9999/callback",
      "HTTP://127.0.0.1:9999/callback",
    ]) {
      const res = await exchange(await code(), { redirect_uri });
      assert.equal(res.status, 400, redirect_uri);
      assert.equal(res.body!.error, "invalid_grant", redirect_uri);
      assert.equal(res.body!.access_token, undefined);
    }
  });

  it("a repeated redirect_uri: invalid_request", async () => {
    const c = await code();
    const res = await fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `${new URLSearchParams({ grant_type: "authorization_code", code: c.code, code_verifier: c.verifier, client_id: alice.client.client_id, redirect_uri: REDIRECT_URI })}&redirect_uri=${encodeURIComponent("https://evil.example/cb")}`,
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: string }).error, "invalid_request");
  });

  it("an authorization request without redirect_uri: the registered one, or none, at the token endpoint", async () => {
    assert.equal((await exchange(await code(false), { redirect_uri: REDIRECT_URI })).status, 200);
    assert.equal((await exchange(await code(false), {})).status, 200);
    const other = await exchange(await code(false), { redirect_uri: "http://127.0.0.1:9999/other" });
    assert.equal(other.body!.error, "invalid_grant");
  });
});

describe("the authorization endpoint's error path", () => {
  const authorize = (params: Record<string, string>, raw = "") =>
    fetch(`${issuer}/oauth/authorize?${new URLSearchParams(params)}${raw}`, { redirect: "manual" });
  const broken = () => ({
    client_id: alice.client.client_id,
    response_type: "token", // an error once the redirect URI is verified
    code_challenge: "x".repeat(43),
    code_challenge_method: "S256",
    state: "s1",
  });

  it("an empty or malformed redirect_uri: a 400 page, never a 500, never a redirect", async () => {
    for (const redirect_uri of [
      "",
      " ",
      "not a uri",
      "http://[::1",
      "javascript:alert(1)",
      "//evil.example/cb",
      "https://evil.example/cb",
      `${REDIRECT_URI}#frag`,
      `${REDIRECT_URI}\n`,
      `${REDIRECT_URI}?x=1`,
      "%",
      `${REDIRECT_URI}/${"a".repeat(8_000)}`,
      `http://127.0.0.1:9999/${"%".repeat(2_000)}`,
    ]) {
      const res = await authorize({ ...broken(), redirect_uri });
      assert.equal(res.status, 400, JSON.stringify(redirect_uri));
      assert.equal(res.headers.get("location"), null, JSON.stringify(redirect_uri));
      assert.match(res.headers.get("content-type")!, /text\/html/);
      assert.match(await res.text(), /Invalid redirect URI/);
    }
  });

  it("a valueless or repeated redirect_uri: a 400 page", async () => {
    for (const raw of ["&redirect_uri", `&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&redirect_uri=`]) {
      const res = await authorize(broken(), raw);
      assert.equal(res.status, 400, raw);
      assert.equal(res.headers.get("location"), null, raw);
    }
  });

  it("no redirect_uri and one registered: the error goes back to that one, with state and iss", async () => {
    const res = await authorize(broken());
    assert.equal(res.status, 302);
    const back = new URL(res.headers.get("location")!);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
    assert.equal(back.searchParams.get("error"), "unsupported_response_type");
    assert.equal(back.searchParams.get("state"), "s1");
    assert.equal(back.searchParams.get("iss"), issuer);
  });

  it("a loopback redirect_uri on another port (RFC 8252 §7.3) is the one the error goes back to", async () => {
    const res = await authorize({ ...broken(), redirect_uri: "http://127.0.0.1:4567/callback" });
    assert.equal(res.status, 302);
    assert.equal(new URL(res.headers.get("location")!).origin, "http://127.0.0.1:4567");
  });

  it("an unknown or missing client_id: a 400 page", async () => {
    for (const client_id of ["", "nope", "https://127.0.0.1:1/client.json"]) {
      const res = await authorize({ ...broken(), client_id, redirect_uri: REDIRECT_URI });
      assert.equal(res.status, 400, client_id);
      assert.equal(res.headers.get("location"), null);
    }
  });
});

describe("hostile input at the authorization and token endpoints", () => {
  it("an overlong unknown scope is quoted as a short excerpt in the error redirect", async () => {
    const { url } = await alice.authorizationUrl("acme", `mcp:read ${"x".repeat(10_000)}`);
    const res = await fetch(url, { redirect: "manual" });
    assert.equal(res.status, 302);
    const back = new URL(res.headers.get("location")!);
    assert.equal(back.searchParams.get("error"), "invalid_scope");
    const description = back.searchParams.get("error_description")!;
    assert.ok(description.length < 200, `${description.length} characters echoed`);
    assert.match(description, /10000 characters/);
  });

  it("a repeated overlong field name is quoted as a short excerpt (token endpoint; revocation reads only its own fields)", async () => {
    const name = "n".repeat(100_000);
    for (const path of ["/oauth/token", "/oauth/revoke"]) {
      const res = await fetch(`${issuer}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `client_id=${encodeURIComponent(alice.client.client_id)}&${name}=1&${name}=2&token=x&grant_type=refresh_token`,
      });
      const text = await res.text();
      assert.ok(res.status < 500, path);
      assert.ok(text.length < 400, `${path}: ${text.length} characters answered`);
      if (path === "/oauth/token")
        assert.match(text, /invalid_request.*100000 characters\) appears more than once/);
    }
  });

  it("Basic credentials with broken percent-encoding: invalid_client, never a 500", async () => {
    for (const pair of ["%zz:secret", "id:%E0%A4%A", "%:%"]) {
      const res = await fetch(`${issuer}/oauth/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(pair).toString("base64")}`,
        },
        body: "grant_type=refresh_token&refresh_token=x",
      });
      assert.equal(res.status, 401, pair);
      assert.equal(((await res.json()) as { error: string }).error, "invalid_client", pair);
      const revoked = await fetch(`${issuer}/oauth/revoke`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(pair).toString("base64")}`,
        },
        body: "token=x",
      });
      assert.equal(revoked.status, 401, pair);
    }
  });
});
