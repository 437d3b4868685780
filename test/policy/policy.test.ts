// Policy end to end (docs/policy.md): users of one oauth tenant with groups and roles set through
// the admin API sign in through Portico's login page; each sees and uses exactly what the explain
// endpoint says, in both eras; hidden entries are answered exactly as unknown ones (called by name,
// fetched, completed, subscribed to); denials are counted and audited once.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { NO_PROFILE } from "../../src/protocol/profile.js";
import { startMinimalUpstream, type MinimalUpstream } from "../fixtures/minimal-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient } from "../support/clients.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort, uniquePrefix } from "../support/redis.js";
import { readEvents } from "../support/sse.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import type { TenantPolicy } from "../../src/records/policy.js";

const TENANT = "corp";
const VERSION = "2026-07-28";

const POLICY: TenantPolicy = {
  default: "deny",
  rules: [
    { id: "admins", effect: "allow", subjects: { roles: ["tenant-admin"] } },
    { id: "no-secrets", effect: "deny", prompts: ["secret-*"], resources: ["docs://secret"] },
    { id: "eng-github", effect: "allow", subjects: { groups: ["eng"] }, tools: ["gh__*", "ask__*"] },
    {
      id: "sales-math",
      effect: "allow",
      subjects: { groups: ["sales"] },
      servers: ["@default"],
      tools: ["math__*"],
    },
    { id: "everyone-docs", effect: "allow", prompts: ["*"], resources: ["docs://*"] },
  ],
};

const USERS = [
  { username: "alice", password: "alice-password-1", groups: ["eng"] },
  { username: "bob", password: "bob-password-12", groups: ["sales"] },
  { username: "carol", password: "carol-password-1" },
  { username: "dana", password: "dana-password-12", roles: ["tenant-admin"] },
];

type Kind = "tool" | "prompt" | "resource";
const ENTRIES: ReadonlyArray<{ kind: Kind; name: string }> = [
  { kind: "tool", name: "gh__add" },
  { kind: "tool", name: "math__add" },
  { kind: "prompt", name: "code-review" },
  { kind: "prompt", name: "secret-plan" },
  { kind: "resource", name: "docs://public" },
  { kind: "resource", name: "docs://secret" },
];

let upstream: MinimalUpstream;
let asking: { url: string; close(): Promise<void> };

/** A session-era upstream whose one tool asks the user a question (elicitation) mid-call. */
async function startAskingUpstream() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const transport = sessions.get(String(req.headers["mcp-session-id"]));
    if (transport) return void transport.handleRequest(req, res);
    const server = new McpServer({ name: "asking", version: "1.0.0" });
    server.registerTool("ask_name", { description: "Asks the user for a name" }, async (extra) => {
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: "Name?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } } },
          },
        },
        ElicitResultSchema,
      );
      return { content: [{ type: "text", text: `Hello, ${String(answer.content?.name)}` }] };
    });
    const fresh = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, fresh),
    });
    void server.connect(fresh).then(() => fresh.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
let portico: RunningPortico;
let issuer: string;
const PREFIX = uniquePrefix();
let admin: AdminClient;
const tokens = new Map<string, string>();

function tenant(url: string, askUrl: string): TenantConfig {
  return {
    id: TENANT,
    auth: "oauth",
    providers: [
      { id: "gh", kind: "mcp", prefix: "gh", url },
      { id: "math", kind: "mcp", prefix: "math", url },
      { id: "ask", kind: "mcp", prefix: "ask", url: askUrl, era: "session" },
      {
        id: "docs",
        kind: "static",
        prompts: [
          {
            name: "code-review",
            arguments: [{ name: "language", values: ["go", "rust"] }],
            messages: [{ role: "user", text: "Review {{language}}" }],
          },
          {
            name: "secret-plan",
            arguments: [{ name: "quarter", values: ["q1", "q2"] }],
            messages: [{ role: "user", text: "Plan {{quarter}}" }],
          },
        ],
        resources: [
          { uri: "docs://public", name: "public", text: "hello" },
          { uri: "docs://secret", name: "secret", text: "the plan" },
        ],
      },
    ],
    servers: [
      // Every entry under the tenant URL's names, and one renamed tool alone.
      { id: "sales", providers: ["gh", "math", "ask", "docs"].map((provider) => ({ provider })) },
      {
        id: "team",
        providers: [{ provider: "math", tools: ["add"], overrides: { tools: { add: { name: "sum" } } } }],
      },
    ],
  };
}

before(async () => {
  upstream = await startMinimalUpstream();
  asking = await startAskingUpstream();
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  portico = await startPortico({
    redisPrefix: PREFIX,
    tenants: [tenant(upstream.url, asking.url)],
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
  for (const user of USERS) assert.equal((await admin.post(`/tenants/${TENANT}/users`, user)).status, 201);
  assert.equal((await admin.put(`/tenants/${TENANT}/policy`, POLICY)).status, 200);
  const client = await TestOAuthClient.register(issuer);
  for (const user of USERS) {
    const response = await client.tokens(TENANT, user);
    tokens.set(user.username, response.access_token);
  }
});
after(async () => {
  await portico?.close();
  await upstream?.close();
  await asking?.close();
});

async function explain(username: string, kind: Kind, name: string) {
  const res = await admin.post(`/tenants/${TENANT}/policy/explain`, {
    subject: { username },
    entry: { kind, name },
  });
  assert.equal(res.status, 200);
  return res.body as { effect: "allow" | "deny"; rule: number | null; ruleId?: string; known: boolean };
}

/** A 2026-07-28 request with the headers a conforming client sends. */
async function stateless(
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  clientCapabilities: Record<string, unknown> = {},
  url = portico.mcpUrl(TENANT),
) {
  const name =
    typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": method,
      ...(name && { "mcp-name": name }),
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": clientCapabilities,
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
        },
        ...params,
      },
    }),
  });
  return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
}

const useParams = (kind: Kind, name: string) =>
  kind === "tool"
    ? (["tools/call", { name, arguments: { a: 1, b: 2 } }] as const)
    : kind === "prompt"
      ? (["prompts/get", { name, arguments: {} }] as const)
      : (["resources/read", { uri: name }] as const);

describe("policy: users × entries, checked against explain", () => {
  it("the explain endpoint names the deciding rule", async () => {
    assert.deepEqual(await explain("alice", "tool", "gh__add"), {
      effect: "allow",
      rule: 2,
      ruleId: "eng-github",
      names: ["gh__add"],
      known: true,
      subject: {
        user: (await admin.get(`/tenants/${TENANT}/users/alice`)).body.sub,
        groups: ["eng"],
        roles: [],
        scopes: [],
      },
    });
    const carol = await explain("carol", "tool", "gh__add");
    assert.equal(carol.effect, "deny");
    assert.equal(carol.rule, null, "a user in no group gets the default");
    assert.equal((await explain("dana", "resource", "docs://secret")).ruleId, "admins");
  });

  it("session era (SDK v1 client): lists show exactly the allowed entries, and only those can be used", async () => {
    for (const { username } of USERS) {
      const { client } = await connectClient(portico.mcpUrl(TENANT), {
        headers: { authorization: `Bearer ${tokens.get(username)}` },
      });
      try {
        const listed = new Set([
          ...(await client.listTools()).tools.map((t) => `tool:${t.name}`),
          ...(await client.listPrompts()).prompts.map((p) => `prompt:${p.name}`),
          ...(await client.listResources()).resources.map((r) => `resource:${r.uri}`),
        ]);
        for (const { kind, name } of ENTRIES) {
          const { effect } = await explain(username, kind, name);
          assert.equal(
            listed.has(`${kind}:${name}`),
            effect === "allow",
            `${username} lists ${kind} ${name}`,
          );
          const [method, params] = useParams(kind, name);
          const used = await client.request({ method, params }, (await import("zod")).z.any()).then(
            () => "ok",
            (err: Error) => err.message,
          );
          if (effect === "allow") assert.equal(used, "ok", `${username} uses ${kind} ${name}`);
          else assert.notEqual(used, "ok", `${username} may not use ${kind} ${name}`);
        }
      } finally {
        await client.close();
      }
    }
  });

  it("2026-07-28: the same, request by request", async () => {
    for (const { username } of USERS) {
      const token = tokens.get(username)!;
      const listed = new Set([
        ...(await stateless(token, "tools/list")).result!.tools.map(
          (t: { name: string }) => `tool:${t.name}`,
        ),
        ...(await stateless(token, "prompts/list")).result!.prompts.map(
          (p: { name: string }) => `prompt:${p.name}`,
        ),
        ...(await stateless(token, "resources/list")).result!.resources.map(
          (r: { uri: string }) => `resource:${r.uri}`,
        ),
      ]);
      for (const { kind, name } of ENTRIES) {
        const { effect } = await explain(username, kind, name);
        assert.equal(listed.has(`${kind}:${name}`), effect === "allow", `${username} lists ${kind} ${name}`);
        const [method, params] = useParams(kind, name);
        const answer = await stateless(token, method, params);
        assert.equal(answer.error === undefined, effect === "allow", `${username} uses ${kind} ${name}`);
      }
    }
  });
});

describe("policy: hidden entries are indistinguishable from unknown ones", () => {
  const same = (
    hidden: { error?: { code: number; message: string } },
    unknown: { error?: { code: number; message: string } },
    name: string,
    other: string,
  ) => {
    assert.ok(hidden.error && unknown.error, "both refused");
    assert.equal(hidden.error.code, unknown.error.code);
    assert.equal(hidden.error.message, unknown.error.message.replace(other, name));
  };

  it("a hidden tool called by name, a hidden prompt fetched, a hidden resource read", async () => {
    const carol = tokens.get("carol")!;
    same(
      await stateless(carol, "tools/call", { name: "gh__add", arguments: {} }),
      await stateless(carol, "tools/call", { name: "gh__nope", arguments: {} }),
      "gh__add",
      "gh__nope",
    );
    same(
      await stateless(carol, "prompts/get", { name: "secret-plan" }),
      await stateless(carol, "prompts/get", { name: "secret-nope" }),
      "secret-plan",
      "secret-nope",
    );
    same(
      await stateless(carol, "resources/read", { uri: "docs://secret" }),
      await stateless(carol, "resources/read", { uri: "docs://nope" }),
      "docs://secret",
      "docs://nope",
    );
  });

  it("completion on a hidden prompt, and subscribing to a hidden resource (session era)", async () => {
    const { client } = await connectClient(portico.mcpUrl(TENANT), {
      headers: { authorization: `Bearer ${tokens.get("alice")}` },
    });
    try {
      const complete = (name: string) =>
        client
          .complete({ ref: { type: "ref/prompt", name }, argument: { name: "quarter", value: "q" } })
          .then(
            () => "ok",
            (err: Error) => err.message,
          );
      assert.equal(
        await complete("secret-plan"),
        (await complete("secret-nope")).replace("secret-nope", "secret-plan"),
      );
      const visible = await client.complete({
        ref: { type: "ref/prompt", name: "code-review" },
        argument: { name: "language", value: "g" },
      });
      assert.deepEqual(visible.completion.values, ["go"]);
      const subscribe = (uri: string) =>
        client.subscribeResource({ uri }).then(
          () => "ok",
          (err: Error) => err.message,
        );
      assert.equal(
        await subscribe("docs://secret"),
        (await subscribe("docs://nope")).replace("docs://nope", "docs://secret"),
      );
    } finally {
      await client.close();
    }
  });

  it("a 2026-07-28 listen watches no hidden resource: it is dropped as an unknown one is", async () => {
    const abort = new AbortController();
    const res = await fetch(portico.mcpUrl(TENANT), {
      method: "POST",
      signal: abort.signal,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "subscriptions/listen",
        authorization: `Bearer ${tokens.get("carol")}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "l1",
        method: "subscriptions/listen",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          },
          notifications: { resourceSubscriptions: ["docs://public", "docs://secret", "docs://nope"] },
        },
      }),
    });
    const [ack] = await readEvents(res, (events) => events.length > 0);
    abort.abort();
    const { params } = JSON.parse(ack!.data) as {
      params: { notifications: { resourceSubscriptions: string[] } };
    };
    assert.deepEqual(params.notifications.resourceSubscriptions, ["docs://public"]);
  });

  it("denials are counted (no user label) and audited once per subject and entry a minute, naming the user", async () => {
    const metrics = await (await fetch(`${portico.url}/metrics`)).text();
    assert.match(
      metrics,
      /portico_policy_decisions_total\{tenant="corp",effect="deny",kind="tool",operation="use"\} [1-9]/,
    );
    assert.match(
      metrics,
      /portico_policy_decisions_total\{tenant="corp",effect="deny",kind="tool",operation="list"\} [1-9]/,
    );
    assert.doesNotMatch(metrics, /portico_policy_decisions_total\{[^}]*user=/);
    const carol = tokens.get("carol")!;
    for (let i = 0; i < 3; i++) await stateless(carol, "tools/call", { name: "math__add", arguments: {} });
    const audit = await admin.get(`/tenants/${TENANT}/audit?limit=100`);
    const sub = (await admin.get(`/tenants/${TENANT}/users/carol`)).body.sub;
    const denials = (
      audit.body.items as Array<{
        action: string;
        target: string;
        after: { user: string };
        user?: { sub: string; username?: string };
      }>
    ).filter((e) => e.action === "policy.deny" && e.target === "tool:math__add" && e.after.user === sub);
    assert.equal(denials.length, 1);
    assert.equal(denials[0]!.after.user, sub);
    assert.deepEqual(denials[0]!.user, { sub, username: "carol" }, "the entry names the user");
  });
});

describe("policy: admin API", () => {
  it("a bad rule gets 422 pointing at it; If-Match guards the replace; the view and a dry run", async () => {
    const bad = await admin.put(`/tenants/${TENANT}/policy`, {
      default: "deny",
      rules: [{ effect: "allow" }, { effect: "allow", tools: ["x"], servers: ["Bad Name"] }],
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.errors[0].pointer, "/rules/1/servers/0");
    const badWhen = await admin.put(`/tenants/${TENANT}/policy`, {
      default: "deny",
      rules: [{ effect: "allow", when: 'subject.client.matches("^(a+)+$")' }],
    });
    assert.equal(badWhen.status, 422);
    assert.equal(badWhen.body.errors[0].pointer, "/rules/0/when");
    assert.match(badWhen.body.detail, /must not call matches\(\)/);
    const current = await admin.get(`/tenants/${TENANT}/policy`);
    assert.deepEqual(current.body, POLICY);
    const stale = await admin.put(`/tenants/${TENANT}/policy`, POLICY, {
      headers: { "if-match": '"stale"' },
    });
    assert.equal(stale.status, 412);

    const view = await admin.post(`/tenants/${TENANT}/policy/view`, { subject: { username: "bob" } });
    const allowed = (list: Array<{ name: string; effect: string }>) =>
      list.filter((e) => e.effect === "allow").map((e) => e.name);
    assert.deepEqual(allowed(view.body.tools), ["math__add"]);
    assert.deepEqual(allowed(view.body.prompts), ["code-review"]);
    assert.deepEqual(
      allowed(
        (
          await admin.post(`/tenants/${TENANT}/policy/view`, {
            subject: { username: "bob", server: "sales" },
          })
        ).body.tools,
      ),
      [],
      "sales-math applies on the tenant's own URL only",
    );

    const proposed = { ...POLICY, rules: POLICY.rules.filter((r) => r.id !== "eng-github") };
    const dry = await admin.post(`/tenants/${TENANT}/policy/dry-run`, {
      policy: proposed,
      subjects: [{ username: "alice" }, { username: "bob" }],
    });
    assert.deepEqual(dry.body.subjects[0].changes, [
      { kind: "tool", name: "gh__add", before: "allow", after: "deny" },
      { kind: "tool", name: "ask__ask_name", before: "allow", after: "deny" },
    ]);
    assert.deepEqual(dry.body.subjects[1].changes, []);
    assert.deepEqual((await admin.get(`/tenants/${TENANT}/policy`)).body, POLICY, "a dry run saves nothing");
  });
});

describe("policy: the HTTP+SSE transport and virtual servers", () => {
  it("the deprecated HTTP+SSE transport lists and refuses as the others do", async () => {
    const client = new Client({ name: "legacy", version: "1.0.0" }, { capabilities: {} });
    const transport = new SSEClientTransport(new URL(`${portico.mcpUrl(TENANT)}/sse`), {
      requestInit: { headers: { authorization: `Bearer ${tokens.get("carol")}` } },
      eventSourceInit: { fetch: (url, init) => fetch(url, init) },
    });
    await client.connect(transport);
    try {
      assert.deepEqual((await client.listTools()).tools, []);
      const called = await client.callTool({ name: "gh__add", arguments: {} }).then(
        () => "ok",
        (err: Error) => err.message,
      );
      assert.match(called, /Unknown tool: gh__add/);
      // Carol may see no tool: the provider's own name gets no hint naming a hidden one.
      const bare = await client.callTool({ name: "add", arguments: {} }).then(
        () => "ok",
        (err: Error) => err.message,
      );
      assert.match(bare, /Unknown tool: add$/);
    } finally {
      await client.close();
    }
  });

  it("a rule's servers decide per URL", async () => {
    const runtime = portico.registry.get(TENANT)!;
    const catalog = await runtime.catalogFor(NO_PROFILE);
    const user = (await admin.get(`/tenants/${TENANT}/users/bob`)).body;
    const caller = {
      principal: "bob",
      user: user.sub,
      clientId: "c",
      scopes: ["mcp:tools"],
      groups: ["sales"],
    };
    for (const server of [undefined, "sales"]) {
      const view = runtime.policy!.view(catalog, caller, server);
      for (const { kind, name } of ENTRIES.filter((e) => e.kind === "tool")) {
        const explained = await admin.post(`/tenants/${TENANT}/policy/explain`, {
          subject: { username: "bob", ...(server && { server }) },
          entry: { kind, name },
        });
        const listed = view.tools.some((t) => t.name === name);
        assert.equal(listed, explained.body.effect === "allow", `${name} on ${server ?? "the tenant URL"}`);
        assert.equal(view.tool(name) !== undefined, listed);
      }
    }
    assert.ok(runtime.policy!.view(catalog, caller, undefined).tool("math__add"));
    assert.equal(runtime.policy!.view(catalog, caller, "sales").tool("math__add"), undefined);
  });

  it("on a virtual server, a renamed entry is decided by its name there and by its tenant-level name", async () => {
    const team = portico.registry.server(TENANT, "team")!;
    const catalog = await team.catalogFor(NO_PROFILE);
    assert.deepEqual(
      catalog.tools.map((t) => t.name),
      ["sum"],
    );
    const user = (await admin.get(`/tenants/${TENANT}/users/bob`)).body;
    const bob = { principal: "bob", user: user.sub, clientId: "c", scopes: ["mcp:tools"], groups: ["sales"] };
    // sales-math allows math__* on the tenant's own URL only.
    assert.equal(team.policy!.view(catalog, bob, "team").tool("sum"), undefined);
    assert.ok(team.policy!.view(catalog, { ...bob, roles: ["tenant-admin"] }, "team").tool("sum"));
    const explained = await admin.post(`/tenants/${TENANT}/policy/explain`, {
      subject: { username: "bob", server: "team" },
      entry: { kind: "tool", name: "sum" },
    });
    assert.deepEqual(
      { effect: explained.body.effect, names: explained.body.names, known: explained.body.known },
      { effect: "deny", names: ["sum", "math__add"], known: true },
    );
    // A rule naming the tenant-level name decides the renamed entry on the server.
    const proposed = {
      ...POLICY,
      rules: [
        { effect: "allow", subjects: { groups: ["sales"] }, servers: ["team"], tools: ["math__add"] },
        ...POLICY.rules,
      ],
    };
    const dry = await admin.post(`/tenants/${TENANT}/policy/dry-run`, {
      policy: proposed,
      subjects: [{ username: "bob", server: "team" }],
    });
    assert.deepEqual(dry.body.subjects[0].changes, [
      { kind: "tool", name: "sum", before: "deny", after: "allow" },
    ]);
    const unknown = await admin.post(`/tenants/${TENANT}/policy/explain`, {
      subject: { username: "bob", server: "nope" },
      entry: { kind: "tool", name: "sum" },
    });
    assert.equal(unknown.status, 404);
  });
});

describe("policy: a group change reaches tokens at their next issuance", () => {
  it("a token issued before keeps the old groups; the refreshed one has the new", async () => {
    const erin = { username: "erin", password: "erin-password-12" };
    assert.equal((await admin.post(`/tenants/${TENANT}/users`, erin)).status, 201);
    const client = await TestOAuthClient.register(new URL(portico.mcpUrl(TENANT)).origin);
    const first = await client.tokens(TENANT, erin);
    const toolsOf = async (token: string) =>
      (await stateless(token, "tools/list")).result!.tools.map((t: { name: string }) => t.name);
    assert.deepEqual(await toolsOf(first.access_token), []);

    const patched = await admin.patch(`/tenants/${TENANT}/users/erin`, { groups: ["eng"] });
    assert.deepEqual(patched.body.groups, ["eng"]);
    assert.equal((await explain("erin", "tool", "gh__add")).effect, "allow", "explain reads the record");
    assert.deepEqual(await toolsOf(first.access_token), [], "the old token keeps the old groups");

    const refreshed = await client.refresh(first.refresh_token!);
    assert.deepEqual(await toolsOf(refreshed.access_token), ["gh__add", "ask__ask_name"]);

    assert.deepEqual(
      (await admin.patch(`/tenants/${TENANT}/users/erin`, { groups: [] })).body.groups,
      undefined,
    );
    const again = await client.refresh(refreshed.refresh_token!);
    assert.deepEqual(await toolsOf(again.access_token), []);
  });
});

describe("policy: 2026-07-28 retries are decided again", () => {
  it("a held call whose tool the policy hides meanwhile is refused at its retry, as an unknown tool", async () => {
    const alice = tokens.get("alice")!;
    const elicit = { elicitation: {} };
    const first = await stateless(alice, "tools/call", { name: "ask__ask_name", arguments: {} }, elicit);
    assert.equal(first.result?.resultType, "input_required", JSON.stringify(first));
    const key = Object.keys(first.result.inputRequests as object)[0]!;
    const retry = (requestState: unknown) =>
      stateless(
        alice,
        "tools/call",
        {
          name: "ask__ask_name",
          arguments: {},
          inputResponses: { [key]: { action: "accept", content: { name: "ada" } } },
          requestState,
        },
        elicit,
      );

    const hiding = { ...POLICY, rules: [{ effect: "deny" as const, tools: ["ask__*"] }, ...POLICY.rules] };
    assert.equal((await admin.put(`/tenants/${TENANT}/policy`, hiding)).status, 200);
    try {
      const refused = await retry(first.result.requestState);
      const unknown = await stateless(alice, "tools/call", { name: "ask__nope", arguments: {} }, elicit);
      assert.equal(refused.error?.code, unknown.error?.code);
      assert.equal(refused.error?.message, unknown.error?.message.replace("ask__nope", "ask__ask_name"));
      const forged = await retry("forged-state");
      assert.deepEqual(forged.error, refused.error, "a forged state tells nothing either");
    } finally {
      assert.equal((await admin.put(`/tenants/${TENANT}/policy`, POLICY)).status, 200);
    }
    const again = await stateless(alice, "tools/call", { name: "ask__ask_name", arguments: {} }, elicit);
    const answered = await stateless(
      alice,
      "tools/call",
      {
        name: "ask__ask_name",
        arguments: {},
        inputResponses: {
          [Object.keys(again.result!.inputRequests as object)[0]!]: {
            action: "accept",
            content: { name: "ada" },
          },
        },
        requestState: again.result!.requestState,
      },
      elicit,
    );
    assert.match(JSON.stringify(answered.result), /Hello, ada/, "allowed again, the rounds work");
  });
});

describe("policy: a change is announced", () => {
  it("sessions get list_changed when the tenant's policy changes", async () => {
    const alice = await connectClient(portico.mcpUrl(TENANT), {
      headers: { authorization: `Bearer ${tokens.get("alice")}` },
    });
    try {
      await alice.client.listTools();
      const changed = alice.waitFor("notifications/tools/list_changed", 5000);
      const narrower = { ...POLICY, rules: [{ effect: "deny" as const, tools: ["gh__*"] }, ...POLICY.rules] };
      assert.equal((await admin.put(`/tenants/${TENANT}/policy`, narrower)).status, 200);
      await changed;
      assert.deepEqual(
        (await alice.client.listTools()).tools.map((t) => t.name),
        ["ask__ask_name"],
        "the next list is the new view",
      );
    } finally {
      assert.equal((await admin.put(`/tenants/${TENANT}/policy`, POLICY)).status, 200);
      await alice.client.close();
    }
  });
});

describe("policy: every replica", () => {
  it("a policy saved on one replica applies on another at once", async () => {
    const other = await startPortico({
      redisPrefix: PREFIX,
      tenants: [],
      env: { PORTICO_PUBLIC_URL: issuer, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    });
    try {
      const dana = tokens.get("dana")!;
      const toolsOn = async (url: string) =>
        (await stateless(dana, "tools/list", {}, {}, url))
          .result!.tools.map((t: { name: string }) => t.name)
          .sort();
      assert.deepEqual(await toolsOn(other.mcpUrl(TENANT)), ["ask__ask_name", "gh__add", "math__add"]);
      const unprefixed = async () =>
        (await stateless(dana, "tools/call", { name: "add", arguments: {} }, {}, other.mcpUrl(TENANT))).error;
      const both = await unprefixed();
      assert.equal(both?.code, -32602);
      assert.match(
        both?.message ?? "",
        /^Unknown tool: add \(did you mean "(gh|math)__add" or "(gh|math)__add"\?\)$/,
      );
      const noMath = { ...POLICY, rules: [{ effect: "deny" as const, tools: ["math__*"] }, ...POLICY.rules] };
      assert.equal((await admin.put(`/tenants/${TENANT}/policy`, noMath)).status, 200);
      const deadline = Date.now() + 5000;
      while ((await toolsOn(other.mcpUrl(TENANT))).includes("math__add") && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(await toolsOn(other.mcpUrl(TENANT)), ["ask__ask_name", "gh__add"]);
      const called = await stateless(
        dana,
        "tools/call",
        { name: "math__add", arguments: {} },
        {},
        other.mcpUrl(TENANT),
      );
      assert.match(called.error?.message ?? "", /Unknown tool: math__add/);
      // The hint names only what this caller is listed: math__add is hidden now.
      const one = await unprefixed();
      assert.equal(one?.code, -32602);
      assert.equal(one?.message, 'Unknown tool: add (did you mean "gh__add"?)');
    } finally {
      assert.equal((await admin.put(`/tenants/${TENANT}/policy`, POLICY)).status, 200);
      await other.close();
    }
  });
});
