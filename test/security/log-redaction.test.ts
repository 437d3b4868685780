// Secret-free logs (docs/security.md): a hostile run at trace level — a whole OAuth flow, secrets
// in query strings, admin keys, providers with secret headers, tokens and client secrets, an
// upstream that echoes every secret it is sent in its errors, a failing token endpoint — and then
// every captured line is searched for every secret used. None may appear, at any level.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { buildApp, type Portico } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config/env.js";
import { isSecretParam, redactLine, redactUrl } from "../../src/logs/redaction.js";
import { UserStore } from "../../src/oauth/users.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { TestOAuthClient } from "../support/oauth.js";
import { staticTenant, TEST_SECRET } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { MCP_HEADERS, openSession, postRpc } from "../support/rpc.js";

const SECRETS = {
  password: "pw-SECRET-correct-horse-7d1f",
  providerHeader: "hdr-SECRET-5b2c9e1a77",
  providerBearer: "bearer-SECRET-0f3e88aa91",
  clientSecret: "cs-SECRET-41d7be0c2e",
  queryToken: "qtok-SECRET-9a8b7c6d5e",
  queryCode: "qcode-SECRET-1234abcd",
  queryState: "qstate-SECRET-77aa",
  querySecret: "qsec-SECRET-55ee",
  apiKeyParam: "qkey-SECRET-66ff",
  signature: "qsig-SECRET-88dd",
  nestedToken: "nested-SECRET-99cc",
  customHeader: "xhdr-SECRET-3c3c",
  cookie: "cookie-SECRET-4d4d",
  userinfo: "userinfo-SECRET-2b2b",
};

let portico: Portico;
let issuer: string;
let admin: AdminClient;
let echo: Server;
let echoUrl: string;
const raw: string[] = [];
/** Values learnt during the run: the OAuth code, tokens, the PKCE verifier, the admin key. */
const learnt: Record<string, string> = {};

/** Answers every request with an error page that repeats its URL, headers and body. */
async function startEcho(): Promise<void> {
  echo = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const said = `${req.method} ${req.url} ${JSON.stringify(req.headers)} ${Buffer.concat(chunks).toString()}`;
      if (req.url?.startsWith("/token")) {
        // A failing token endpoint that echoes the client secret in its error.
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "invalid_client", error_description: `refused: ${said}` }));
      } else res.writeHead(500, { "content-type": "text/plain" }).end(`upstream broke on ${said}`);
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
}

before(async () => {
  await startEcho();
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    PORT: String(port),
    PORTICO_PUBLIC_URL: issuer,
    PORTICO_LOG_LEVEL: "trace",
    PORTICO_SECRET_KEY: TEST_SECRET,
    PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
  });
  portico = await buildApp(config, {
    tenants: [{ ...staticTenant("acme"), auth: "oauth" }, staticTenant("open")],
    logStream: { write: (line: string) => void raw.push(line) },
  });
  await portico.app.listen({ port, host: "127.0.0.1" });
  await new UserStore(portico.store, portico.keys).create("acme", {
    username: "ada",
    password: SECRETS.password,
  });
  admin = new AdminClient(`${issuer}`);
});

after(async () => {
  await portico?.app.close();
  echo?.closeAllConnections();
  echo?.close();
});

describe("a hostile run at trace level", () => {
  it("an OAuth flow: code, state, verifier, tokens and the password", async () => {
    const client = await TestOAuthClient.register(issuer);
    const { location, verifier, state } = await client.authorize("acme", {
      username: "ada",
      password: SECRETS.password,
    });
    learnt.code = location.searchParams.get("code")!;
    learnt.state = state;
    learnt.verifier = verifier;
    const tokens = await client.exchange(location, verifier, state);
    learnt.access = tokens.access_token;
    learnt.refresh = tokens.refresh_token!;
    const refreshed = await client.refresh(learnt.refresh);
    learnt.refreshed = refreshed.access_token;
    // The token used on /mcp in a header, and (wrongly) in the query string.
    const ok = await fetch(`${issuer}/mcp/acme?access_token=${learnt.access}`, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${refreshed.access_token}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {} },
      }),
    });
    assert.equal(ok.status, 200);
    // A replayed code: refused, and still not logged.
    const replay = await fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: learnt.code,
        code_verifier: verifier,
        client_id: client.client.client_id,
        redirect_uri: "http://127.0.0.1:9999/callback",
      }),
    });
    assert.equal(replay.status, 400);
  });

  it("secrets in query strings, paths' parameters, userinfo and headers of every surface", async () => {
    const q = new URLSearchParams({
      code: SECRETS.queryCode,
      state: SECRETS.queryState,
      token: SECRETS.queryToken,
      client_secret: SECRETS.querySecret,
      api_key: SECRETS.apiKeyParam,
      "X-Amz-Signature": SECRETS.signature,
      redirect_uri: `http://app.example/cb?id_token=${SECRETS.nestedToken}`,
    });
    for (const path of [
      "/oauth/callback",
      "/oauth/authorize",
      "/mcp/open",
      "/admin/v1/tenants",
      "/nowhere",
      "/.well-known/oauth-authorization-server",
    ])
      await fetch(`${issuer}${path}?${q}`, {
        headers: {
          "x-upstream-token": SECRETS.customHeader,
          "ocp-apim-subscription-key": SECRETS.customHeader,
          "x-client-signingKey": SECRETS.customHeader,
          cookie: `portico_flow=${SECRETS.cookie}`,
        },
      });
    // A session id is a bearer of the session: logs name it by its first characters only.
    const sid = await openSession(`${issuer}/mcp/open`);
    learnt.session = sid;
    await postRpc(`${issuer}/mcp/open`, { jsonrpc: "2.0", id: 1, method: "tools/list" }, sid);
    await postRpc(`${issuer}/mcp/open?session=${sid}`, { jsonrpc: "2.0", id: 2, method: "nope" }, sid);
    await fetch(`${issuer}/mcp/open#access_token=${SECRETS.queryToken}`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: "{",
    });
  });

  it("admin keys, and providers whose secrets an echoing upstream and a failing token endpoint repeat", async () => {
    const key = await admin.post("/tenants/open/api-keys", { name: "logs" });
    assert.equal(key.status, 201);
    learnt.apiKey = key.body.token ?? key.body.key;
    assert.ok(learnt.apiKey, JSON.stringify(key.body));
    const keyed = new AdminClient(issuer, learnt.apiKey);
    const providers = [
      {
        id: "echo",
        kind: "http",
        tools: [
          {
            name: "shout",
            url: `${echoUrl}/tool?token=${SECRETS.queryToken}`,
            headers: { "x-weather-key": SECRETS.providerHeader },
          },
        ],
        auth: { type: "bearer", token: SECRETS.providerBearer },
      },
      {
        id: "cc",
        kind: "http",
        tools: [{ name: "guarded", url: `${echoUrl}/guarded` }],
        auth: {
          type: "client_credentials",
          tokenUrl: `${echoUrl}/token`,
          clientId: "portico",
          clientSecret: SECRETS.clientSecret,
        },
      },
      {
        id: "up",
        kind: "mcp",
        url: `${echoUrl}/mcp`,
        headers: { "x-upstream-key": SECRETS.providerHeader },
        auth: { type: "bearer", token: SECRETS.providerBearer },
      },
    ];
    for (const p of providers)
      assert.ok([201, 202].includes((await keyed.post("/tenants/open/providers", p)).status), p.id);
    const sid = await openSession(`${issuer}/mcp/open`);
    for (const name of ["shout", "guarded", "up__anything", "anything"]) {
      const res = await postRpc(
        `${issuer}/mcp/open`,
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name, arguments: { token: SECRETS.queryToken } },
        },
        sid,
      );
      // What the echoing upstream repeated does not reach the MCP client either.
      const text = await res.text();
      for (const secret of [SECRETS.providerHeader, SECRETS.providerBearer, SECRETS.clientSecret])
        assert.ok(!text.includes(secret), `${name} answered with a provider secret: ${text}`);
    }
    await postRpc(`${issuer}/mcp/open`, { jsonrpc: "2.0", id: 3, method: "tools/list" }, sid);
    await keyed.post("/tenants/open/providers/up/refresh", {});
    await fetch(`${issuer}/admin/v1/tenants/open/providers?access_token=${SECRETS.queryToken}`, {
      headers: { authorization: `Bearer ${learnt.apiKey}` },
    });
  });

  it("what code logs directly: errors whose message, stack and cause carry secrets, at every level", () => {
    const err = new Error(`token endpoint at ${echoUrl}/token?client_secret=${SECRETS.querySecret} refused`, {
      cause: {
        body: `{"access_token":"${SECRETS.queryToken}"}`,
        authorization: `Bearer ${SECRETS.providerBearer}`,
      },
    });
    for (const level of ["trace", "debug", "info", "warn", "error", "fatal"] as const)
      portico.app.log[level](
        { err, url: `/cb?code=${SECRETS.queryCode}` },
        `upstream said Bearer ${SECRETS.providerBearer}`,
      );
  });

  it("no captured line carries any secret used, at any level", () => {
    const lines = raw.join("");
    if (process.env.DUMP_LOGS) console.log(lines);
    assert.ok(raw.length > 20, `the run was logged (${raw.length} lines)`);
    assert.match(lines, /"level":(10|20)/, "debug and trace lines were captured");
    const everything = { ...SECRETS, ...learnt, adminToken: ADMIN_TOKEN, secretKey: TEST_SECRET };
    for (const [name, value] of Object.entries(everything)) {
      const at = raw.find((l) => l.includes(value));
      assert.equal(at, undefined, `${name} leaked in: ${at}`);
    }
    assert.match(lines, /token=\[redacted\]/, "query strings were logged, redacted");
  });
});

describe("a platform key generated for want of PORTICO_ADMIN_TOKEN", () => {
  it("is never logged, and the warning says how to set one", async () => {
    const lines: string[] = [];
    const config = loadConfig({ PORTICO_LOG_LEVEL: "trace", PORTICO_SECRET_KEY: TEST_SECRET });
    const unset = await buildApp(config, {
      tenants: [],
      logStream: { write: (l: string) => void lines.push(l) },
    });
    try {
      const warning = lines.find((l) => l.includes("PORTICO_ADMIN_TOKEN is not set"));
      assert.ok(warning, lines.join(""));
      assert.doesNotMatch(lines.join(""), /portico_dev_|Bearer [A-Za-z0-9_-]{8,}/);
    } finally {
      await unset.app.close();
    }
  });
});

describe("the redaction rules", () => {
  it("URLs keep their shape and lose only secret values", () => {
    assert.equal(
      redactUrl("/oauth/authorize?client_id=c&state=s1&response_type=code&code_challenge=x"),
      "/oauth/authorize?client_id=c&state=[redacted]&response_type=code&code_challenge=x",
    );
    assert.equal(
      redactUrl("https://u:p@h/x?tokenUrl=ok&sig=s#id_token=t"),
      "https://[redacted]@h/x?tokenUrl=ok&sig=[redacted]#id_token=[redacted]",
    );
    assert.equal(
      redactUrl("/cb?next=%2Fx%3Frefresh_token%3Dabc%26y%3D1"),
      "/cb?next=%2Fx%3Frefresh_token%3D[redacted]%26y%3D1",
    );
    assert.equal(redactUrl("/x?access%5Ftoken=abc"), "/x?access%5Ftoken=[redacted]");
  });
  it("names: secret words, -key suffixes and camelCase keys are secrets; where a secret goes is not", () => {
    for (const name of [
      "x-api-key",
      "X-Weather-Key",
      "Ocp-Apim-Subscription-Key",
      "apikey",
      "signingKey",
      "access_key_id",
      "x-upstream-token",
      "Proxy-Authorization",
      "client_secret",
      "code",
      "state",
      "sig",
      "SESSION",
      "x-portico-csrf",
      "csrf",
      "x-portico-internal-caller",
    ])
      assert.ok(isSecretParam(name), name);
    for (const name of [
      "tokenUrl",
      "token_endpoint",
      "token_type",
      "token_endpoint_auth_method",
      "client_id",
      "keyId",
      "keys",
      "monkey",
      "redirect_uri",
      "expires_in",
      "scope",
    ])
      assert.ok(!isSecretParam(name), name);
  });
  it("whole lines: members named like secrets, escaped JSON in messages, bearer values, form bodies", () => {
    const line = JSON.stringify({
      code: "PORTICO_ERR_X",
      session: "abcd1234",
      token_type: "Bearer",
      msg: 'said {"refresh_token":"r1"} Bearer abcdefgh123 body=grant_type=x&client_secret=c1',
      err: { clientSecret: "c2", message: "at http://h/p?password=p1" },
    });
    const out = redactLine(line);
    for (const s of ["r1", "abcdefgh123", "c1", "c2", "p1"]) assert.ok(!out.includes(s), `${s} in ${out}`);
    assert.deepEqual(JSON.parse(out).code, "PORTICO_ERR_X");
    assert.deepEqual(JSON.parse(out).session, "abcd1234");
    assert.deepEqual(JSON.parse(out).token_type, "Bearer");
  });
  it("whole lines: encoded parameter names, spaced JSON, header dumps and tab-separated schemes", () => {
    const line = JSON.stringify({
      msg: "fetch https://cimd.example/c?access%5Ftoken=e1&to%6Ben=e2 failed",
      upstream: 'said {\n  "refresh_token" : "e3"\n}',
      dump: "upstream answered HTTP 500: POST /mcp HTTP/1.1 host: h x-api-key: e4 cookie: a=1; sid=e5 accept: */*",
      raw: "POST /mcp HTTP/1.1\r\nHost: h\r\nX-Upstream-Token: e6\r\nAuthorization:\tBasic e7e7e7e7e7\r\n\r\n",
      tabbed: "Bearer\te8e8e8e8e8",
      err: "JWSSignatureVerificationFailed: signature verification failed",
      stack: "TokenError: token expired\n    at verify (file:///app/x.js:1:2)",
    });
    const out = redactLine(line);
    for (const s of ["e1", "e2", "e3", "e4", "e5", "e6", "e7e7", "e8e8"])
      assert.ok(!out.includes(s), `${s} in ${out}`);
    const parsed = JSON.parse(out) as Record<string, string>;
    assert.match(parsed.dump!, /host: h x-api-key: \[redacted\] cookie: \[redacted\] accept: \*\/\*$/);
    assert.match(parsed.raw!, /\r\nHost: h\r\nX-Upstream-Token: \[redacted\]\r\n/);
    // An error's name before its message is not a header: the message stays readable.
    assert.equal(parsed.err, "JWSSignatureVerificationFailed: signature verification failed");
    assert.match(parsed.stack!, /^TokenError: token expired\n/);
  });
});

describe("configuration errors printed at boot", () => {
  it("never repeat a URL's password: the Redis URL's credentials are redacted in every refusal", () => {
    const password = "hunter2-redis-password";
    for (const env of [
      { PORTICO_REDIS_URL: `redis://:${password}@redis:6379/3`, PORTICO_REDIS_CLUSTER: "true" },
      { PORTICO_REDIS_URL: `redis://u:${password}@redis:6379/0?x=1`, PORTICO_REDIS_CLUSTER: "true" },
      { PORTICO_REDIS_URL: `redis://u:${password}@a:6379,redis://u:${password}@b:6379` },
      { PORTICO_REDIS_URL: `http://u:${password}@redis:6379/` },
      { PORTICO_REDIS_URL: `redis://u:${password}@redis:notaport/` },
      { PORTICO_PUBLIC_URL: `ftp://u:${password}@portico.example/` },
    ]) {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.ok(!err.message.includes(password), err.message);
          assert.match(err.message, /\[redacted\]@/);
          return true;
        },
      );
    }
  });
});
