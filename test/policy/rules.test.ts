// Policy semantics (docs/policy.md "Semantics"): first match, the default, wildcards, subjects
// (any-of within a list, every list given), servers, entry kinds, tenant-level names; validation
// naming the bad rule.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CompiledPolicy } from "../../src/policy/rules.js";
import type { Subject, TenantPolicy } from "../../src/records/policy.js";
import { validatePolicy } from "../../src/records/validate-policy.js";
import { validateTenant } from "../../src/records/validate.js";

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
      rule: null,
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

describe("conditions (CEL `when`)", () => {
  const conditional = new CompiledPolicy({
    default: "deny",
    rules: [
      {
        id: "oncall-reads",
        effect: "allow",
        tools: ["*"],
        when: '"oncall" in subject.groups && entry.name.endsWith("_read")',
      },
      { effect: "allow", prompts: ["*"], when: 'subject.client.startsWith("ci-") || subject.user == ""' },
      { effect: "allow", resources: ["*"], when: 'subject.server == "@default"' },
    ],
  });

  it("a rule applies only where its condition holds, over the subject and the entry", () => {
    const oncall = subject({ groups: ["oncall"], user: "u_1", client: "vscode" });
    assert.equal(conditional.decide(oncall, "tool", ["db_read"]).effect, "allow");
    assert.equal(conditional.decide(oncall, "tool", ["db_write"]).effect, "deny");
    assert.equal(conditional.decide(subject({ user: "u_1" }), "tool", ["db_read"]).effect, "deny");
    assert.equal(conditional.decide(oncall, "prompt", ["p"]).effect, "deny");
    assert.equal(conditional.decide({ ...oncall, client: "ci-bot" }, "prompt", ["p"]).effect, "allow");
    assert.equal(conditional.decide(subject(), "prompt", ["p"]).effect, "allow", 'no token: user is ""');
    assert.equal(conditional.decide(subject(), "resource", ["docs://x"]).effect, "allow");
    assert.equal(conditional.decide(subject({ server: "eng" }), "resource", ["docs://x"]).effect, "deny");
  });

  it("a condition makes every attribute part of the view key", () => {
    assert.notEqual(
      conditional.viewKey(subject({ user: "u_1" })),
      conditional.viewKey(subject({ user: "u_2" })),
    );
  });

  it("is type-checked to bool when saved; matches() and unknown fields are refused with the rule's path", () => {
    const problem = (when: string) => {
      try {
        validatePolicy({ default: "deny", rules: [{ effect: "allow" }, { effect: "allow", when }] });
        return "valid";
      } catch (err) {
        return (err as Error).message;
      }
    };
    assert.equal(problem('"a" in subject.roles'), "valid");
    assert.match(problem("1 +"), /^policy\.rules\[1\]\.when: is not a CEL expression/);
    assert.match(problem("subject.user"), /must be a bool expression, not string/);
    assert.match(problem("subject.age > 1"), /does not type-check/);
    assert.match(problem('subject.client.matches("^(a+)+$")'), /must not call matches\(\)/);
    assert.match(problem('subject.groups.exists(g, g.matches("x"))'), /must not call matches\(\)/);
    assert.match(problem(""), /1 to 1000 characters/);
  });
});

describe("docs/policy.md's worked example", () => {
  it("decides as its table says", async () => {
    const { readFile } = await import("node:fs/promises");
    const doc = await readFile(new URL("../../docs/policy.md", import.meta.url), "utf8");
    const json = /-d '(\{\n {2}"default"[\s\S]*?\n\})'/.exec(doc)?.[1];
    assert.ok(json, "the example's policy is in the page");
    const example = new CompiledPolicy(validatePolicy(JSON.parse(json)));
    const effect = (who: Partial<Subject>, kind: "tool" | "prompt" | "resource", name: string) =>
      example.decide(subject({ client: "vscode", ...who }), kind, [name]).effect;
    const alice = { user: "u_alice", groups: ["eng"] };
    assert.equal(effect(alice, "tool", "github__create_issue"), "allow");
    assert.equal(effect(alice, "tool", "billing__refund"), "deny");
    assert.equal(effect(alice, "prompt", "summary"), "allow");
    assert.equal(effect(alice, "resource", "docs://handbook"), "allow");
    assert.equal(effect(alice, "resource", "docs://internal/salaries"), "deny");
    assert.equal(
      example.decide(subject(alice), "resource", ["docs://internal/salaries"]).ruleId,
      "internal-docs",
    );
    const frank = { user: "u_frank", groups: ["finance"] };
    assert.equal(effect(frank, "tool", "github__create_issue"), "deny");
    assert.equal(effect(frank, "tool", "billing__refund"), "allow");
    assert.equal(effect({ user: "u_x" }, "tool", "github__x"), "deny");
    assert.equal(effect({ user: "u_x" }, "prompt", "summary"), "allow");
    const root = { user: "u_root", roles: ["tenant-admin"] };
    assert.equal(effect(root, "resource", "docs://internal/salaries"), "allow");
    assert.equal(effect(root, "tool", "billing__refund"), "allow");
    const ci = { ...alice, client: "ci-bot" };
    assert.equal(effect(ci, "tool", "github__list_issues"), "allow");
    assert.equal(effect(ci, "tool", "github__create_issue"), "deny");
    assert.equal(effect(ci, "prompt", "summary"), "deny");
    assert.equal(effect(ci, "resource", "docs://handbook"), "deny");
  });
});
