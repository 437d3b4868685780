// Provider credentials never reach the store in the clear (docs/architecture.md §4).
import assert from "node:assert/strict";
import { it } from "node:test";
import { Secrets } from "../../src/crypto/secrets.js";
import { openProviders, seal, sealProviders, unseal } from "../../src/tenants/sealed.js";
import type { TenantConfig } from "../../src/records/tenant.js";

const secrets = new Secrets("a-test-secret-that-is-long-enough-0123");
const tenant: TenantConfig = {
  id: "acme",
  auth: "none",
  providers: [
    { id: "up", kind: "mcp", url: "http://127.0.0.1:1/mcp", headers: { authorization: "Bearer up-secret" } },
    {
      id: "wx",
      kind: "http",
      tools: [{ name: "w", url: "http://127.0.0.1:1/w", headers: { "x-api-key": "wx-secret" } }],
    },
  ],
};

it("seals every header value and opens them again", () => {
  const stored = JSON.stringify(sealProviders(secrets, tenant.providers));
  assert.ok(!stored.includes("up-secret") && !stored.includes("wx-secret"), stored);
  assert.deepEqual(openProviders(secrets, JSON.parse(stored) as TenantConfig["providers"]), tenant.providers);
});

it("refuses a value sealed under another key or altered", () => {
  const sealed = seal(secrets, "hello");
  assert.equal(unseal(secrets, sealed), "hello");
  assert.throws(() => unseal(new Secrets("another-secret-that-is-long-enough-9876"), sealed));
  const altered = sealed.slice(0, -2) + (sealed.endsWith("A") ? "BB" : "AA");
  assert.throws(() => unseal(secrets, altered));
});
