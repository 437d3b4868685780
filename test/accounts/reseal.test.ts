// A key rotation reaches connected accounts (docs/operations.md "Rotating PORTICO_SECRET_KEY"):
// each user's tokens and Portico's dynamic registrations at the upstreams are sealed again under
// the new key, so dropping the old key disconnects nobody; a deleted provider's registrations go
// with it.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { AccountStore, userKey, type AccountTokens } from "../../src/accounts/account-store.js";
import { ClientIdentities } from "../../src/accounts/client-identity.js";
import type { UserOAuthAuth } from "../../src/records/tenant.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { emptyTally, openSealed } from "../../src/tenants/sealed.js";

const OLD = "accounts-rotation-old-key-0123456789abcdef";
const NEW = "accounts-rotation-new-key-0123456789abcdef";
const STRANGER = "accounts-rotation-unknown-key-0123456789ab";

const keys = createKeys("reseal");
const tokens = (accessToken: string): AccountTokens => ({
  accessToken,
  refreshToken: `${accessToken}-refresh`,
  issuer: "https://as.example",
  clientId: "portico",
  mode: "dynamic",
  connectedAt: new Date(0).toISOString(),
  destinations: ["https://mcp.example/mcp"],
});
const auth = { type: "user_oauth", registration: "dynamic" } as UserOAuthAuth;

// An authorization server's RFC 7591 registration endpoint: each registration a new client.
let registered = 0;
const registrar = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    registered++;
    res.writeHead(201, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        client_id: `client-${registered}`,
        client_secret: `secret-${registered}`,
        client_secret_expires_at: 0,
      }),
    );
  });
});
let as: { issuer: string; registration_endpoint: string };
before(async () => {
  await new Promise<void>((resolve) => registrar.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(registrar.address() as AddressInfo).port}`;
  as = { issuer: origin, registration_endpoint: `${origin}/register` };
});
after(() => new Promise<void>((resolve) => registrar.close(() => resolve())));

const identities = (store: MemoryStore, secrets: Secrets) =>
  new ClientIdentities({ store, keys, secrets, fetch, publicUrl: "http://portico.test" });

describe("resealing connected accounts", () => {
  it("moves every user's tokens and the provider's registration to the new key, once", async () => {
    const store = new MemoryStore();
    const before = new Secrets(OLD);
    await new AccountStore(store, keys, before).put("acme", "alice", "gh", tokens("a1"));
    await new AccountStore(store, keys, before).put("acme", "bob", "gh", tokens("b1"));
    const first = await identities(store, before).clientFor("acme", "gh", auth, as);

    const rotated = new Secrets(NEW, [OLD]);
    const tally = emptyTally();
    await new AccountStore(store, keys, rotated).reseal("acme", "gh", tally);
    await identities(store, rotated).reseal("acme", "gh", tally);
    assert.deepEqual(tally, { resealed: 3, alreadyCurrent: 0, failed: [] });

    // The old key can go: everything opens under the new one alone, as it was.
    const after = new Secrets(NEW);
    const accounts = new AccountStore(store, keys, after);
    assert.equal((await accounts.get("acme", "alice", "gh"))?.accessToken, "a1");
    assert.equal((await accounts.get("acme", "bob", "gh"))?.refreshToken, "b1-refresh");
    const again = await identities(store, after).clientFor("acme", "gh", auth, as);
    assert.deepEqual(again.client, first.client, "the same registration, not a new one");
    assert.equal(registered, 1);

    const second = emptyTally();
    await accounts.reseal("acme", "gh", second);
    await identities(store, after).reseal("acme", "gh", second);
    assert.deepEqual(second, { resealed: 0, alreadyCurrent: 3, failed: [] });
  });

  it("names a record no key opens and leaves it as it is", async () => {
    const store = new MemoryStore();
    await new AccountStore(store, keys, new Secrets(STRANGER)).put("acme", "carol", "gh", tokens("c1"));
    const raw = await new AccountStore(store, keys, new Secrets(STRANGER)).raw("acme", "carol", "gh");
    const tally = emptyTally();
    await new AccountStore(store, keys, new Secrets(NEW, [OLD])).reseal("acme", "gh", tally);
    assert.deepEqual(tally, {
      resealed: 0,
      alreadyCurrent: 0,
      failed: [{ tenant: "acme", pointer: "/accounts/gh/carol" }],
    });
    assert.equal(await new AccountStore(store, keys, new Secrets(NEW)).raw("acme", "carol", "gh"), raw);
  });

  it("a resealed record opens only with the accounts key, not the records' one", async () => {
    const store = new MemoryStore();
    await new AccountStore(store, keys, new Secrets(OLD)).put("acme", "dave", "gh", tokens("d1"));
    await new AccountStore(store, keys, new Secrets(NEW, [OLD])).reseal("acme", "gh", emptyTally());
    const raw = (await store.get(keys.account("acme", userKey("dave"), "gh")))!;
    assert.equal(openSealed(new Secrets(NEW), raw, "encryption"), undefined);
    assert.equal(openSealed(new Secrets(NEW), raw, "accounts")?.keyIndex, 0);
  });

  it("a deleted provider's registrations are forgotten, so a provider re-added registers anew", async () => {
    const store = new MemoryStore();
    const secrets = new Secrets(NEW);
    const clients = identities(store, secrets);
    const first = await clients.clientFor("acme", "linear", auth, as);
    await clients.forgetAll("acme", "linear");
    assert.deepEqual(await store.setMembers(keys.accountRegistrations("acme", "linear")), []);
    const second = await clients.clientFor("acme", "linear", auth, as);
    assert.notEqual(second.client.client_id, first.client.client_id);
  });
});
