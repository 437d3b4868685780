// Upstream credentials (docs/architecture.md §3) against a real token endpoint on loopback: the client
// credentials grant as sent (RFC 6749 §4.4.2, client authentication §2.3.1, scope, RFC 8707
// resource), one cached token, a new one near expiry and after a 401, failures that leak nothing,
// validation and sealing at rest. Providers using them: upstream-auth-providers.test.ts.
import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http";
import { after, before, beforeEach, describe, it } from "node:test";
import { egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { isPorticoError } from "../../src/protocol/errors.js";
import type { UpstreamAuth } from "../../src/records/tenant.js";
import { mapSecrets } from "../../src/records/secret-fields.js";
import { UpstreamCredentials } from "../../src/providers/upstream-auth.js";
import { validateProvider, validateTenant } from "../../src/records/validate.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { seal, unseal } from "../../src/tenants/sealed.js";
import { issue, startTokenEndpoint, type TokenEndpoint } from "../fixtures/token-endpoint.js";

const SECRET = "cl:ent s3cret/é";
let tokens: TokenEndpoint;

before(async () => {
  tokens = await startTokenEndpoint();
});
after(() => tokens.close());
beforeEach(() => {
  tokens.requests.length = 0;
  tokens.reply = issue(3600);
});

function clientCredentials(extra: Record<string, unknown> = {}): UpstreamAuth {
  return {
    type: "client_credentials",
    tokenUrl: tokens.url,
    clientId: "portico gw",
    clientSecret: SECRET,
    ...extra,
  };
}

/** A clock tests move by hand. */
function clock() {
  let ms = 1_700_000_000_000;
  return { now: () => ms, advance: (by: number) => void (ms += by) };
}

/** RFC 6749 §2.3.1: Basic credentials are the form-urlencoded id and secret. */
function basic(headers: IncomingHttpHeaders): [string, string] {
  const decoded = Buffer.from((headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString();
  const [id = "", secret = ""] = decoded.split(":").map((p) => decodeURIComponent(p.replaceAll("+", " ")));
  return [id, secret];
}

const message = async (p: Promise<unknown>) =>
  p.then(
    () => assert.fail("expected a rejection"),
    (err: Error) => err.message,
  );

describe("UpstreamCredentials: the client credentials grant", () => {
  it("sends grant_type, scope and resource with client_secret_basic (the default)", async () => {
    const creds = new UpstreamCredentials(
      clientCredentials({ scope: "read write", resource: "https://api.test/mcp" }),
      { fetch },
    );
    assert.equal(await creds.authorization(), "Bearer tok-1");
    const req = tokens.requests[0];
    assert.ok(req);
    assert.equal(req.method, "POST");
    assert.match(req.headers["content-type"] ?? "", /^application\/x-www-form-urlencoded/);
    assert.deepEqual(basic(req.headers), ["portico gw", SECRET]);
    assert.equal(req.form.get("grant_type"), "client_credentials");
    assert.equal(req.form.get("scope"), "read write");
    assert.equal(req.form.get("resource"), "https://api.test/mcp");
    assert.equal(req.form.get("client_secret"), null, "the secret travels only in the header");
  });

  it("sends client_id and client_secret in the body with client_secret_post", async () => {
    const creds = new UpstreamCredentials(clientCredentials({ authMethod: "client_secret_post" }), { fetch });
    assert.equal(await creds.authorization(), "Bearer tok-1");
    const req = tokens.requests[0];
    assert.ok(req);
    assert.equal(req.headers.authorization, undefined);
    assert.equal(req.form.get("client_id"), "portico gw");
    assert.equal(req.form.get("client_secret"), SECRET);
    assert.equal(req.form.get("scope"), null);
    assert.equal(req.form.get("resource"), null);
  });

  it("fetches one token for many calls, concurrent or not", async () => {
    const creds = new UpstreamCredentials(clientCredentials(), { fetch });
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => creds.authorization()));
    const later = await Promise.all([1, 2, 3].map(() => creds.authorization()));
    assert.deepEqual(new Set([...first, ...later]), new Set(["Bearer tok-1"]));
    assert.equal(tokens.requests.length, 1);
  });

  it("fetches a new token shortly before expires_in runs out", async () => {
    tokens.reply = issue(60);
    const time = clock();
    const creds = new UpstreamCredentials(clientCredentials(), { fetch, now: time.now });
    assert.equal(await creds.authorization(), "Bearer tok-1");
    time.advance(29_000);
    assert.equal(await creds.authorization(), "Bearer tok-1");
    time.advance(2_000); // 31 s: inside the last 30 s of its lifetime
    assert.equal(await creds.authorization(), "Bearer tok-2");
    assert.equal(tokens.requests.length, 2);
  });

  it("assumes five minutes when the token endpoint sends no expires_in", async () => {
    tokens.reply = issue(undefined);
    const time = clock();
    const creds = new UpstreamCredentials(clientCredentials(), { fetch, now: time.now });
    await creds.authorization();
    time.advance(4 * 60_000 + 29_000);
    assert.equal(await creds.authorization(), "Bearer tok-1");
    time.advance(2_000);
    assert.equal(await creds.authorization(), "Bearer tok-2");
  });

  it("drops a token the upstream rejected, and only that one", async () => {
    const creds = new UpstreamCredentials(clientCredentials(), { fetch });
    const rejected = (await creds.authorization()) ?? "";
    creds.invalidate("Bearer some-older-token");
    assert.equal(await creds.authorization(), rejected);
    creds.invalidate(rejected);
    assert.equal(await creds.authorization(), "Bearer tok-2");
  });
});

describe("UpstreamCredentials: failures say why, never with a secret or a token", () => {
  it("names the status and RFC 6749 error code, not the description", async () => {
    tokens.reply = () => ({
      status: 401,
      body: { error: "invalid_client", error_description: `bad secret ${SECRET}` },
    });
    const creds = new UpstreamCredentials(clientCredentials(), { fetch });
    assert.equal(
      await message(creds.authorization()),
      "could not obtain an upstream access token: the token endpoint answered HTTP 401 (invalid_client)",
    );
  });

  it("refuses a reply without token_type, without echoing the token it held", async () => {
    tokens.reply = () => ({ status: 200, body: { access_token: "leaky-token-value" } });
    const creds = new UpstreamCredentials(clientCredentials(), { fetch });
    const text = await message(creds.authorization());
    assert.match(text, /^could not obtain an upstream access token: the token endpoint's reply was refused/);
    assert.doesNotMatch(text, /leaky-token-value/);
  });

  it("refuses a token that cannot be sent as a header value", async () => {
    tokens.reply = () => ({ status: 200, body: { access_token: "a\r\nb", token_type: "Bearer" } });
    const creds = new UpstreamCredentials(clientCredentials(), { fetch });
    assert.match(await message(creds.authorization()), /not a valid header value$/);
  });

  it("gives up after the timeout, and tries again on the next call", async () => {
    tokens.reply = (n) => (n === 1 ? "hang" : issue(3600)(n));
    const creds = new UpstreamCredentials(clientCredentials(), { fetch, tokenTimeoutMs: 100 });
    assert.equal(
      await message(creds.authorization()),
      "could not obtain an upstream access token: the token endpoint did not answer within 100 ms",
    );
    assert.equal(await creds.authorization(), "Bearer tok-2");
  });

  it("asks the token endpoint through the egress fetch, which may refuse it", async () => {
    const refusing = egressFetch(new EgressPolicy({ denyCidrs: ["127.0.0.0/8"] }));
    const creds = new UpstreamCredentials(clientCredentials(), { fetch: refusing });
    assert.match(
      await message(creds.authorization()),
      /^could not obtain an upstream access token: the token endpoint is unreachable: the egress policy refuses 127\.0\.0\.1/,
    );
    assert.equal(tokens.requests.length, 0);
    const allowing = egressFetch(new EgressPolicy());
    const allowed = new UpstreamCredentials(clientCredentials(), { fetch: allowing });
    assert.equal(await allowed.authorization(), "Bearer tok-1");
    assert.equal(tokens.requests[0]?.form.get("grant_type"), "client_credentials");
  });

  it("stops waiting when the caller's request is aborted", async () => {
    tokens.reply = () => "hang";
    const creds = new UpstreamCredentials(clientCredentials(), { fetch, tokenTimeoutMs: 2000 });
    await assert.rejects(creds.authorization(AbortSignal.timeout(50)), { name: "TimeoutError" });
  });
});

describe("auth in provider records", () => {
  const rejects = (input: unknown, expected: string) =>
    assert.throws(
      () => validateProvider(input),
      (err) => isPorticoError(err) && err.message === expected,
      expected,
    );
  const mcp = (extra: object) => ({ id: "up", kind: "mcp", url: "https://up.test/mcp", ...extra });

  it("rejects an unknown key in auth, naming it", () => {
    rejects(
      mcp({ auth: { type: "bearer", token: "t0ken", scope: "x" } }),
      'provider.auth.scope: unknown field "scope" (allowed: type, token)',
    );
    rejects(
      mcp({ auth: { ...clientCredentials(), client_secret: "x" } }),
      'provider.auth.client_secret: unknown field "client_secret" (did you mean "clientSecret"?)',
    );
  });

  it("requires clientSecret for client_credentials", () => {
    const { clientSecret: _, ...auth } = clientCredentials() as { clientSecret: string };
    rejects(mcp({ auth }), "provider.auth.clientSecret: is required");
  });

  it("refuses auth next to an Authorization header, on mcp providers and http tools", () => {
    const auth = { type: "bearer", token: "t0ken" };
    const conflict = 'conflicts with "auth": set the upstream credential in one place';
    rejects(
      mcp({ auth, headers: { Authorization: "Bearer x" } }),
      `provider.headers.Authorization: ${conflict}`,
    );
    rejects(
      {
        id: "api",
        kind: "http",
        auth,
        tools: [
          { name: "a", url: "https://api.test/a" },
          { name: "b", url: "https://api.test/b", headers: { authorization: "Bearer x" } },
        ],
      },
      `provider.tools[1].headers.authorization: ${conflict}`,
    );
  });

  it("seals the token and the client secret at rest", () => {
    const secrets = new Secrets("a-test-secret-that-is-long-enough-0123");
    const tenant = validateTenant({
      id: "acme",
      auth: "none",
      providers: [
        mcp({ auth: { type: "bearer", token: "bearer-plaintext" } }),
        {
          id: "api",
          kind: "http",
          auth: { ...clientCredentials(), clientSecret: "client-secret-plaintext" },
          tools: [{ name: "a", url: "https://api.test/a" }],
        },
      ],
    });
    // What tenants/sealed.ts does to each provider record before it reaches the store.
    const sealOne = (v: unknown) => (typeof v === "string" ? seal(secrets, v) : v);
    const stored = JSON.stringify(tenant.providers.map((p) => mapSecrets(p, sealOne)));
    assert.doesNotMatch(stored, /bearer-plaintext|client-secret-plaintext/);
    assert.equal((stored.match(/"enc:v1:/g) ?? []).length, 2);
    assert.match(stored, /"clientId":"portico gw"/, "only the secret fields are sealed");
    const open = (v: unknown) => (typeof v === "string" ? unseal(secrets, v) : v);
    const opened = (JSON.parse(stored) as typeof tenant.providers).map((p) => mapSecrets(p, open));
    assert.deepEqual(opened, tenant.providers);
  });
});
