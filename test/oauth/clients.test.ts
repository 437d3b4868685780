// RFC 7591 registration: metadata validation, the registration response, durable records with
// hashed secrets, client authentication (RFC 6749 §2.3.1) and pre-registration per tenant.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, describe, it } from "node:test";
import {
  ClientStore,
  OAuthClientError,
  validateRegistration,
  type ClientMetadata,
  type OAuthClientErrorCode,
} from "../../src/oauth/clients.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { RedisStore } from "../../src/store/redis-store.js";
import type { Store } from "../../src/store/store.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const LOOPBACK = "http://127.0.0.1:33418/callback";
/** RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E. */
const DESCRIPTION_CHARS = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;

function refusal(body: unknown): OAuthClientError {
  try {
    validateRegistration(body);
  } catch (err) {
    assert.ok(err instanceof OAuthClientError, String(err));
    assert.match(err.description, DESCRIPTION_CHARS);
    return err;
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

describe("validateRegistration (RFC 7591 §2)", () => {
  it("accepts what MCP clients send: a public client with loopback redirect URIs", () => {
    const body = {
      client_name: "Claude Code (portico)",
      redirect_uris: [LOOPBACK],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "mcp:read mcp:tools offline_access",
    };
    assert.deepEqual(validateRegistration(body), body);
  });

  it("applies RFC 7591 defaults: client_secret_basic, authorization_code, code", () => {
    assert.deepEqual(validateRegistration({ redirect_uris: ["https://app.example.com/cb"] }), {
      redirect_uris: ["https://app.example.com/cb"],
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: ["authorization_code"],
      response_types: ["code"],
    });
  });

  it("keeps the known optional members and drops every unknown one", () => {
    const known = {
      application_type: "native",
      client_name: "Inspector",
      client_uri: "https://inspector.example/",
      logo_uri: "https://inspector.example/logo.png",
      tos_uri: "https://inspector.example/tos",
      policy_uri: "https://inspector.example/privacy",
      contacts: ["ops@inspector.example"],
      software_id: "4NRB1-0XZABZI9E6-5SM3R",
      software_version: "2.1",
    };
    const body = JSON.parse(
      JSON.stringify({
        ...known,
        redirect_uris: ["cursor://anysphere.cursor-retrieval/oauth/callback"],
        token_endpoint_auth_method: "client_secret_post",
        jwks_uri: "https://evil.example/jwks",
        client_secret: "chosen-by-client",
        client_id: "chosen-by-client",
        extra: { deep: true },
      }).replace(/^\{/, '{"__proto__":{"polluted":true},"constructor":{"name":"x"},'),
    );
    assert.ok(Object.hasOwn(body, "__proto__"));
    const metadata = validateRegistration(body);
    assert.deepEqual(
      Object.keys(metadata).sort(),
      [
        ...Object.keys(known),
        "grant_types",
        "redirect_uris",
        "response_types",
        "token_endpoint_auth_method",
      ].sort(),
    );
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  });

  it("treats null and empty strings as absent, and removes duplicate grant types", () => {
    const metadata = validateRegistration({
      redirect_uris: [LOOPBACK],
      token_endpoint_auth_method: null,
      client_name: "",
      logo_uri: null,
      grant_types: ["authorization_code", "authorization_code", "refresh_token"],
    });
    assert.equal(metadata.token_endpoint_auth_method, "client_secret_basic");
    assert.equal("client_name" in metadata, false);
    assert.deepEqual(metadata.grant_types, ["authorization_code", "refresh_token"]);
  });

  const refusals: Array<[string, unknown, OAuthClientErrorCode, RegExp]> = [
    ["a non-object body", [], "invalid_client_metadata", /must be a JSON object/],
    ["a null body", null, "invalid_client_metadata", /must be a JSON object/],
    ["no redirect_uris", {}, "invalid_redirect_uri", /redirect_uris must be a non-empty array/],
    ["empty redirect_uris", { redirect_uris: [] }, "invalid_redirect_uri", /non-empty array/],
    ["a string redirect_uris", { redirect_uris: LOOPBACK }, "invalid_redirect_uri", /non-empty array/],
    [
      "too many redirect_uris",
      { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) },
      "invalid_redirect_uri",
      /at most 20 redirect_uris/,
    ],
    [
      "non-loopback http",
      { redirect_uris: [LOOPBACK, "http://localhost.evil.com/cb"] },
      "invalid_redirect_uri",
      /^redirect_uris\[1\] http is allowed only to a loopback host/,
    ],
    [
      "a fragment",
      { redirect_uris: ["https://x.example/cb#f"] },
      "invalid_redirect_uri",
      /\[0\] must not contain a fragment/,
    ],
    ["javascript:", { redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri", /javascript: scheme/],
    ["a number URI", { redirect_uris: [42] }, "invalid_redirect_uri", /\[0\] must be a non-empty string/],
    [
      "loopback for a web client",
      { redirect_uris: [LOOPBACK], application_type: "web" },
      "invalid_redirect_uri",
      /for native clients/,
    ],
    [
      "an unknown application_type",
      { redirect_uris: [LOOPBACK], application_type: "desktop" },
      "invalid_client_metadata",
      /application_type must be one of: web, native/,
    ],
    [
      "client_secret_jwt",
      { redirect_uris: [LOOPBACK], token_endpoint_auth_method: "client_secret_jwt" },
      "invalid_client_metadata",
      /token_endpoint_auth_method must be one of: none, client_secret_basic, client_secret_post/,
    ],
    [
      "the implicit grant",
      { redirect_uris: [LOOPBACK], grant_types: ["implicit"] },
      "invalid_client_metadata",
      /only authorization_code and refresh_token/,
    ],
    [
      "client_credentials",
      { redirect_uris: [LOOPBACK], grant_types: ["authorization_code", "client_credentials"] },
      "invalid_client_metadata",
      /only authorization_code and refresh_token/,
    ],
    [
      "refresh_token alone",
      { redirect_uris: [LOOPBACK], grant_types: ["refresh_token"] },
      "invalid_client_metadata",
      /must include authorization_code/,
    ],
    [
      "response type token",
      { redirect_uris: [LOOPBACK], response_types: ["code", "token"] },
      "invalid_client_metadata",
      /response_types must be code alone/,
    ],
    [
      "a non-string grant",
      { redirect_uris: [LOOPBACK], grant_types: [1] },
      "invalid_client_metadata",
      /grant_types must be an array of strings/,
    ],
    [
      "a numeric client_name",
      { redirect_uris: [LOOPBACK], client_name: 7 },
      "invalid_client_metadata",
      /client_name must be a string/,
    ],
    [
      "a huge client_name",
      { redirect_uris: [LOOPBACK], client_name: "x".repeat(201) },
      "invalid_client_metadata",
      /client_name must be at most 200 characters/,
    ],
    [
      "a bidi override in client_name",
      { redirect_uris: [LOOPBACK], client_name: "Good App\u202Egnp.exe" },
      "invalid_client_metadata",
      /client_name must not contain control or bidi characters/,
    ],
    [
      "a newline in client_name",
      { redirect_uris: [LOOPBACK], client_name: "Good\nApp" },
      "invalid_client_metadata",
      /client_name must not contain control/,
    ],
    [
      "a javascript: logo",
      { redirect_uris: [LOOPBACK], logo_uri: "javascript:alert(1)" },
      "invalid_client_metadata",
      /logo_uri must be an https URL/,
    ],
    [
      "an http client_uri",
      { redirect_uris: [LOOPBACK], client_uri: "http://app.example" },
      "invalid_client_metadata",
      /client_uri must be an https URL/,
    ],
    [
      "a space in a URI",
      { redirect_uris: [LOOPBACK], tos_uri: "https://app.example/t os" },
      "invalid_client_metadata",
      /tos_uri must be an https URL/,
    ],
    [
      "credentials in a URI",
      { redirect_uris: [LOOPBACK], policy_uri: "https://u:p@app.example/p" },
      "invalid_client_metadata",
      /must not contain user information/,
    ],
    [
      "a quote in scope",
      { redirect_uris: [LOOPBACK], scope: 'mcp:read "x"' },
      "invalid_client_metadata",
      /scope must be space-separated scope tokens/,
    ],
    [
      "a double space in scope",
      { redirect_uris: [LOOPBACK], scope: "mcp:read  mcp:tools" },
      "invalid_client_metadata",
      /scope must be/,
    ],
    [
      "contacts as a string",
      { redirect_uris: [LOOPBACK], contacts: "ops@example.com" },
      "invalid_client_metadata",
      /contacts must be an array of strings/,
    ],
    [
      "too many contacts",
      { redirect_uris: [LOOPBACK], contacts: Array.from({ length: 11 }, (_, i) => `${i}@x.example`) },
      "invalid_client_metadata",
      /contacts must have at most 10 entries/,
    ],
  ];
  for (const [name, body, code, description] of refusals)
    it(`refuses ${name} with ${code}`, () => {
      const err = refusal(body);
      assert.equal(err.error, code);
      assert.match(err.description, description);
    });

  it("never echoes a hostile value in the description", () => {
    const err = refusal({ redirect_uris: ["http://evil.example/<script>" + "a".repeat(500)] });
    assert.ok(!err.description.includes("evil.example"), err.description);
  });
});

const publicClient: ClientMetadata = validateRegistration({
  redirect_uris: [LOOPBACK],
  token_endpoint_auth_method: "none",
  client_name: "Public",
});
const confidentialClient: ClientMetadata = validateRegistration({
  redirect_uris: ["https://app.example.com/cb"],
  client_name: "Confidential",
});

const NOW = new Date("2026-03-01T12:00:00Z");
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

async function rejectsInvalidClient(promise: Promise<unknown>, reason: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof OAuthClientError);
    assert.equal(err.error, "invalid_client");
    // One description for every failure: nothing tells an unknown client from a wrong secret.
    assert.equal(err.description, "client authentication failed");
    assert.match(err.reason ?? "", reason);
    return true;
  });
}

function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`ClientStore on ${name}`, () => {
    let store: Store | undefined;
    after(() => store?.close());
    const setup = async () => {
      store ??= await open();
      const keys = createKeys(uniquePrefix());
      let now = NOW;
      const clients = new ClientStore(store, keys, () => now);
      return { store, keys, clients, tick: (s: number) => (now = new Date(now.getTime() + s * 1000)) };
    };

    it("registers a confidential client: secret shown once, stored only as its SHA-256, expiring unused", async () => {
      const { store, keys, clients } = await setup();
      const response = await clients.register(confidentialClient);
      assert.match(response.client_id, /^[A-Za-z0-9_-]{22}$/);
      assert.match(response.client_secret ?? "", /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(response, {
        client_id: response.client_id,
        client_id_issued_at: NOW.getTime() / 1000,
        client_secret: response.client_secret,
        client_secret_expires_at: NOW.getTime() / 1000 + 86_400,
        ...confidentialClient,
      });
      const raw = (await store.get(keys.oauthClient(response.client_id))) ?? "";
      assert.ok(!raw.includes(response.client_secret!), "the secret itself is not stored");
      assert.ok(raw.includes(sha256(response.client_secret!)), "its SHA-256 is");
      const ttl = await store.ttl(keys.oauthClient(response.client_id));
      assert.ok(ttl > 86_300 && ttl <= 86_400, `deleted a day later unless used: TTL ${ttl}`);
      const record = await clients.get(response.client_id);
      assert.deepEqual(record, {
        clientId: response.client_id,
        issuedAt: NOW.getTime() / 1000,
        secretHash: sha256(response.client_secret!),
        expiresAt: NOW.getTime() / 1000 + 86_400,
        metadata: confidentialClient,
      });
    });

    it("registers a public client without any secret", async () => {
      const { clients } = await setup();
      const response = await clients.register(publicClient);
      assert.equal("client_secret" in response, false);
      assert.equal("client_secret_expires_at" in response, false);
      assert.equal((await clients.get(response.client_id))?.secretHash, undefined);
    });

    it("authenticates a confidential client by its secret, in one voice for every failure", async () => {
      const { clients } = await setup();
      const { client_id, client_secret } = await clients.register(confidentialClient);
      const other = await clients.register(confidentialClient);
      assert.equal((await clients.authenticate(client_id, client_secret)).clientId, client_id);
      assert.equal(
        (await clients.authenticate(client_id, client_secret, "client_secret_basic")).clientId,
        client_id,
      );
      await rejectsInvalidClient(clients.authenticate(client_id, `${client_secret}x`), /wrong or missing/);
      await rejectsInvalidClient(clients.authenticate(client_id, other.client_secret), /wrong or missing/);
      await rejectsInvalidClient(clients.authenticate(client_id, ""), /wrong or missing/);
      await rejectsInvalidClient(clients.authenticate(client_id, undefined), /wrong or missing/);
      await rejectsInvalidClient(
        clients.authenticate(client_id, client_secret, "client_secret_post"),
        /used client_secret_post, registered client_secret_basic/,
      );
      await rejectsInvalidClient(
        clients.authenticate("AAAAAAAAAAAAAAAAAAAAAA", client_secret),
        /unknown client_id/,
      );
      await rejectsInvalidClient(clients.authenticate("x}:other", client_secret), /unknown client_id/);
    });

    it("authenticates a public client only without a secret", async () => {
      const { clients } = await setup();
      const { client_id } = await clients.register(publicClient);
      assert.equal((await clients.authenticate(client_id, undefined, "none")).clientId, client_id);
      await rejectsInvalidClient(
        clients.authenticate(client_id, "guess"),
        /public client presented a secret/,
      );
      await rejectsInvalidClient(
        clients.authenticate(client_id, undefined, "client_secret_basic"),
        /used client/,
      );
    });

    it("answers undefined for ids it never issues, without touching other keys", async () => {
      const { clients } = await setup();
      for (const id of ["", "short", "x}:other", "https://app.example/client.json", "A".repeat(23)])
        assert.equal(await clients.get(id), undefined, id);
    });

    it("deletes a client", async () => {
      const { store, keys, clients } = await setup();
      const { client_id } = await clients.register(publicClient);
      assert.equal(await clients.delete(client_id), true);
      assert.equal(await clients.delete(client_id), false);
      assert.equal(await clients.get(client_id), undefined);
      assert.equal(await store.get(keys.oauthClient(client_id)), null);
    });

    it("pre-registers clients per tenant and lists them oldest first", async () => {
      const { store, keys, clients, tick } = await setup();
      const first = await clients.preRegister("acme", confidentialClient);
      tick(10);
      const second = await clients.preRegister("acme", publicClient);
      await clients.preRegister("globex", publicClient);
      await clients.register(publicClient);
      const listed = await clients.listForTenant("acme");
      assert.deepEqual(
        listed.map((r) => [r.clientId, r.tenant, r.issuedAt]),
        [
          [first.client_id, "acme", NOW.getTime() / 1000],
          [second.client_id, "acme", NOW.getTime() / 1000 + 10],
        ],
      );
      assert.ok(first.client_secret, "the admin sees the secret once");
      await clients.delete(first.client_id);
      assert.deepEqual(
        (await clients.listForTenant("acme")).map((r) => r.clientId),
        [second.client_id],
      );
      assert.deepEqual(await store.setMembers(keys.oauthTenantClients("acme")), [second.client_id]);
      assert.deepEqual(await clients.listForTenant("initech"), []);
    });

    it("is shared by every replica on the store", async () => {
      const { store, keys, clients } = await setup();
      const { client_id, client_secret } = await clients.register(confidentialClient);
      const replica = new ClientStore(store, keys);
      assert.equal((await replica.authenticate(client_id, client_secret)).clientId, client_id);
    });
  });
}

storeContract("MemoryStore", async () => new MemoryStore());
storeContract("Redis", async () => new RedisStore((await getTestRedis()).url));
