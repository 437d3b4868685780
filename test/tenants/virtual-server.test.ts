// Virtual server records and views (docs/architecture.md §8): what validation refuses, with the JSON
// path, and how a provider seen through a server lists, renames, overrides and routes back, with
// hostile names (object prototype keys, a rename onto another entry's name) next to the plain case.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Fastify from "fastify";
import { isPorticoError } from "../../src/protocol/errors.js";
import { NO_PROFILE } from "../../src/protocol/profile.js";
import { Catalog } from "../../src/providers/catalog.js";
import type { ProviderConfig } from "../../src/records/tenant.js";
import { validateServer } from "../../src/records/validate-server.js";
import { StaticProvider } from "../../src/providers/static.js";
import type { CallContext, Provider } from "../../src/providers/types.js";
import { validateProvider, validateTenant } from "../../src/records/validate.js";
import { ServerProvider } from "../../src/providers/server-view.js";
import { ServerRuntime, type ServerHost } from "../../src/tenants/virtual-server.js";

const ctx: CallContext = {
  tenantId: "t",
  sessionId: undefined,
  protocolVersion: "2025-11-25",
  clientCapabilities: {},
  logLevel: undefined,
  signal: new AbortController().signal,
  progress: () => {},
  log: () => {},
  request: () => Promise.reject(new Error("no client requests here")),
};

const docs = validateProvider({
  id: "docs",
  kind: "static",
  prefix: "d",
  prompts: [
    { name: "greet", description: "Greets", messages: [{ role: "user", text: "Hello" }] },
    { name: "bye", messages: [{ role: "user", text: "Bye" }] },
    { name: "constructor", messages: [{ role: "user", text: "Proto" }] },
  ],
  resources: [
    { uri: "docs://a", name: "a", text: "A" },
    { uri: "docs://b", name: "b", text: "B" },
  ],
}) as ProviderConfig & { kind: "static" };
const providers: ProviderConfig[] = [docs];

function refusal(input: unknown): string {
  try {
    validateServer(input, "server", providers);
  } catch (err) {
    assert.ok(isPorticoError(err));
    return err.message;
  }
  assert.fail("expected a refusal");
}

describe("validateServer", () => {
  it("takes whole providers and listed entries with overrides", () => {
    const server = validateServer(
      {
        id: "eng",
        scopes: ["eng", "eng"],
        providers: [
          { provider: "docs", prompts: ["greet"], overrides: { prompts: { greet: { name: "hi" } } } },
        ],
      },
      "server",
      providers,
    );
    assert.deepEqual(server.scopes, ["eng"]);
    assert.equal(server.providers[0]!.overrides?.prompts?.greet?.name, "hi");
  });

  it("refuses reserved ids, unknown providers, twice-selected providers, bad names and scopes", () => {
    assert.match(refusal({ id: "sse", providers: [{ provider: "docs" }] }), /^server\.id: "sse" is reserved/);
    assert.match(refusal({ id: "messages", providers: [{ provider: "docs" }] }), /reserved/);
    assert.match(refusal({ id: "Eng", providers: [{ provider: "docs" }] }), /^server\.id:/);
    assert.match(refusal({ id: "x", providers: [] }), /at least one provider/);
    assert.match(
      refusal({ id: "x", providers: [{ provider: "nope" }] }),
      /^server\.providers\[0\]\.provider: the tenant has no provider "nope"/,
    );
    assert.match(refusal({ id: "x", providers: [{ provider: "docs" }, { provider: "docs" }] }), /twice/);
    assert.match(
      refusal({ id: "x", providers: [{ provider: "docs", tools: "all" }] }),
      /tools: must be "\*" \(every one\) or an array of the names/,
    );
    assert.match(
      refusal({ id: "x", providers: [{ provider: "docs", tools: ["a", "a"] }] }),
      /tools\[1\]: "a" is listed twice/,
    );
    assert.match(
      refusal({ id: "x", scopes: ["mcp:tools"], providers: [{ provider: "docs" }] }),
      /scopes\[0\]/,
    );
    assert.match(refusal({ id: "x", scopes: ['a"b'], providers: [{ provider: "docs" }] }), /scopes\[0\]/);
    assert.match(refusal({ id: "x", providers: [{ provider: "docs", extra: 1 }] }), /unknown field "extra"/);
  });

  it("refuses overrides of entries left out, bad new names, and two entries renamed alike", () => {
    const over = (overrides: unknown, prompts: unknown = "*") =>
      refusal({ id: "x", providers: [{ provider: "docs", prompts, overrides }] });
    assert.match(over({ prompts: { bye: { name: "b" } } }, ["greet"]), /leaves out: add "bye"/);
    assert.match(over({ prompts: { greet: { name: "has space" } } }), /1–64 characters/);
    assert.match(over({ prompts: { greet: { annotations: {} } } }), /unknown field "annotations"/);
    assert.match(
      over({ prompts: { greet: { name: "same" }, bye: { name: "same" } } }),
      /already renamed "same"/,
    );
  });

  it("keeps prototype keys as plain entries", () => {
    const server = validateServer(
      {
        id: "x",
        providers: [
          {
            provider: "docs",
            overrides: JSON.parse('{"prompts": {"__proto__": {"name": "p"}, "constructor": {"name": "c"}}}'),
          },
        ],
      },
      "server",
      providers,
    );
    const prompts = server.providers[0]!.overrides!.prompts!;
    assert.deepEqual(Object.keys(prompts).sort(), ["__proto__", "constructor"]);
    assert.equal(Object.getPrototypeOf(prompts), Object.prototype);
  });

  it("a tenant with servers may not trust one fixed external audience", () => {
    assert.throws(
      () =>
        validateTenant({
          id: "t",
          auth: "oauth",
          identity: {
            type: "external",
            issuer: "https://idp.example",
            jwksUrl: "https://idp.example/j",
            audience: "api",
          },
          providers: [docs],
          servers: [{ id: "eng", providers: [{ provider: "docs" }] }],
        }),
      /identity\.audience: a fixed audience cannot be set on a tenant with virtual servers/,
    );
  });
});

describe("ServerProvider", () => {
  const inner: Provider = new StaticProvider(docs);

  it("lists the selection under exposed or new names with overrides, and routes back", async () => {
    const view = new ServerProvider(inner, {
      provider: "docs",
      prompts: ["greet", "constructor"],
      resources: ["docs://b"],
      overrides: {
        prompts: { greet: { name: "hello", description: "Says hello" } },
        resources: { "docs://b": { title: "Bee" } },
      },
    });
    const entries = view.entries();
    assert.deepEqual(
      entries.prompts.map((p) => [p.name, p.description]),
      [
        ["hello", "Says hello"],
        ["d__constructor", undefined],
      ],
    );
    assert.deepEqual(
      entries.resources.map((r) => [r.uri, r.title]),
      [["docs://b", "Bee"]],
    );
    const catalog = new Catalog([view]);
    const target = catalog.prompt("hello")!;
    const got = await target.provider.getPrompt(target.name, {}, ctx);
    assert.match(JSON.stringify(got.messages), /Hello/);
    const proto = catalog.prompt("d__constructor")!;
    assert.match(JSON.stringify((await proto.provider.getPrompt(proto.name, {}, ctx)).messages), /Proto/);
    assert.equal(view.ownPromptName("hello"), "greet");
    assert.equal(view.ownPromptName("d__constructor"), "constructor");
    // Neither the old exposed name nor the provider's own name is listed or routed.
    assert.equal(catalog.prompt("d__greet"), undefined);
    assert.equal(catalog.prompt("greet"), undefined);
    assert.equal(catalog.resource("docs://a"), undefined);
  });

  it("passes hidden tools (callable, unlisted) through the same selection and renames", () => {
    const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });
    class PerUser extends StaticProvider {
      readonly connectTool = "connect_notes";
      override entries() {
        return { ...super.entries(), hiddenTools: [tool("whoami"), tool("other"), tool("connect_notes")] };
      }
    }
    const notes = new PerUser({ id: "notes", kind: "static", prefix: "n" });
    const view = new ServerProvider(notes, {
      provider: "notes",
      tools: ["whoami"],
      overrides: { tools: { whoami: { name: "me" } } },
    });
    assert.deepEqual(
      view.entries().hiddenTools?.map((t) => t.name),
      ["me", "n__connect_notes"],
    );
    const catalog = new Catalog([view]);
    assert.deepEqual(catalog.tools, []);
    assert.equal(catalog.tool("me")?.provider, view);
    assert.equal(view.ownToolName("me"), "whoami");
    assert.equal(catalog.tool("n__other"), undefined);
  });

  it("a rename onto another entry's exposed name holds that name, and is reported", () => {
    const view = new ServerProvider(inner, {
      provider: "docs",
      overrides: { prompts: { greet: { name: "d__bye" } } },
    });
    assert.deepEqual(
      view.entries().prompts.map((p) => p.name),
      ["d__bye", "d__constructor"],
    );
    assert.deepEqual(view.shadowed(), ["prompt 'd__bye' of provider 'docs' is also the new name of 'greet'"]);
    const catalog = new Catalog([view]);
    assert.equal(catalog.prompt("d__bye")!.name, "d__bye");
  });

  it("a renamed entry's title that spelt out its old name follows the new name; a title of its own is kept", () => {
    const tool = (name: string, title?: string, annotationsTitle?: string) => ({
      name,
      inputSchema: { type: "object" as const },
      ...(title !== undefined && { title }),
      ...(annotationsTitle !== undefined && { annotations: { title: annotationsTitle } }),
    });
    const tools: Provider = {
      ...inner,
      id: "ev",
      kind: "mcp",
      prefix: "ev",
      entries: () => ({
        tools: [
          tool("echo", "echo"),
          tool("get_weather", "Get Weather", "get-weather"),
          tool("add", "Add two numbers"),
          tool("ping", "ping"),
          tool("sum", "ev__sum"),
          tool("kept", "kept"),
        ],
        prompts: [],
        resources: [],
        resourceTemplates: [],
      }),
    };
    const view = new ServerProvider(tools, {
      provider: "ev",
      overrides: {
        tools: {
          echo: { name: "say" },
          get_weather: { name: "forecast" },
          add: { name: "plus" },
          ping: { name: "knock", title: "Knock knock" },
          sum: { name: "total" },
        },
      },
    });
    const shown = Object.fromEntries(
      view.entries().tools.map((t) => [t.name, [t.title, t.annotations?.title]]),
    );
    assert.deepEqual(shown, {
      say: ["say", undefined],
      forecast: ["forecast", "forecast"],
      plus: ["Add two numbers", undefined], // the upstream's own words
      knock: ["Knock knock", undefined], // the override's
      total: ["total", undefined], // it spelt out the exposed name
      ev__kept: ["kept", undefined], // not renamed: a prefix alone keeps the title
    });
  });

  it("merges annotation overrides over a tool's own, null removing one", () => {
    const tools: Provider = {
      ...inner,
      id: "api",
      kind: "http",
      prefix: "",
      entries: () => ({
        tools: [
          {
            name: "t",
            inputSchema: { type: "object" },
            annotations: { readOnlyHint: false, openWorldHint: true },
          },
        ],
        prompts: [],
        resources: [],
        resourceTemplates: [],
      }),
    };
    const view = new ServerProvider(tools, {
      provider: "api",
      overrides: { tools: { t: { annotations: { readOnlyHint: true, openWorldHint: null }, title: "T" } } },
    });
    const [tool] = view.entries().tools;
    assert.deepEqual(tool!.annotations, { readOnlyHint: true });
    assert.equal(tool!.title, "T");
  });
});

describe("ServerRuntime", () => {
  it("takes what its clients saw from the tenant's lists, never from one user's (list_changed once, when due)", () => {
    const shared = new StaticProvider(docs);
    const mineConfig = validateProvider({
      id: "mine",
      kind: "static",
      prompts: [{ name: "own", messages: [{ role: "user", text: "Own" }] }],
    }) as ProviderConfig & { kind: "static" };
    // A user's catalog has their own provider beside the tenant's (what per-user providers give).
    const tenantCatalog = new Catalog([shared]);
    const userCatalog = new Catalog([shared, new StaticProvider(mineConfig)]);
    const host: ServerHost = {
      config: { id: "t", auth: "none", providers: [docs, mineConfig] },
      list: [shared],
      catalog: tenantCatalog,
      catalogFor: (_profile, user) => (user === undefined ? tenantCatalog : userCatalog),
      profileCount: 1,
      currentCatalogs: () => [tenantCatalog],
    };
    const server = new ServerRuntime(
      host,
      { id: "eng", providers: [{ provider: "docs" }, { provider: "mine" }] },
      { log: Fastify({ logger: false }).log },
    );
    // A user's request derives the server's view of their catalog first.
    assert.ok((server.catalogFor(NO_PROFILE, "u_1") as Catalog).prompt("own"));
    assert.deepEqual(server.changedLists(), [], "nothing changed for the server's clients");
  });
});
