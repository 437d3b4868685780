// Connect links (src/accounts/links.ts): bound to tenant, user, provider and elicitation; any
// change to the payload, a MAC under another key, or an expired link reads as no link at all.
import assert from "node:assert/strict";
import { it } from "node:test";
import { ConnectLinks, LINK_TTL_SECONDS } from "../../src/accounts/links.js";
import { Secrets } from "../../src/crypto/secrets.js";

const secrets = new Secrets("portico-test-secret-0123456789abcdef");
let now = Date.parse("2026-11-27T12:00:00Z");
const links = new ConnectLinks(secrets, () => now);

it("says who and what it was made for, until it expires", () => {
  const link = links.sign("acme", "u_ada", "gh", "el-1");
  assert.deepEqual(links.verify(link), {
    tenant: "acme",
    user: "u_ada",
    provider: "gh",
    elicitationId: "el-1",
    expiresAt: now / 1000 + LINK_TTL_SECONDS,
  });
  now += (LINK_TTL_SECONDS + 1) * 1000;
  assert.equal(links.verify(link), undefined);
});

it("refuses a payload changed to another user, a foreign key's MAC, and garbage", () => {
  const link = links.sign("acme", "u_ada", "gh");
  const [payload, mac] = link.split(".") as [string, string];
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
  const bob = Buffer.from(JSON.stringify({ ...claims, u: "u_bob" })).toString("base64url");
  assert.equal(links.verify(`${bob}.${mac}`), undefined);
  const stretched = Buffer.from(JSON.stringify({ ...claims, x: 9_999_999_999 })).toString("base64url");
  assert.equal(links.verify(`${stretched}.${mac}`), undefined);
  const foreign = new ConnectLinks(new Secrets("another-secret-0123456789abcdefghij"), () => now);
  assert.equal(foreign.verify(link), undefined);
  // The MAC is under its own purpose: another purpose's MAC of the same payload does not pass.
  assert.equal(links.verify(`${payload}.${secrets.mac("cursor", payload)}`), undefined);
  for (const junk of [undefined, 42, "", ".", "a.b.c", `${payload}.`, "x".repeat(5000)])
    assert.equal(links.verify(junk), undefined, String(junk));
});
