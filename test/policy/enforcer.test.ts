// The policy on the MCP path, below the handlers (docs/policy.md "Cost", "Metrics and audit"): a
// caller's view of a catalog (lists, lookups, templates, tenant-level names), shared by callers
// with the same view key; decisions counted; denials audited once per subject and entry a
// minute and at most 100 a minute per tenant; claims read into groups and roles.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Authenticated } from "../../src/policy/caller.js";
import { namesFromClaim } from "../../src/policy/claims.js";
import { Policies, type Denial } from "../../src/policy/enforcer.js";
import type { TenantPolicy } from "../../src/records/policy.js";
import { Catalog } from "../../src/providers/catalog.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { StaticProvider } from "../../src/providers/static.js";

const docs = new StaticProvider({
  id: "docs",
  kind: "static",
  prefix: "kb",
  prompts: [
    { name: "summary", messages: [{ role: "user", text: "Summarize" }] },
    { name: "secret-plan", messages: [{ role: "user", text: "Plan" }] },
  ],
  resources: [
    { uri: "docs://public", name: "public", text: "hello" },
    { uri: "docs://internal/pay", name: "pay", text: "numbers" },
  ],
  resourceTemplates: [
    { uriTemplate: "docs://pages/{page}", name: "pages", text: "page {page}" },
    { uriTemplate: "docs://internal/{page}", name: "internal", text: "internal {page}" },
  ],
});
const catalog = new Catalog([docs]);

const policy: TenantPolicy = {
  default: "deny",
  rules: [
    { effect: "deny", resources: ["docs://internal/*"], prompts: ["kb__secret-*"] },
    { effect: "allow", subjects: { groups: ["eng"] }, prompts: ["*"] },
    { effect: "allow", resources: ["docs://*"] },
  ],
};
const tenant: TenantConfig = { id: "acme", auth: "oauth", providers: [], policy };

const caller = (user: string, groups: string[] = []): Authenticated => ({
  principal: `${user} via c`,
  user,
  clientId: "c",
  scopes: ["mcp:read"],
  groups,
});

function setup() {
  const decisions: string[] = [];
  const denials: Denial[] = [];
  const clock = { ms: 0 };
  const policies = new Policies({
    onDecisions: (t, effect, kind, operation, count) =>
      decisions.push(`${t} ${effect} ${kind} ${operation} ${count}`),
    onDenied: (_t, denial) => denials.push(denial),
    now: () => clock.ms,
  });
  return { runtime: policies.for(tenant)!, policies, decisions, denials, clock };
}

describe("a caller's view", () => {
  it("lists and looks up only what is allowed; templates by their uriTemplate, reads by the URI", () => {
    const { runtime } = setup();
    const eng = runtime.view(catalog, caller("u_1", ["eng"]), undefined);
    assert.deepEqual(
      eng.prompts.map((p) => p.name),
      ["kb__summary"],
    );
    assert.ok(eng.prompt("kb__summary"));
    assert.equal(eng.prompt("kb__secret-plan"), undefined);
    assert.deepEqual(
      eng.resources.map((r) => r.uri),
      ["docs://public"],
    );
    assert.deepEqual(
      eng.templates.map((t) => t.uriTemplate),
      ["docs://pages/{page}"],
    );
    assert.ok(eng.resource("docs://pages/intro"), "read through an allowed template");
    assert.equal(eng.resource("docs://internal/intro"), undefined, "a read decided on the URI itself");
    assert.equal(eng.templateTarget("docs://internal/{page}"), undefined);
    assert.ok(eng.hides("prompt", "kb__secret-plan"));
    assert.equal(eng.hides("prompt", "kb__nope"), false, "an unknown name is not hidden: it does not exist");

    const other = runtime.view(catalog, caller("u_2"), undefined);
    assert.deepEqual(other.prompts, [], "no group: the default");
  });

  it("a URI with percent-escapes is decided as sent and as decoded: an escape does not get past a deny", () => {
    const policies = new Policies({ onDecisions: () => undefined, onDenied: () => undefined });
    const pages: TenantPolicy = {
      default: "deny",
      rules: [
        { effect: "deny", resources: ["docs://pages/secret"] },
        { effect: "allow", resources: ["docs://*"] },
      ],
    };
    const view = policies.for({ ...tenant, policy: pages })!.view(catalog, caller("u_1"), undefined);
    assert.ok(view.resource("docs://pages/intro"));
    assert.ok(view.resource("docs://pages/%69ntro"), "an escape of an allowed URI is allowed");
    assert.equal(view.resource("docs://pages/secret"), undefined);
    // The template matches it and hands the upstream (here, the static provider) "secret".
    assert.ok(catalog.resource("docs://pages/%73ecret"));
    assert.equal(view.resource("docs://pages/%73ecret"), undefined);
    assert.ok(view.hides("resource", "docs://pages/%73ecret"), "answered as unknown");
    assert.ok(view.uriAllowed("docs://pages/100%"), "an escape that does not decode is decided as sent");
  });

  it("is shared by callers with the same view key, and rebuilt for a new catalog or policy", () => {
    const { runtime, policies } = setup();
    const a = runtime.view(catalog, caller("u_1", ["eng"]), undefined);
    assert.equal(runtime.view(catalog, caller("u_9", ["eng"]), undefined), a, "no rule names users");
    assert.notEqual(runtime.view(new Catalog([docs]), caller("u_1", ["eng"]), undefined), a);
    assert.equal(policies.for(tenant), runtime, "compiled once per tenant record");
    assert.notEqual(policies.for({ ...tenant }), runtime, "a reloaded record is compiled again");
    assert.equal(policies.for({ ...tenant, policy: undefined }), undefined, "no policy, no runtime");
  });
});

describe("decisions and denials", () => {
  it("counts lists and uses; a name that does not exist is no decision", () => {
    const { runtime, decisions } = setup();
    const view = runtime.view(catalog, caller("u_1", ["eng"]), undefined);
    runtime.listed(view, "prompts", view.prompts.length);
    runtime.used(view, "prompt", "kb__summary", true, () => ({ groups: [], roles: [], scopes: [] }));
    runtime.used(view, "prompt", "kb__secret-plan", false, () => ({ groups: [], roles: [], scopes: [] }));
    runtime.used(view, "prompt", "kb__nope", false, () => ({ groups: [], roles: [], scopes: [] }));
    assert.deepEqual(decisions, [
      "acme allow prompt list 1",
      "acme deny prompt list 1",
      "acme allow prompt use 1",
      "acme deny prompt use 1",
    ]);
  });

  it("audits the first denial of a subject and entry in a minute, at most 100 a minute per tenant", () => {
    const { runtime, denials, clock } = setup();
    const view = runtime.view(catalog, caller("u_1"), undefined);
    const deny = (user: string, name = "kb__secret-plan") =>
      runtime.used(view, "prompt", name, false, () => ({
        user,
        client: "c",
        groups: [],
        roles: [],
        scopes: [],
      }));
    deny("u_1");
    deny("u_1");
    assert.equal(denials.length, 1);
    assert.deepEqual(denials[0], {
      kind: "prompt",
      name: "kb__secret-plan",
      user: "u_1",
      client: "c",
      server: undefined,
      rule: "#0",
    });
    deny("u_1", "kb__summary");
    assert.equal(denials.length, 2, "another entry");
    for (let i = 0; i < 200; i++) deny(`flood-${i}`);
    assert.equal(denials.length, 100, "the tenant's budget for the minute");
    clock.ms += 60_000;
    deny("u_1");
    assert.equal(denials.length, 101, "a new minute");
  });
});

describe("groups and roles from claims", () => {
  it("reads a list or one name, through a dotted path; anything else is none", () => {
    const claims = { groups: ["a", "b", "a", 3, ""], realm_access: { roles: "admin" }, x: { y: null } };
    assert.deepEqual(namesFromClaim(claims, "groups"), ["a", "b"]);
    assert.deepEqual(namesFromClaim(claims, "realm_access.roles"), ["admin"]);
    assert.deepEqual(namesFromClaim(claims, "x.y.z"), []);
    assert.deepEqual(namesFromClaim(claims, "__proto__.constructor"), []);
    assert.deepEqual(namesFromClaim(claims, undefined), []);
    assert.equal(namesFromClaim({ g: Array.from({ length: 500 }, (_, i) => `g${i}`) }, "g").length, 100);
  });
});
