// The token exchange source (RFC 8693) against the test STS: Portico's assertion as a real STS
// checks it, one exchange per (tenant, user, provider) at a time, tokens cached until shortly before
// they expire, a refused token dropped, and the STS's refusal in safe words.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type CryptoKey as JoseKey,
} from "jose";
import { TokenExchangeSource } from "../../src/accounts/token-exchange.js";
import type { TokenExchangeAuth } from "../../src/records/tenant.js";
import { UpstreamAuthError } from "../../src/providers/upstream-auth.js";
import { startSts, STS_CLIENT, UPSTREAM_AUDIENCE, type Sts } from "../support/sts.js";

let sts: Sts;
let jwksServer: ReturnType<typeof createServer>;
let issuer: string;
let key: { kid: string; privateKey: JoseKey };
let now = Date.now();
let auth: TokenExchangeAuth;

before(async () => {
  const pair = await generateKeyPair("ES256");
  key = { kid: "k1", privateKey: pair.privateKey };
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  jwksServer = createServer((_req, res) => res.end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
  sts = await startSts();
  sts.issuer = issuer;
  auth = {
    type: "token_exchange",
    tokenUrl: sts.tokenUrl,
    audience: UPSTREAM_AUDIENCE,
    clientId: STS_CLIENT.id,
    clientSecret: STS_CLIENT.secret,
  };
});

after(() => {
  sts?.close();
  jwksServer?.close();
});

function source() {
  return new TokenExchangeSource({
    signer: { issuer, key: async () => key },
    fetch,
    authOf: (tenant, provider) => (tenant === "acme" && provider === "notes" ? auth : undefined),
    now: () => now,
  });
}

describe("TokenExchangeSource", () => {
  it("signs a one-minute assertion of the user for the STS", async () => {
    const assertion = await source().assertion("acme", "u_1", auth);
    assert.deepEqual(decodeProtectedHeader(assertion), { alg: "ES256", kid: "k1", typ: "JWT" });
    const claims = decodeJwt(assertion);
    assert.equal(claims.iss, issuer);
    assert.equal(claims.sub, "u_1");
    assert.equal(claims.aud, sts.tokenUrl);
    assert.equal(claims.tenant, "acme");
    assert.equal(claims.exp! - claims.iat!, 60);
    assert.equal(typeof claims.jti, "string");
  });

  it("exchanges once per user at a time, caches, and exchanges again near expiry", async () => {
    const s = source();
    const before = sts.seen.length;
    const [t1, t2] = await Promise.all([
      s.tokenFor("acme", "u_1", "notes"),
      s.tokenFor("acme", "u_1", "notes"),
    ]);
    assert.equal(t1, t2);
    assert.equal(decodeJwt(t1!).sub, "u_1");
    assert.equal(decodeJwt(t1!).aud, UPSTREAM_AUDIENCE);
    assert.equal(sts.seen.length, before + 1);
    const other = await s.tokenFor("acme", "u_2", "notes");
    assert.equal(decodeJwt(other!).sub, "u_2");
    assert.equal(await s.tokenFor("acme", "u_1", "notes"), t1);
    assert.equal(sts.seen.length, before + 2);
    now += 290_000; // expires_in 300 s, exchanged again 30 s before
    await s.tokenFor("acme", "u_1", "notes");
    assert.equal(sts.seen.length, before + 3);
  });

  it("exchanges again after the upstream refused the token", async () => {
    const s = source();
    await s.tokenFor("acme", "u_3", "notes");
    const before = sts.seen.length;
    await s.refused("acme", "u_3", "notes");
    await s.tokenFor("acme", "u_3", "notes");
    assert.equal(sts.seen.length, before + 1);
  });

  it("has nothing for a provider without token exchange, and no connect link", async () => {
    const s = source();
    assert.equal(await s.tokenFor("acme", "u_1", "other"), undefined);
    assert.equal((s as { connectUrl?: unknown }).connectUrl, undefined);
  });

  it("says why the STS refused, in safe words", async () => {
    sts.refuse.add("u_bad");
    await assert.rejects(
      source().tokenFor("acme", "u_bad", "notes"),
      (err: Error) =>
        err instanceof UpstreamAuthError &&
        err.message ===
          "could not obtain an upstream access token: the token endpoint answered HTTP 400 (invalid_grant)",
    );
  });

  it("is refused by the STS when the assertion is not Portico's", async () => {
    const forged = await generateKeyPair("ES256");
    const s = new TokenExchangeSource({
      signer: { issuer, key: async () => ({ kid: "k1", privateKey: forged.privateKey }) },
      fetch,
      authOf: () => auth,
    });
    await assert.rejects(s.tokenFor("acme", "u_1", "notes"), /HTTP 400 \(invalid_grant\)/);
    assert.match(sts.seen.at(-1)!.refused!, /signature verification failed/);
  });
});
