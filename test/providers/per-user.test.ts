// Per-user providers on one replica: the connect tool and its answers by client, the elicitation
// completion told to the asking session only, and the bounds (users per provider, idle users,
// users' catalogs per tenant). The user's upstream here is a static provider: what matters is
// that each user gets their own, built with their own credentials.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import type { AccountChange, UserTokenSource } from "../../src/providers/user-tokens.js";
import { isPorticoError } from "../../src/protocol/errors.js";
import { Catalog } from "../../src/providers/catalog.js";
import type { McpProviderConfig } from "../../src/records/tenant.js";
import { MAX_USERS, PerUserProvider } from "../../src/providers/per-user.js";
import type { UserCredentials } from "../../src/providers/per-user/user-credentials.js";
import { StaticProvider } from "../../src/providers/static.js";
import type { CallContext, Provider } from "../../src/providers/types.js";
import { MAX_USERS as MAX_USER_VIEWS, UserViews } from "../../src/tenants/user-views.js";
import { NO_PROFILE } from "../../src/protocol/profile.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

const quiet = { debug: () => undefined, warn: () => undefined } as unknown as FastifyBaseLogger;
const CFG = { id: "notes", kind: "mcp", url: "https://notes.test/mcp", auth: { type: "user_oauth" } };

class Accounts implements UserTokenSource {
  readonly tokens = new Map<string, string>();
  readonly links: string[] = [];
  #listener: ((c: AccountChange) => void) | undefined;
  async tokenFor(_t: string, user: string) {
    return this.tokens.get(user);
  }
  async refused(_t: string, user: string) {
    this.tokens.delete(user);
  }
  async connectUrl(_t: string, user: string, _p: string, elicitationId?: string) {
    this.links.push(user);
    return `https://portico.test/connect?e=${elicitationId}`;
  }
  onChange(listener: (c: AccountChange) => void) {
    this.#listener = listener;
    return () => (this.#listener = undefined);
  }
  fire(change: AccountChange) {
    this.#listener?.(change);
  }
}

const store = new MemoryStore();

/** A user's upstream with one tool. */
class ToolUpstream extends StaticProvider {
  constructor(id = "notes") {
    super({ id, kind: "static" });
  }
  override entries() {
    return { ...super.entries(), tools: [{ name: "whoami", inputSchema: { type: "object" as const } }] };
  }
  override async callTool(): Promise<never> {
    return { content: [{ type: "text", text: `answered by ${this.id}` }] } as never;
  }
}

function setup(idleMs?: number, upstream?: () => Provider) {
  const accounts = new Accounts();
  const notified: Array<[string, string, unknown]> = [];
  const built: UserCredentials[] = [];
  const changed: string[] = [];
  const provider = new PerUserProvider(CFG as unknown as McpProviderConfig, {
    tenantId: "acme",
    source: accounts,
    build: (credentials) => {
      built.push(credentials as UserCredentials);
      if (upstream) return upstream();
      return new StaticProvider({
        id: "notes",
        kind: "static",
        resources: [{ uri: "n://1", name: "n", text: "x" }],
      });
    },
    outlet: {
      notify: async (_t, sid, method, params) => void notified.push([sid, method, params]),
      request: async () => ({}),
    },
    log: quiet,
    idleMs,
    store,
    keys: createKeys("per-user-test"),
  });
  void provider.start({
    listChanged: () => undefined,
    healthChanged: () => undefined,
    userChanged: (user) => void changed.push(user),
  });
  return { accounts, provider, notified, built, changed };
}

function ctx(protocolVersion: string, clientCapabilities: object, sessionId?: string): CallContext {
  return {
    tenantId: "acme",
    sessionId,
    protocolVersion,
    clientCapabilities,
    logLevel: undefined,
    signal: new AbortController().signal,
    progress: () => undefined,
    log: () => undefined,
    request: async () => ({}),
  };
}

const textOf = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

describe("PerUserProvider", () => {
  it("lists only the connect tool to a user who has not connected, and their own upstream once they have", async () => {
    const { accounts, provider, built } = setup();
    const ada = await provider.forUser("ada");
    assert.deepEqual(
      ada.entries().tools.map((t) => [t.name, t.description]),
      [["connect_notes", "Connect your notes account to use its tools"]],
    );
    accounts.tokens.set("bob", "bob-token");
    const bob = await provider.forUser("bob");
    assert.deepEqual(
      bob.entries().resources.map((r) => r.uri),
      ["n://1"],
    );
    assert.equal(await built[0]!.authorization(), "Bearer bob-token");
    assert.deepEqual(built[0]!.secrets(), ["bob-token"]);
    await provider.close();
  });

  it("asks an unconnected user to connect in the form their client takes", async () => {
    const { accounts, provider } = setup();
    const ada = await provider.forUser("ada");
    const text = await ada.callTool("connect_notes", {}, ctx("2025-06-18", { elicitation: {} }));
    assert.equal(text.isError, true);
    assert.match(
      textOf(text),
      /Connect your notes account to use its tools: open https:\/\/portico\.test\/connect\?e=/,
    );
    await assert.rejects(
      ada.callTool("connect_notes", {}, ctx("2025-11-25", { elicitation: { url: {} } }, "s1")),
      (err) =>
        isPorticoError(err) &&
        err.rpc === -32042 &&
        (err.data as { elicitations: unknown[] }).elicitations.length === 1,
    );
    // A 2025-06-18 session that says url: that revision has no -32042.
    const old = await ada.callTool("connect_notes", {}, ctx("2025-06-18", { elicitation: { url: {} } }));
    assert.equal(old.isError, true);
    const stateless = (await ada.callTool(
      "connect_notes",
      {},
      {
        ...ctx("2026-07-28", { elicitation: { url: {} } }),
        mrtr: {},
      },
    )) as unknown as Record<string, any>;
    assert.equal(stateless.resultType, "input_required");
    assert.equal(stateless.inputRequests.connect.params.mode, "url");
    assert.deepEqual(accounts.links, ["ada", "ada", "ada", "ada"]);
    await provider.close();
  });

  it("tells the asking session, and no other user's, that the elicitation completed", async () => {
    const { accounts, provider, notified, changed } = setup();
    const ada = await provider.forUser("ada");
    const err = await ada
      .callTool("connect_notes", {}, ctx("2025-11-25", { elicitation: { url: {} } }, "ada-session"))
      .catch((e: unknown) => e);
    const id = (err as { data: { elicitations: Array<{ elicitationId: string }> } }).data.elicitations[0]!
      .elicitationId;
    // Another user naming ada's elicitation id reaches nobody.
    accounts.fire({ tenant: "acme", user: "eve", provider: "notes", connected: true, elicitationIds: [id] });
    accounts.tokens.set("ada", "ada-token");
    accounts.fire({ tenant: "acme", user: "ada", provider: "notes", connected: true, elicitationIds: [id] });
    accounts.fire({ tenant: "other", user: "ada", provider: "notes", connected: true });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(notified, [
      ["ada-session", "notifications/elicitation/complete", { elicitationId: id }],
    ]);
    assert.deepEqual(changed, ["eve", "ada"]);
    assert.deepEqual(
      (await provider.forUser("ada")).entries().resources.map((r) => r.uri),
      ["n://1"],
    );
    await provider.close();
  });

  it("keeps the tools a user had callable, unlisted, once the account goes: calling one asks to connect", async () => {
    const { accounts, provider, changed } = setup(undefined, () => new ToolUpstream());
    accounts.tokens.set("ada", "ada-token");
    const ada = await provider.forUser("ada");
    assert.deepEqual(
      ada.entries().tools.map((t) => t.name),
      ["whoami"],
    );
    accounts.tokens.delete("ada");
    accounts.fire({ tenant: "acme", user: "ada", provider: "notes", connected: false });
    while (!changed.includes("ada")) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(
      ada.entries().tools.map((t) => t.name),
      ["connect_notes"],
    );
    assert.deepEqual(
      ada.entries().hiddenTools?.map((t) => t.name),
      ["whoami"],
    );
    const asked = await ada.callTool("whoami", {}, ctx("2025-06-18", { elicitation: {} }));
    assert.equal(asked.isError, true);
    assert.match(textOf(asked), /Connect your notes account to use its tools: open /);
    // A hidden tool never takes a name another provider lists, wherever it comes in the catalog.
    const other = new ToolUpstream("other");
    const catalog = new Catalog([ada, other]);
    assert.equal(catalog.tool("whoami")?.provider, other);
    assert.equal(new Catalog([ada]).tool("whoami")?.provider, ada);
    await provider.close();
  });

  it("keeps at most MAX_USERS users' upstreams, closing the least recently used", async () => {
    const { accounts, provider } = setup();
    for (let i = 0; i <= MAX_USERS; i++) accounts.tokens.set(`u${i}`, `t${i}`);
    const first = await provider.forUser("u0");
    for (let i = 1; i <= MAX_USERS; i++) await provider.forUser(`u${i}`);
    assert.equal(provider.userCount, MAX_USERS);
    assert.equal((first as { closed?: boolean }).closed, true);
    await provider.close();
  });

  it("closes a user's upstream once idle", async () => {
    const { accounts, provider } = setup(40);
    accounts.tokens.set("ada", "t");
    const ada = await provider.forUser("ada");
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(provider.userCount, 0);
    assert.equal((ada as { closed?: boolean }).closed, true);
    await provider.close();
  });
});

describe("UserViews", () => {
  it("keeps at most MAX_USERS users' catalogs per tenant, each their own", async () => {
    const { accounts, provider } = setup();
    accounts.tokens.set("u1", "t");
    const list: Provider[] = [provider];
    const views = new UserViews(
      () => list,
      () => undefined,
    );
    const connected = await views.get("u1", NO_PROFILE);
    const not = await views.get("u0", NO_PROFILE);
    assert.deepEqual(
      connected.tools.map((t) => t.name),
      [],
    );
    assert.equal(connected.tool("connect_notes")?.name, "connect_notes", "callable, not listed");
    assert.deepEqual(
      not.tools.map((t) => t.name),
      ["connect_notes"],
    );
    for (let i = 2; i <= MAX_USER_VIEWS + 1; i++) await views.get(`u${i}`, NO_PROFILE);
    assert.equal(views.size, MAX_USER_VIEWS);
    await provider.close();
  });
});
