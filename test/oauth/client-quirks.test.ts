// The OAuth habits of the MCP clients docs/clients.md covers (docs/oauth.md#client-quirks): the MCP
// URL with a trailing slash (VS Code compares RFC 9728 `resource` exactly), private-use scheme
// redirect URIs (Cursor, VS Code), loopback redirects on any port (RFC 8252 §7.3), clients that
// register twice, clients that never register (pre-registered ids), each next to its hostile case.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as oauth from "oauth4webapi";
import { pathEndsWithSlash, sameResource } from "../../src/auth/resource-server.js";
import { ADMIN_TOKEN } from "../support/admin.js";
import { formOf } from "../support/oauth.js";
import { startIssuer, staticTenant, type RunningPortico } from "../support/portico.js";
import { MCP_HEADERS } from "../support/rpc.js";

const ADA = { username: "ada", password: "correct horse battery" };
/** What Cursor registers (three redirect URIs in one request). */
const CURSOR_REDIRECTS = [
  "cursor://anysphere.cursor-mcp/oauth/callback",
  "https://www.cursor.com/agents/mcp/oauth/callback",
  "http://localhost:8787/callback",
];
/** What VS Code registers; it then authorizes on whatever loopback port it got. */
const VSCODE_REDIRECTS = [
  "https://insiders.vscode.dev/redirect",
  "https://vscode.dev/redirect",
  "http://127.0.0.1/",
  "http://127.0.0.1:33418/",
];

let portico: RunningPortico;
let issuer: string;

before(async () => {
  ({ portico, issuer } = await startIssuer({
    tenant: "acme",
    users: [ADA],
    tenants: [{ ...staticTenant("other"), auth: "oauth" }, staticTenant("open")],
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  }));
});
after(() => portico.close());

async function register(metadata: Record<string, unknown>) {
  const res = await fetch(`${issuer}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token_endpoint_auth_method: "none", ...metadata }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

interface Authorization {
  readonly clientId: string;
  readonly redirectUri: string;
  /** The RFC 8707 resource; none lets the user (or a pre-registered client) pick the tenant. */
  readonly resource?: string;
  readonly tenant?: string;
}

/** GET /oauth/authorize as a client would send it; the response is not followed. */
async function authorizeRequest(a: Authorization) {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(`${issuer}/oauth/authorize`);
  url.search = new URLSearchParams({
    client_id: a.clientId,
    redirect_uri: a.redirectUri,
    response_type: "code",
    scope: "mcp:read mcp:tools",
    state: "st",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...(a.resource !== undefined && { resource: a.resource }),
  }).toString();
  return { response: await fetch(url, { redirect: "manual" }), verifier };
}

/** Signs ada in and consents through the forms; returns where the browser is sent, and the verifier. */
async function signIn(a: Authorization) {
  const { response: page, verifier } = await authorizeRequest(a);
  assert.equal(page.status, 200, `the login page (${page.status})`);
  const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${issuer}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams(fields),
    });
  const tenant: Record<string, string> = a.tenant !== undefined ? { tenant: a.tenant } : {};
  let back = await post("/oauth/login", { ...formOf(await page.text()), ...ADA, ...tenant });
  if (back.status === 200)
    back = await post("/oauth/consent", { ...formOf(await back.text()), decision: "allow" });
  assert.equal(back.status, 303, "redirected back to the client");
  return { location: back.headers.get("location")!, verifier };
}

/** The code of a redirect back, at any scheme (`cursor://…?code=…`). */
function codeOf(location: string): string {
  const params = new URL(location).searchParams;
  assert.equal(params.get("iss"), issuer);
  return params.get("code")!;
}

async function token(fields: Record<string, string>) {
  const res = await fetch(`${issuer}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", ...fields }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The whole flow for a client and redirect URI; returns the access token. */
async function accessToken(a: Authorization, tokenResource?: string): Promise<string> {
  const { location, verifier } = await signIn(a);
  assert.ok(location.startsWith(a.redirectUri), `back at ${a.redirectUri}, got ${location}`);
  const res = await token({
    client_id: a.clientId,
    code: codeOf(location),
    code_verifier: verifier,
    redirect_uri: a.redirectUri,
    ...(tokenResource !== undefined && { resource: tokenResource }),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.access_token as string;
}

function initialize(url: string, accessToken?: string) {
  return fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...(accessToken && { authorization: `Bearer ${accessToken}` }) },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "q", version: "1" } },
    }),
  });
}

const prm = (path: string) => `${issuer}/.well-known/oauth-protected-resource${path}`;

describe("the MCP URL with a trailing slash is the same resource (VS Code, RFC 9728 §3.3)", () => {
  it("sameResource allows one trailing slash and nothing else", () => {
    const acme = "https://p.example/mcp/acme";
    assert.ok(sameResource(acme, acme));
    assert.ok(sameResource(`${acme}/`, acme));
    for (const other of [
      `${acme}//`,
      `${acme}x`,
      `${acme}x/`,
      "https://p.example/mcp/acm/",
      "https://p.example/mcp/other/",
      `${acme}/sse`,
    ])
      assert.equal(sameResource(other, acme), false, other);
  });

  it("pathEndsWithSlash reads the path, not the query", () => {
    assert.ok(pathEndsWithSlash("/mcp/acme/"));
    assert.ok(pathEndsWithSlash("/mcp/acme/?x=1"));
    for (const url of ["/mcp/acme", "/mcp/acme?next=/", "/"])
      assert.equal(pathEndsWithSlash(url), false, url);
  });

  it("the metadata is served at both paths, each naming the URL it was asked for", async () => {
    for (const slash of ["", "/"]) {
      const res = await fetch(prm(`/mcp/acme${slash}`));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("access-control-allow-origin"), "*");
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body.resource, `${issuer}/mcp/acme${slash}`);
      assert.deepEqual(body.authorization_servers, [issuer]);
    }
  });

  it("a 401 at /mcp/acme/ points at the metadata of /mcp/acme/, at /mcp/acme at that of /mcp/acme", async () => {
    for (const slash of ["", "/"]) {
      const res = await initialize(`${issuer}/mcp/acme${slash}`);
      assert.equal(res.status, 401);
      const challenge = res.headers.get("www-authenticate")!;
      assert.ok(challenge.includes(`resource_metadata="${prm(`/mcp/acme${slash}`)}"`), challenge);
    }
  });

  it("resource …/mcp/acme/ at authorization and token endpoints gives a token that works at both URLs", async () => {
    const client = await register({ redirect_uris: ["http://127.0.0.1/"], client_name: "VS Code" });
    const resource = `${issuer}/mcp/acme/`;
    const a = { clientId: client.body.client_id, redirectUri: "http://127.0.0.1:51234/", resource };
    const at = await accessToken(a, resource);
    for (const url of [`${issuer}/mcp/acme`, `${issuer}/mcp/acme/`])
      assert.equal((await initialize(url, at)).status, 200, url);
  });

  it("refuses another tenant's trailing-slash URL, a double slash, and a slash-less tenant", async () => {
    const client = await register({ redirect_uris: ["http://127.0.0.1/cb"] });
    const clientId = client.body.client_id as string;
    for (const resource of [
      `${issuer}/mcp/acme//`,
      `${issuer}/mcp/`,
      `${issuer}/mcp/open/`,
      `${issuer}/mcp/acme/x`,
    ]) {
      const { response } = await authorizeRequest({ clientId, redirectUri: "http://127.0.0.1/cb", resource });
      assert.equal(response.status, 302, resource);
      const back = new URL(response.headers.get("location")!);
      assert.equal(back.searchParams.get("error"), "invalid_target", resource);
    }
    // A code for acme, exchanged naming other's URL with a slash: invalid_target, and no token.
    const { location, verifier } = await signIn({
      clientId,
      redirectUri: "http://127.0.0.1/cb",
      resource: `${issuer}/mcp/acme/`,
    });
    const res = await token({
      client_id: clientId,
      code: codeOf(location),
      code_verifier: verifier,
      resource: `${issuer}/mcp/other/`,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "invalid_target");
  });

  it("a refresh naming another tenant's URL is invalid_target and spends nothing; with a slash it works", async () => {
    const client = await register({
      redirect_uris: ["http://127.0.0.1/cb"],
      grant_types: ["authorization_code", "refresh_token"],
    });
    const clientId = client.body.client_id as string;
    const { location, verifier } = await signIn({
      clientId,
      redirectUri: "http://127.0.0.1/cb",
      resource: `${issuer}/mcp/acme/`,
    });
    const first = await token({ client_id: clientId, code: codeOf(location), code_verifier: verifier });
    const refresh = (refresh_token: string, resource: string) =>
      token({ grant_type: "refresh_token", client_id: clientId, refresh_token, resource });
    const refused = await refresh(first.body.refresh_token, `${issuer}/mcp/other/`);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, "invalid_target");
    const ok = await refresh(first.body.refresh_token, `${issuer}/mcp/acme/`);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await initialize(`${issuer}/mcp/acme/`, ok.body.access_token)).status, 200);
  });

  it("acme's token is refused at other's URL with or without the slash", async () => {
    const client = await register({ redirect_uris: ["http://127.0.0.1/cb"] });
    const at = await accessToken({
      clientId: client.body.client_id,
      redirectUri: "http://127.0.0.1/cb",
      resource: `${issuer}/mcp/acme/`,
    });
    for (const url of [`${issuer}/mcp/other`, `${issuer}/mcp/other/`]) {
      const res = await initialize(url, at);
      assert.equal(res.status, 401, url);
      assert.match(res.headers.get("www-authenticate")!, /error="invalid_token"/);
    }
  });

  it("no metadata for a tenant without OAuth or an unknown one, slash or not", async () => {
    for (const path of ["/mcp/open/", "/mcp/nope/", "/mcp/open", "/mcp/acme//"])
      assert.equal((await fetch(prm(path))).status, 404, path);
  });
});

describe("redirect URIs of native clients (RFC 8252 §7.1, §7.3)", () => {
  it("Cursor's registration (cursor://, its https callback, localhost) works, and the code comes back at cursor://", async () => {
    const client = await register({ redirect_uris: CURSOR_REDIRECTS, client_name: "Cursor" });
    assert.equal(client.status, 201, JSON.stringify(client.body));
    assert.deepEqual(client.body.redirect_uris, CURSOR_REDIRECTS);
    const a = {
      clientId: client.body.client_id,
      redirectUri: CURSOR_REDIRECTS[0]!,
      resource: `${issuer}/mcp/acme`,
    };
    const { location, verifier } = await signIn(a);
    assert.ok(location.startsWith("cursor://anysphere.cursor-mcp/oauth/callback?"), location);
    const res = await token({ client_id: a.clientId, code: codeOf(location), code_verifier: verifier });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it("VS Code's registration works, and its loopback redirect matches on any port, localhost too", async () => {
    const client = await register({
      redirect_uris: [...VSCODE_REDIRECTS, "http://localhost/"],
      client_name: "Visual Studio Code",
      grant_types: ["authorization_code", "refresh_token"],
    });
    assert.equal(client.status, 201, JSON.stringify(client.body));
    for (const redirectUri of [
      "http://127.0.0.1:59656/",
      "http://localhost:40123/",
      "http://127.0.0.1:33418/",
    ]) {
      const at = await accessToken({
        clientId: client.body.client_id,
        redirectUri,
        resource: `${issuer}/mcp/acme`,
      });
      assert.equal((await initialize(`${issuer}/mcp/acme`, at)).status, 200);
    }
    // A vscode:// URI it did not register is refused (a page, no redirect).
    const { response } = await authorizeRequest({
      clientId: client.body.client_id,
      redirectUri: "vscode://vscode.github-authentication/did-authenticate",
      resource: `${issuer}/mcp/acme`,
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null);
  });

  it("vscode:// and other private-use schemes register and receive the code", async () => {
    const redirectUri = "vscode://vscode.github-authentication/did-authenticate";
    const client = await register({ redirect_uris: [redirectUri, "com.example.agent:/oauth2redirect"] });
    assert.equal(client.status, 201, JSON.stringify(client.body));
    const at = await accessToken({
      clientId: client.body.client_id,
      redirectUri,
      resource: `${issuer}/mcp/acme`,
    });
    assert.equal((await initialize(`${issuer}/mcp/acme`, at)).status, 200);
  });

  it("refuses javascript:, data:, file:, vbscript: and non-loopback http at registration", async () => {
    for (const uri of [
      "javascript:alert(document.cookie)",
      "data:text/html;base64,PHNjcmlwdD4=",
      "file:///etc/passwd",
      "vbscript:msgbox(1)",
      "http://evil.example/callback",
      "http://127.0.0.1.evil.example/callback",
    ]) {
      const res = await register({ redirect_uris: ["http://127.0.0.1/cb", uri] });
      assert.equal(res.status, 400, uri);
      assert.equal(res.body.error, "invalid_redirect_uri", uri);
      assert.match(res.body.error_description, /redirect_uris\[1\]/);
      assert.ok(!JSON.stringify(res.body).includes(uri), "the URI is never echoed");
    }
  });

  it("an unregistered redirect URI gets a page, never a redirect: another host, path, scheme or port on https", async () => {
    const client = await register({ redirect_uris: ["http://127.0.0.1/callback", "https://app.example/cb"] });
    for (const redirectUri of [
      "http://evil.example/callback",
      "http://127.0.0.1:8080/elsewhere",
      "https://app.example:8443/cb",
      "https://app.example/cb/../evil",
      "cursor://anysphere.cursor-mcp/oauth/callback",
      "javascript:alert(1)",
    ]) {
      const { response } = await authorizeRequest({
        clientId: client.body.client_id,
        redirectUri,
        resource: `${issuer}/mcp/acme`,
      });
      assert.equal(response.status, 400, redirectUri);
      assert.equal(response.headers.get("location"), null, redirectUri);
      assert.match(response.headers.get("content-type")!, /^text\/html/);
    }
  });
});

describe("clients that register twice, or never", () => {
  it("registering twice with the same metadata gives two client ids, and both work", async () => {
    const metadata = { redirect_uris: ["http://127.0.0.1/callback"], client_name: "Claude Code" };
    const [first, second] = [await register(metadata), await register(metadata)];
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assert.notEqual(first.body.client_id, second.body.client_id);
    for (const client of [first, second]) {
      const at = await accessToken({
        clientId: client.body.client_id,
        redirectUri: "http://127.0.0.1:40001/callback",
        resource: `${issuer}/mcp/acme`,
      });
      assert.equal((await initialize(`${issuer}/mcp/acme`, at)).status, 200);
    }
  });

  it("a client id pre-registered through the admin API signs in without registering, its tenant implied", async () => {
    const res = await fetch(`${issuer}/admin/v1/tenants/acme/clients`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Team VS Code",
        redirect_uris: VSCODE_REDIRECTS,
        token_endpoint_auth_method: "none",
      }),
    });
    assert.equal(res.status, 201);
    const { client_id: clientId } = (await res.json()) as { client_id: string };
    // No resource: the login page shows no tenant choice, the client's tenant is the one.
    const at = await accessToken({ clientId, redirectUri: "http://127.0.0.1:60000/" });
    assert.equal((await initialize(`${issuer}/mcp/acme`, at)).status, 200);
    assert.equal((await initialize(`${issuer}/mcp/other`, at)).status, 401);
  });

  it("an unknown client id gets a page, never a redirect", async () => {
    const { response } = await authorizeRequest({
      clientId: "AAAAAAAAAAAAAAAAAAAAAA",
      redirectUri: "http://127.0.0.1/callback",
      resource: `${issuer}/mcp/acme`,
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null);
  });
});
