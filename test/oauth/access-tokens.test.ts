// Access tokens (docs/oauth.md "Access tokens", RFC 9068): the exact claims round trip, and every
// forgery or misuse is rejected with its reason: alg none, HMAC keyed with the public key, forged
// kid, tampering, wrong typ, iss or aud, expiry beyond leeway, revocation.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { base64url, decodeProtectedHeader, exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import {
  AccessTokens,
  InvalidToken,
  type AccessTokensOptions,
  type InvalidTokenReason,
} from "../../src/oauth/access-tokens.js";
import { SigningKeys } from "../../src/oauth/signing-keys.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { RedisStore } from "../../src/store/redis-store.js";
import type { Store } from "../../src/store/store.js";
import { getTestRedis, uniquePrefix } from "../support/redis.js";

const ISSUER = "https://portico.example";
const AUD = `${ISSUER}/mcp/acme`;
const request = { sub: "alice", aud: AUD, client_id: "client-1", scope: "mcp:read mcp:tools" };
const secrets = new Secrets("access-tokens-test-secret-0123456789abcdef");

function setup(options: AccessTokensOptions = {}, store?: Store) {
  const time = { ms: Date.UTC(2026, 0, 1) };
  const now = () => time.ms;
  const signing = new SigningKeys(store ?? new MemoryStore({ now }), createKeys(uniquePrefix()), secrets, {
    now,
    rotateAfterSeconds: 7 * 86400,
  });
  const rejected: InvalidToken[] = [];
  const tokens = new AccessTokens(signing, ISSUER, { now, onInvalid: (e) => rejected.push(e), ...options });
  const nowSeconds = () => Math.floor(time.ms / 1000);
  return { time, signing, tokens, rejected, nowSeconds, advance: (s: number) => void (time.ms += s * 1000) };
}

/** Valid claims for a token issued now, for hand-made tokens. */
function claims(nowSeconds: number, overrides: Record<string, unknown> = {}) {
  const base = {
    iss: ISSUER,
    ...request,
    iat: nowSeconds,
    exp: nowSeconds + 3600,
    jti: "AAAAAAAAAAAAAAAAAAAAAA",
  };
  return { ...base, ...overrides };
}

/** A token signed with Portico's own current key, header and claims as given. */
async function ownSigned(
  signing: SigningKeys,
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
) {
  const { kid, privateKey } = await signing.current();
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid, ...header })
    .sign(privateKey);
}

const json = (value: unknown) => base64url.encode(JSON.stringify(value));

async function rejectsWith(promise: Promise<unknown>, reason: InvalidTokenReason): Promise<void> {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof InvalidToken, `not an InvalidToken: ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    return true;
  });
}

describe("issue and verify", () => {
  it("round-trips the exact RFC 9068 header and claims", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const issued = await tokens.issue(request);
    assert.equal(issued.expiresIn, 3600);
    assert.match(issued.jti, /^[A-Za-z0-9_-]{22}$/, "128 random bits");
    const { kid } = await signing.current();
    assert.deepEqual(decodeProtectedHeader(issued.token), { alg: "ES256", typ: "at+jwt", kid });

    const iat = nowSeconds();
    assert.deepEqual(await tokens.verify(issued.token, AUD), {
      iss: ISSUER,
      sub: "alice",
      aud: AUD,
      client_id: "client-1",
      scope: "mcp:read mcp:tools",
      iat,
      exp: iat + 3600,
      jti: issued.jti,
    });
    assert.notEqual((await tokens.issue(request)).jti, issued.jti);
  });

  it("carries the user's groups and roles when there are some (docs/policy.md); a malformed list is refused", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const issued = await tokens.issue({ ...request, groups: ["eng", "ops"], roles: ["tenant-admin"] });
    const verified = await tokens.verify(issued.token, AUD);
    assert.deepEqual([verified.groups, verified.roles], [["eng", "ops"], ["tenant-admin"]]);
    const none = await tokens.verify((await tokens.issue({ ...request, groups: [] })).token, AUD);
    assert.equal("groups" in none, false, "no empty claim");
    for (const groups of ["eng", [1], [""], Array.from({ length: 101 }, (_, i) => `g${i}`)]) {
      const token = await ownSigned(signing, claims(nowSeconds(), { groups }));
      await rejectsWith(tokens.verify(token, AUD), "malformed");
    }
  });

  it("verifies a token signed before a rotation with the replaced key; new tokens use the new kid", async () => {
    const { tokens, advance } = setup();
    const before = await tokens.issue(request);
    advance(7 * 86400 - 60);
    const after = await tokens.issue(request);
    advance(60);
    const rotated = await tokens.issue(request);
    assert.equal(decodeProtectedHeader(after.token).kid, decodeProtectedHeader(before.token).kid);
    assert.notEqual(decodeProtectedHeader(rotated.token).kid, decodeProtectedHeader(after.token).kid);
    assert.equal((await tokens.verify(after.token, AUD)).jti, after.jti, "old kid still verifies");
    assert.equal((await tokens.verify(rotated.token, AUD)).jti, rotated.jti);
  });

  it("refuses options under which a replaced key could retire before its tokens expire", () => {
    const signing = new SigningKeys(new MemoryStore(), createKeys(uniquePrefix()), secrets, {
      retireAfterSeconds: 3600,
    });
    assert.throws(() => new AccessTokens(signing, ISSUER), /retireAfterSeconds must cover/);
    assert.ok(new AccessTokens(signing, ISSUER, { lifetimeSeconds: 600 }));
  });
});

describe("rejected tokens", () => {
  it("alg none (unsigned, crafted by hand): signature", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const { kid } = await signing.current();
    const unsigned = `${json({ alg: "none", typ: "at+jwt", kid })}.${json(claims(nowSeconds()))}.`;
    await rejectsWith(tokens.verify(unsigned, AUD), "signature");
    const noneLower = `${json({ alg: "None", typ: "at+jwt", kid })}.${json(claims(nowSeconds()))}.`;
    await rejectsWith(tokens.verify(noneLower, AUD), "signature");
  });

  it("HS256 keyed with the public key's bytes (SPKI PEM, JWK JSON, raw x‖y): signature", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const { kid } = await signing.current();
    const publicKey = (await signing.publicKey(kid))!;
    const jwk = (await signing.jwks()).keys[0]!;
    const hmacKeys = [
      new TextEncoder().encode(await exportSPKI(publicKey)),
      new TextEncoder().encode(JSON.stringify(jwk)),
      new Uint8Array([...base64url.decode(jwk.x), ...base64url.decode(jwk.y)]),
    ];
    for (const secret of hmacKeys) {
      const token = await new SignJWT(claims(nowSeconds()))
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid })
        .sign(secret);
      await rejectsWith(tokens.verify(token, AUD), "signature");
    }
  });

  it("signed by another key, with our kid forged or an unknown kid: signature", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const { kid } = await signing.current();
    const attacker = await generateKeyPair("ES256");
    for (const claimedKid of [kid, "attacker-kid", undefined]) {
      const token = await new SignJWT(claims(nowSeconds()))
        .setProtectedHeader({
          alg: "ES256",
          typ: "at+jwt",
          ...(claimedKid !== undefined && { kid: claimedKid }),
        })
        .sign(attacker.privateKey);
      await rejectsWith(tokens.verify(token, AUD), "signature");
    }
  });

  it("a key embedded in the header, even with our kid: signature", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const attacker = await generateKeyPair("ES256", { extractable: true });
    const { kid } = await signing.current();
    const token = await new SignJWT(claims(nowSeconds()))
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid, jwk: await exportJWK(attacker.publicKey) })
      .sign(attacker.privateKey);
    await rejectsWith(tokens.verify(token, AUD), "signature");
  });

  it("tampered payload (scope widened, signature kept): signature", async () => {
    const { tokens } = setup();
    const { token } = await tokens.issue({ ...request, scope: "mcp:read" });
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const widened = {
      ...JSON.parse(new TextDecoder().decode(base64url.decode(payload))),
      scope: "mcp:tools",
    };
    await rejectsWith(tokens.verify(`${header}.${json(widened)}.${signature}`, AUD), "signature");
  });

  it("another audience, or aud as a list that contains this one: audience", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const { token } = await tokens.issue(request);
    await rejectsWith(tokens.verify(token, `${ISSUER}/mcp/other`), "audience");
    await rejectsWith(tokens.verify(token, `${AUD}/`), "audience");
    const listed = await ownSigned(signing, claims(nowSeconds(), { aud: [AUD, `${ISSUER}/mcp/other`] }));
    await rejectsWith(tokens.verify(listed, AUD), "audience");
  });

  it("aud of the MCP URL with one trailing slash is the same resource; nothing else is (docs/oauth.md#client-quirks)", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const slashed = await ownSigned(signing, claims(nowSeconds(), { aud: `${AUD}/` }));
    assert.equal((await tokens.verify(slashed, AUD)).aud, `${AUD}/`);
    for (const aud of [`${AUD}//`, `${AUD}/x`, `${ISSUER}/mcp/other/`, `${AUD}x/`]) {
      const token = await ownSigned(signing, claims(nowSeconds(), { aud }));
      await rejectsWith(tokens.verify(token, AUD), "audience");
    }
  });

  it("another issuer: issuer", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const token = await ownSigned(signing, claims(nowSeconds(), { iss: "https://evil.example" }));
    await rejectsWith(tokens.verify(token, AUD), "issuer");
    const slash = await ownSigned(signing, claims(nowSeconds(), { iss: `${ISSUER}/` }));
    await rejectsWith(tokens.verify(slash, AUD), "issuer");
  });

  it("typ other than at+jwt, or none: type", async () => {
    const { tokens, signing, nowSeconds } = setup();
    await rejectsWith(
      tokens.verify(await ownSigned(signing, claims(nowSeconds()), { typ: "JWT" }), AUD),
      "type",
    );
    await rejectsWith(
      tokens.verify(await ownSigned(signing, claims(nowSeconds()), { typ: undefined }), AUD),
      "type",
    );
    const accepted = await ownSigned(signing, claims(nowSeconds()), { typ: "application/at+jwt" });
    assert.equal(
      (await tokens.verify(accepted, AUD)).sub,
      "alice",
      "RFC 9068 §2.1 allows the full media type",
    );
  });

  it("expired beyond the 30 s leeway: expired; within it: accepted", async () => {
    const { tokens, advance } = setup();
    const { token } = await tokens.issue(request);
    advance(3600 + 29);
    assert.equal((await tokens.verify(token, AUD)).sub, "alice");
    advance(1);
    await rejectsWith(tokens.verify(token, AUD), "expired");
    advance(3600);
    await rejectsWith(tokens.verify(token, AUD), "expired");
  });

  it("not valid yet (nbf or iat in the future beyond leeway): not_yet_valid", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const t = nowSeconds();
    const nbf = await ownSigned(signing, claims(t, { nbf: t + 31 }));
    await rejectsWith(tokens.verify(nbf, AUD), "not_yet_valid");
    const iat = await ownSigned(signing, claims(t, { iat: t + 31, exp: t + 3631 }));
    await rejectsWith(tokens.verify(iat, AUD), "not_yet_valid");
    const slightlyAhead = await ownSigned(signing, claims(t, { nbf: t + 29, iat: t + 29 }));
    assert.equal((await tokens.verify(slightlyAhead, AUD)).sub, "alice");
  });

  it("not a JWT, or missing a claim: malformed", async () => {
    const { tokens, signing, nowSeconds } = setup();
    for (const junk of ["", "abc", "a.b", "a.b.c", `${json("ES256")}.e30.`])
      await rejectsWith(tokens.verify(junk, AUD), "malformed");
    for (const missing of ["client_id", "scope", "jti", "sub", "exp", "iat"]) {
      const { [missing]: _dropped, ...rest } = claims(nowSeconds()) as Record<string, unknown>;
      await rejectsWith(tokens.verify(await ownSigned(signing, rest), AUD), "malformed");
    }
    const numericScope = await ownSigned(signing, claims(nowSeconds(), { scope: 7 }));
    await rejectsWith(tokens.verify(numericScope, AUD), "malformed");
  });

  it("reports every rejection to onInvalid with its reason", async () => {
    const { tokens, rejected } = setup();
    const { token } = await tokens.issue(request);
    await assert.rejects(tokens.verify(token, "https://elsewhere.example/mcp/acme"));
    assert.deepEqual(
      rejected.map((e) => e.reason),
      ["audience"],
    );
  });
});

describe("revocation", () => {
  it("rejects a revoked jti and remembers it only until the token would expire", async () => {
    const { tokens, signing, nowSeconds } = setup();
    const issued = await tokens.issue(request);
    const other = await tokens.issue(request);
    const { exp } = await tokens.verify(issued.token, AUD);
    await tokens.revoke(issued.jti, exp);
    await rejectsWith(tokens.verify(issued.token, AUD), "revoked");
    assert.equal((await tokens.verify(other.token, AUD)).jti, other.jti, "only that token");
    const ttl = await signing.store.ttl(signing.keys.revokedToken(issued.jti));
    assert.equal(ttl, exp + 30 - nowSeconds());
  });

  it("stores nothing for a token already expired, and refuses a jti it never issues", async () => {
    const { tokens, signing, nowSeconds } = setup();
    await tokens.revoke("AAAAAAAAAAAAAAAAAAAAAA", nowSeconds() - 31);
    assert.equal(await signing.store.get(signing.keys.revokedToken("AAAAAAAAAAAAAAAAAAAAAA")), null);
    await assert.rejects(tokens.revoke("x}:other", nowSeconds() + 60), TypeError);
  });

  describe("on Redis", () => {
    let store: RedisStore | undefined;
    after(() => store?.close());

    it("is shared by replicas and expires with the token", async () => {
      store = new RedisStore((await getTestRedis()).url);
      const keys = createKeys(uniquePrefix());
      const replica = () =>
        new AccessTokens(new SigningKeys(store!, keys, secrets), ISSUER, { lifetimeSeconds: 2 });
      const [a, b] = [replica(), replica()];
      const issued = await a.issue(request);
      const { exp } = await b.verify(issued.token, AUD);
      await b.revoke(issued.jti, exp);
      await rejectsWith(a.verify(issued.token, AUD), "revoked");
      const ttl = await store.ttl(keys.revokedToken(issued.jti));
      assert.ok(ttl > 0 && ttl <= 2 + 30, `ttl ${ttl}`);
    });
  });
});
