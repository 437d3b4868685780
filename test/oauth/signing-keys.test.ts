// Signing keys (docs/oauth.md "Signing keys"): one key agreed on by racing replicas, rotation and
// retirement on an injected clock, a JWKS without private members, private keys sealed at rest.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { calculateJwkThumbprint, CompactSign, compactVerify, type CryptoKey } from "jose";
import { isPorticoError } from "../../src/protocol/errors.js";
import { SigningKeys, type SigningKeysOptions } from "../../src/oauth/signing-keys.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { RedisStore } from "../../src/store/redis-store.js";
import type { Store } from "../../src/store/store.js";
import { unseal } from "../../src/tenants/sealed.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const secrets = new Secrets("signing-keys-test-secret-0123456789abcdef");
const DAY = 24 * 60 * 60;

function clock(startMs = Date.UTC(2026, 0, 1)) {
  const c = { ms: startMs, now: () => c.ms, advance: (seconds: number) => void (c.ms += seconds * 1000) };
  return c;
}

function setup(options: SigningKeysOptions = {}) {
  const time = clock();
  const store = new MemoryStore({ now: time.now });
  const keys = createKeys(uniquePrefix());
  const make = (extra: SigningKeysOptions = {}, s: Secrets = secrets) =>
    new SigningKeys(store, keys, s, { now: time.now, ...options, ...extra });
  return {
    time,
    store,
    keys,
    make,
    record: async () => JSON.parse((await store.get(keys.oauthSigningKeys()))!),
  };
}

const kids = async (signing: SigningKeys) => (await signing.jwks()).keys.map((k) => k.kid);

async function signsAndVerifies(privateKey: CryptoKey, publicKey: CryptoKey | undefined): Promise<boolean> {
  if (publicKey === undefined) return false;
  const jws = await new CompactSign(new TextEncoder().encode("hello"))
    .setProtectedHeader({ alg: "ES256" })
    .sign(privateKey);
  return (await compactVerify(jws, publicKey)).payload.length === 5;
}

describe("first key", () => {
  it("is created once when replicas race on the embedded store", async () => {
    const { make, record, store } = setup();
    const outcomes: boolean[] = [];
    const compareAndSet = store.compareAndSet.bind(store);
    store.compareAndSet = async (...args) => {
      outcomes.push(await compareAndSet(...args));
      return outcomes.at(-1)!;
    };
    const replicas = Array.from({ length: 5 }, () => make());
    const current = await Promise.all(replicas.map((r) => r.current()));
    assert.equal(new Set(current.map((c) => c.kid)).size, 1);
    assert.equal((await record()).keys.length, 1);
    assert.deepEqual(outcomes.sort(), [false, false, false, false, true], "four lost the race and re-read");
  });

  describe("on Redis", () => {
    const stores: Store[] = [];
    after(() => Promise.all(stores.map((s) => s.close())));

    it("is created once when replicas with their own connections race", async () => {
      const { url } = await getTestRedis();
      const keys = createKeys(uniquePrefix());
      const writes: boolean[] = [];
      const replicas = Array.from({ length: 4 }, () => {
        const store = new RedisStore(url);
        stores.push(store);
        const compareAndSet = store.compareAndSet.bind(store);
        store.compareAndSet = async (...args) => {
          writes.push(await compareAndSet(...args));
          return writes.at(-1)!;
        };
        return new SigningKeys(store, keys, secrets);
      });
      const current = await Promise.all(replicas.map((r) => r.current()));
      assert.equal(new Set(current.map((c) => c.kid)).size, 1);
      const raw = await stores[0]!.get(keys.oauthSigningKeys());
      assert.equal(JSON.parse(raw!).keys.length, 1);
      assert.deepEqual(await kids(replicas[3]!), [current[0]!.kid]);
      assert.equal(writes.filter(Boolean).length, 1, `one write won: ${JSON.stringify(writes)}`);
    });
  });
});

describe("rotation", () => {
  it("makes a new signing key, keeps the old one published until retired, then drops it", async () => {
    const { time, make, record } = setup({ rotateAfterSeconds: 30 * DAY, retireAfterSeconds: DAY });
    const signing = make();
    const first = await signing.current();
    time.advance(30 * DAY - 1);
    assert.equal((await signing.current()).kid, first.kid, "not yet due");

    time.advance(1);
    const second = await signing.current();
    assert.notEqual(second.kid, first.kid);
    assert.deepEqual(await kids(signing), [second.kid, first.kid]);
    assert.ok(
      await signsAndVerifies(first.privateKey, await signing.publicKey(first.kid)),
      "old kid verifies",
    );
    assert.ok(await signsAndVerifies(second.privateKey, await signing.publicKey(second.kid)));

    time.advance(DAY - 1);
    assert.deepEqual(await kids(signing), [second.kid, first.kid], "still published");
    time.advance(1);
    assert.deepEqual(await kids(signing), [second.kid]);
    assert.equal(await signing.publicKey(first.kid), undefined);
    assert.deepEqual(
      (await record()).keys.map((k: { kid: string }) => k.kid),
      [second.kid],
      "removed from the store",
    );
  });

  it("reaches a replica whose copy is cached: it never signs with a key that is due", async () => {
    const { time, make } = setup({ rotateAfterSeconds: 100, retireAfterSeconds: 50, cacheSeconds: 60 });
    const a = make();
    const b = make();
    const first = await a.current();
    assert.equal((await b.current()).kid, first.kid);
    time.advance(100);
    const rotated = await a.current();
    assert.equal((await b.current()).kid, rotated.kid);
    assert.equal((await make().current()).kid, rotated.kid, "a third replica agrees");
  });

  it("publishes a kid another replica added, after a bounded re-read", async () => {
    const { time, make } = setup({ cacheSeconds: 60 });
    const slow = make({ rotateAfterSeconds: 1000 });
    const fast = make({ rotateAfterSeconds: 10 });
    const first = await slow.current();
    time.advance(10);
    assert.equal(await slow.publicKey("no-such-kid"), undefined, "an unknown kid: re-read, still unknown");
    const second = await fast.current();
    assert.notEqual(second.kid, first.kid);
    assert.equal(await slow.publicKey(second.kid), undefined, "re-read less than a second ago: not again");
    time.advance(1);
    assert.ok(await slow.publicKey(second.kid));
  });
});

describe("JWKS", () => {
  it("holds public members only, each with kid, alg ES256 and use sig; kid is the RFC 7638 thumbprint", async () => {
    const { time, make } = setup({ rotateAfterSeconds: 10 });
    const signing = make();
    await signing.current();
    time.advance(10);
    const { keys } = await signing.jwks();
    assert.equal(keys.length, 2);
    for (const jwk of keys) {
      assert.deepEqual(Object.keys(jwk).sort(), ["alg", "crv", "kid", "kty", "use", "x", "y"]);
      assert.equal(jwk.alg, "ES256");
      assert.equal(jwk.use, "sig");
      assert.equal(jwk.crv, "P-256");
      assert.equal(await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }), jwk.kid);
    }
    assert.ok(!JSON.stringify(keys).includes('"d"'));
  });
});

describe("at rest", () => {
  it("stores the private key sealed: `d` never appears in clear", async () => {
    const { make, store, keys } = setup();
    await make().current();
    const raw = (await store.get(keys.oauthSigningKeys()))!;
    const stored = JSON.parse(raw).keys[0];
    assert.match(stored.privateJwk, /^enc:v1:/);
    const { d } = JSON.parse(unseal(secrets, stored.privateJwk));
    assert.equal(typeof d, "string");
    assert.ok(d.length >= 40);
    assert.ok(!raw.includes(d), "private d in clear");
    assert.ok(!raw.includes('"d"'));
  });

  it("refuses a record sealed under another PORTICO_SECRET_KEY with a clear error, and leaves it alone", async () => {
    const { time, make, store, keys } = setup({ rotateAfterSeconds: 10 });
    const first = await make().current();
    const other = make({}, new Secrets("another-secret-that-is-long-enough-9876"));
    await assert.rejects(other.current(), (err) => {
      assert.ok(isPorticoError(err) && err.code === "PORTICO_ERR_CONFIG_INVALID");
      assert.match(err.message, /sealed under another PORTICO_SECRET_KEY/);
      return true;
    });
    assert.deepEqual(await kids(other), [first.kid], "public keys still serve verification");

    const before = await store.get(keys.oauthSigningKeys());
    time.advance(10);
    await assert.rejects(other.current(), /another PORTICO_SECRET_KEY/);
    assert.equal(await store.get(keys.oauthSigningKeys()), before, "no key only it could open");
  });

  it("refuses a private key stored in clear, and an unreadable record", async () => {
    const { make, store, keys } = setup();
    await make().current();
    const record = JSON.parse((await store.get(keys.oauthSigningKeys()))!);
    record.keys[0].privateJwk = unseal(secrets, record.keys[0].privateJwk);
    await store.set(keys.oauthSigningKeys(), JSON.stringify(record));
    await assert.rejects(make().current(), /is not sealed/);

    await store.set(keys.oauthSigningKeys(), "{not json");
    await assert.rejects(make().jwks(), /OAuth signing keys \(.*signing-keys\): it is not JSON/);
  });
});
