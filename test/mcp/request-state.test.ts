// The sealed requestState of MRTR rounds (basic/patterns/mrtr §Server Requirements): what it binds
// and when it stops opening.
import assert from "node:assert/strict";
import { it } from "node:test";
import { isPorticoError } from "../../src/protocol/errors.js";
import {
  digestOf,
  MAX_STATE_CHARS,
  RequestStates,
  type StateBinding,
} from "../../src/mcp/stateless/request-state.js";
import { Secrets } from "../../src/crypto/secrets.js";

const secrets = new Secrets("request-state-test-secret-0123456789");
const binding: StateBinding = {
  tenant: "acme",
  principal: "user-1",
  method: "tools/call",
  digest: digestOf("tools/call", { name: "t", arguments: { a: 1, b: [1, { c: 2 }] } }),
};

function refused(fn: () => unknown, why: RegExp) {
  assert.throws(fn, (err: unknown) => isPorticoError(err) && err.rpc === -32602 && why.test(err.message));
}

it("opens what it sealed, for the same request only, and hides the upstream's state", () => {
  const states = new RequestStates(secrets, 60_000);
  const sealed = states.seal(binding, { upstream: "upstream-secret-state", held: "h1" });
  assert.doesNotMatch(Buffer.from(sealed.slice(2), "base64url").toString("latin1"), /upstream-secret/);
  assert.deepEqual(states.open(binding, sealed), { upstream: "upstream-secret-state", held: "h1" });
  for (const other of [
    { ...binding, tenant: "other" },
    { ...binding, principal: "user-2" },
    { ...binding, principal: "" },
    { ...binding, method: "prompts/get" },
    { ...binding, digest: digestOf("tools/call", { name: "t", arguments: { a: 2 } }) },
  ])
    refused(() => states.open(other, sealed), /exactly as this server returned it/);
  // Another deployment's key (another PORTICO_SECRET_KEY) cannot open it either.
  refused(
    () => new RequestStates(new Secrets("another-secret-0123456789abcdef"), 60_000).open(binding, sealed),
    /exactly/,
  );
});

it("refuses expired, altered and malformed state", async () => {
  const states = new RequestStates(secrets, 20);
  const sealed = states.seal(binding, {});
  await new Promise((resolve) => setTimeout(resolve, 40));
  refused(() => states.open(binding, sealed), /expired/);
  const fresh = new RequestStates(secrets, 60_000).seal(binding, {});
  const at = fresh.length - 5;
  const altered = fresh.slice(0, at) + (fresh[at] === "A" ? "B" : "A") + fresh.slice(at + 1);
  for (const bad of [
    altered,
    fresh.slice(0, -4),
    "1.",
    "2." + fresh.slice(2),
    "",
    7,
    null,
    "1." + "A".repeat(70_000),
  ])
    refused(() => states.open(binding, bad), /requestState/);
});

it("digests the salient params whatever their key order, and nothing the round adds", () => {
  const a = digestOf("tools/call", { name: "t", arguments: { x: 1, y: { p: 1, q: 2 } } });
  const b = digestOf("tools/call", {
    arguments: { y: { q: 2, p: 1 }, x: 1 },
    name: "t",
    _meta: { any: 1 },
    inputResponses: { k: {} },
    requestState: "s",
  });
  assert.equal(a, b);
  assert.notEqual(a, digestOf("tools/call", { name: "t", arguments: { x: 1, y: { p: 1, q: 3 } } }));
  assert.notEqual(a, digestOf("prompts/get", { name: "t", arguments: { x: 1, y: { p: 1, q: 2 } } }));
});

it("seals an upstream state of 100 KB it can open again, and refuses to seal one it could not", () => {
  const states = new RequestStates(secrets, 60_000);
  const big = "s".repeat(100_000);
  assert.equal(states.open(binding, states.seal(binding, { upstream: big })).upstream, big);
  assert.throws(
    () => states.seal(binding, { upstream: "s".repeat(MAX_STATE_CHARS) }),
    (err: unknown) =>
      isPorticoError(err) && err.code === "PORTICO_ERR_PROVIDER_UNAVAILABLE" && /too large/.test(err.message),
  );
});
