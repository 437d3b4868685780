// Policy semantics (docs/policy.md "Semantics"): first match, the default, wildcards, subjects
// (any-of within a list, every list given), servers, entry kinds, tenant-level names; validation
// naming the bad rule.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CompiledPolicy } from "../../src/policy/rules.js";
import type { Subject, TenantPolicy } from "../../src/policy/types.js";
import { validatePolicy } from "../../src/policy/validate.js";
import { validateTenant } from "../../src/providers/validate.js";

const subject = (over: Partial<Subject> = {}): Subject => ({ groups: [], roles: [], scopes: [], ...over });

const policy: TenantPolicy = {
  default: "deny",
  rules: [
    { id: "admins", effect: "allow", subjects: { roles: ["tenant-admin"] } },
    { id: "no-secrets", effect: "deny", resources: ["docs://secret*"], prompts: ["secret-*"] },
    { id: "eng-github", effect: "allow", subjects: { groups: ["eng", "platform"] }, tools: ["github__*"] },
    {
      id: "ops-on-ops",
      effect: "allow",
      subjects: { groups: ["ops"], clients: ["cli"] },
      servers: ["ops"],
      tools: ["*"],
    },
    { effect: "allow", prompts: ["*"], resources: ["docs://*"] },
  ],
};

describe("policy rules", () => {
  const compiled = new CompiledPolicy(policy);

  it("the first matching rule decides; none matching, the default does", () => {
    const admin = subject({ roles: ["tenant-admin"] });
    assert.deepEqual(compiled.decide(admin, "resource", ["docs://secret"]), {
      effect: "allow",
      rule: 0,
      ruleId: "admins",
    });
    assert.equal(compiled.decide(subject(), "resource", ["docs://secret"]).effect, "deny");
    assert.equal(compiled.decide(subject(), "resource", ["docs://secret"]).rule, 1);
    assert.deepEqual(compiled.decide(subject(), "tool", ["github__issues"]), {
      effect: "deny",
      rule: undefined,
    });
  });

  it("a list of subjects is any-of; two lists must both match", () => {
    assert.equal(compiled.decide(subject({ groups: ["platform"] }), "tool", ["github__x"]).effect, "allow");
    const ops = subject({ groups: ["ops"], server: "ops" });
    assert.equal(compiled.decide(ops, "tool", ["anything"]).effect, "deny", "no client");
    assert.equal(compiled.decide({ ...ops, client: "cli" }, "tool", ["anything"]).effect, "allow");
    assert.equal(compiled.decide({ ...ops, client: "cli", server: undefined }, "tool", ["x"]).effect, "deny");
  });

  it("a rule naming entries covers only those kinds; `*` matches any run of characters, nothing else is special", () => {
    assert.equal(compiled.decide(subject(), "prompt", ["code-review"]).effect, "allow");
    assert.equal(compiled.decide(subject(), "tool", ["code-review"]).effect, "deny");
    assert.equal(compiled.decide(subject({ groups: ["eng"] }), "tool", ["github__"]).effect, "allow");
    const literal = new CompiledPolicy({ default: "deny", rules: [{ effect: "allow", tools: ["a.b(c)?"] }] });
    assert.equal(literal.decide(subject(), "tool", ["a.b(c)?"]).effect, "allow");
    assert.equal(literal.decide(subject(), "tool", ["axb(c)"]).effect, "deny");
  });

  it("an entry matches by any of its names (the exposed one, then the tenant-level one)", () => {
    const eng = subject({ groups: ["eng"] });
    assert.equal(compiled.decide(eng, "tool", ["issues", "github__issues"]).effect, "allow");
  });

  it("views are shared by callers who differ only in what no rule names", () => {
    assert.equal(
      compiled.viewKey(subject({ user: "u_1", scopes: ["mcp:read"] })),
      compiled.viewKey(subject({ user: "u_2", scopes: ["mcp:tools"] })),
    );
    assert.notEqual(compiled.viewKey(subject({ groups: ["eng"] })), compiled.viewKey(subject()));
  });
});

describe("policy validation", () => {
  const problem = (input: unknown) => {
    try {
      validatePolicy(input);
    } catch (err) {
      return (err as { message: string; data: { path: string } }).data.path + " | " + (err as Error).message;
    }
    return "valid";
  };

  it("names the bad rule's path", () => {
    assert.match(
      problem({ default: "deny", rules: [{ effect: "allow" }, { effect: "maybe" }] }),
      /^policy\.rules\[1\]\.effect/,
    );
    assert.match(
      problem({ default: "deny", rules: [{ effect: "allow", tools: [""] }] }),
      /^policy\.rules\[0\]\.tools\[0\]/,
    );
    assert.match(
      problem({ default: "deny", rules: [{ effect: "allow", subject: {} }] }),
      /did you mean "subjects"/,
    );
    assert.match(
      problem({
        default: "deny",
        rules: [
          { id: "a", effect: "allow" },
          { id: "a", effect: "deny" },
        ],
      }),
      /rules\[1\]\.id .*duplicate rule id "a"/,
    );
    assert.match(
      problem({ default: "deny", rules: [{ effect: "allow", servers: ["Not A Slug"] }] }),
      /servers\[0\]/,
    );
    assert.match(problem({ rules: [] }), /policy\.default/);
    assert.equal(
      problem({ default: "allow", rules: [{ effect: "deny", servers: ["@default"], tools: ["x"] }] }),
      "valid",
    );
  });
});

describe("a tenant record's policy (bootstrap file, admin API)", () => {
  it("is kept by validateTenant, and a bad one names its path under the tenant", () => {
    const tenant = { id: "acme", auth: "oauth", providers: [], policy };
    assert.deepEqual(validateTenant(tenant).policy, policy);
    assert.throws(
      () =>
        validateTenant({ ...tenant, policy: { default: "allow", rules: [{ effect: "allow", tools: "x" }] } }),
      /tenant\.policy\.rules\[0\]\.tools: must be an array/,
    );
  });
});
