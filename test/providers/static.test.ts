// The static provider: prompt rendering, resource and template reads, completion, and the errors a
// client sees for unknown names or missing arguments; also the built-in demo tenant it serves.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { demoTenant } from "../../src/config/demo.js";
import { isPorticoError } from "../../src/protocol/errors.js";
import type { StaticProviderConfig } from "../../src/records/tenant.js";
import { StaticProvider } from "../../src/providers/static.js";
import type { CallContext } from "../../src/providers/types.js";
import { validateProvider, validateTenant } from "../../src/records/validate.js";

const ctx: CallContext = {
  tenantId: "t",
  sessionId: undefined,
  protocolVersion: "2025-06-18",
  clientCapabilities: {},
  logLevel: undefined,
  signal: new AbortController().signal,
  progress: () => {},
  log: () => {},
  request: () => Promise.reject(new Error("no client requests in this test")),
};

const config = validateProvider({
  id: "docs",
  kind: "static",
  prompts: [
    {
      name: "greet",
      description: "Greets someone",
      arguments: [
        { name: "who", required: true, values: ["Ada", "alan", "Grace"] },
        { name: "mood", description: "optional" },
      ],
      messages: [
        { role: "user", text: "Greet {{who}} {{mood}}." },
        { role: "assistant", text: "Ciao {{ who }}!" },
      ],
    },
  ],
  resources: [
    { uri: "docs://readme", name: "readme", mimeType: "text/markdown", text: "# Hi" },
    { uri: "docs://logo", name: "logo", mimeType: "image/png", blob: "iVBORw0K" },
  ],
  resourceTemplates: [
    {
      uriTemplate: "docs://pages/{page}",
      name: "page",
      mimeType: "text/plain",
      text: "Page {page} of {book}",
      values: { page: Array.from({ length: 150 }, (_, i) => `p${i}`) },
    },
  ],
}) as StaticProviderConfig;

const provider = new StaticProvider(config);

async function rejectsWith(promise: Promise<unknown>, code: string, message: string): Promise<void> {
  await assert.rejects(promise, (err) => {
    assert.ok(isPorticoError(err));
    assert.equal(err.code, code);
    assert.equal(err.message, message);
    return true;
  });
}

describe("StaticProvider: entries", () => {
  it("lists prompts without completion values, resources with size, templates", () => {
    const { tools, prompts, resources, resourceTemplates } = provider.entries();
    assert.deepEqual(tools, []);
    assert.deepEqual(prompts, [
      {
        name: "greet",
        description: "Greets someone",
        arguments: [
          { name: "who", required: true },
          { name: "mood", description: "optional" },
        ],
      },
    ]);
    assert.deepEqual(resources, [
      { uri: "docs://readme", name: "readme", mimeType: "text/markdown", size: 4 },
      { uri: "docs://logo", name: "logo", mimeType: "image/png", size: 6 },
    ]);
    assert.deepEqual(resourceTemplates, [
      { uriTemplate: "docs://pages/{page}", name: "page", mimeType: "text/plain" },
    ]);
    assert.equal(provider.healthy, true);
    assert.equal(provider.prefix, "");
  });
});

describe("StaticProvider: prompts", () => {
  it("fills placeholders, an optional argument left out becoming empty", async () => {
    const result = await provider.getPrompt("greet", { who: "Ada" }, ctx);
    assert.deepEqual(result, {
      description: "Greets someone",
      messages: [
        { role: "user", content: { type: "text", text: "Greet Ada ." } },
        { role: "assistant", content: { type: "text", text: "Ciao Ada!" } },
      ],
    });
  });

  it("does not expand placeholders that arrive inside argument values", async () => {
    const result = await provider.getPrompt("greet", { who: "{{mood}}", mood: "happily" }, ctx);
    assert.deepEqual(result.messages[0]?.content, { type: "text", text: "Greet {{mood}} happily." });
  });

  it("answers -32602 for a missing required argument or an unknown prompt", async () => {
    await rejectsWith(
      provider.getPrompt("greet", {}, ctx),
      "PORTICO_ERR_MCP_INVALID_PARAMS",
      "Missing required argument 'who' for prompt 'greet'",
    );
    await rejectsWith(
      provider.getPrompt("nope", {}, ctx),
      "PORTICO_ERR_MCP_INVALID_PARAMS",
      "Unknown prompt 'nope'",
    );
  });
});

describe("StaticProvider: resources", () => {
  it("reads text and blob resources", async () => {
    assert.deepEqual(await provider.readResource("docs://readme", ctx), {
      contents: [{ uri: "docs://readme", mimeType: "text/markdown", text: "# Hi" }],
    });
    assert.deepEqual(await provider.readResource("docs://logo", ctx), {
      contents: [{ uri: "docs://logo", mimeType: "image/png", blob: "iVBORw0K" }],
    });
  });

  it("reads a templated URI, expanding only the template's variables", async () => {
    assert.deepEqual(await provider.readResource("docs://pages/intro%20one", ctx), {
      contents: [
        { uri: "docs://pages/intro%20one", mimeType: "text/plain", text: "Page intro one of {book}" },
      ],
    });
  });

  it("answers resource-not-found for a URI it does not own", async () => {
    for (const uri of ["docs://nope", "docs://pages/a/b", "docs://pages/"]) {
      await rejectsWith(
        provider.readResource(uri, ctx),
        "PORTICO_ERR_MCP_RESOURCE_NOT_FOUND",
        `Resource not found: ${uri}`,
      );
    }
    await assert.rejects(provider.readResource("docs://nope", ctx), {
      rpc: -32002,
      data: { uri: "docs://nope" },
    });
  });
});

describe("StaticProvider: completion", () => {
  it("completes prompt arguments by case-insensitive prefix", async () => {
    const result = await provider.complete(
      { type: "ref/prompt", name: "greet" },
      { name: "who", value: "a" },
      undefined,
      ctx,
    );
    assert.deepEqual(result, { completion: { values: ["Ada", "alan"], total: 2, hasMore: false } });
    const none = await provider.complete(
      { type: "ref/prompt", name: "greet" },
      { name: "mood", value: "" },
      undefined,
      ctx,
    );
    assert.deepEqual(none, { completion: { values: [], total: 0, hasMore: false } });
  });

  it("completes template variables, at most 100 values with total and hasMore", async () => {
    const ref = { type: "ref/resource" as const, uri: "docs://pages/{page}" };
    const all = await provider.complete(ref, { name: "page", value: "P" }, undefined, ctx);
    assert.equal(all.completion.values.length, 100);
    assert.equal(all.completion.total, 150);
    assert.equal(all.completion.hasMore, true);
    const some = await provider.complete(ref, { name: "page", value: "p14" }, undefined, ctx);
    assert.deepEqual(some.completion.values, [
      "p14",
      "p140",
      "p141",
      "p142",
      "p143",
      "p144",
      "p145",
      "p146",
      "p147",
      "p148",
      "p149",
    ]);
  });

  it("answers -32602 for unknown refs and arguments", async () => {
    const code = "PORTICO_ERR_MCP_INVALID_PARAMS";
    const arg = { name: "who", value: "" };
    await rejectsWith(
      provider.complete({ type: "ref/prompt", name: "nope" }, arg, undefined, ctx),
      code,
      "Unknown prompt 'nope'",
    );
    await rejectsWith(
      provider.complete({ type: "ref/prompt", name: "greet" }, { name: "x", value: "" }, undefined, ctx),
      code,
      "Unknown argument 'x' for prompt 'greet'",
    );
    await rejectsWith(
      provider.complete({ type: "ref/resource", uri: "docs://x/{y}" }, arg, undefined, ctx),
      code,
      "Unknown resource template 'docs://x/{y}'",
    );
    await rejectsWith(
      provider.complete(
        { type: "ref/resource", uri: "docs://pages/{page}" },
        { name: "book", value: "" },
        undefined,
        ctx,
      ),
      code,
      "Unknown argument 'book' for resource template 'docs://pages/{page}'",
    );
  });
});

describe("StaticProvider: tools", () => {
  it("has none, so a call answers -32602", async () => {
    await rejectsWith(provider.callTool("x", {}, ctx), "PORTICO_ERR_MCP_INVALID_PARAMS", "Unknown tool 'x'");
  });
});

describe("demo tenant", () => {
  const demo = demoTenant();

  it("is a valid open tenant", () => {
    assert.deepEqual(validateTenant(demo), demo);
    assert.equal(demo.auth, "none");
  });

  it("serves the code-review prompt, the quote resource and language completion", async () => {
    const demoProvider = new StaticProvider(demo.providers[0] as StaticProviderConfig);
    const prompt = await demoProvider.getPrompt("code-review", { language: "go" }, ctx);
    assert.match(
      (prompt.messages[0]?.content as { text: string }).text,
      /^Please review the following go code\./,
    );
    const quote = await demoProvider.readResource("bacio:///quote", ctx);
    assert.match((quote.contents[0] as { text: string }).text, /Chi va piano va sano e va lontano/);
    const done = await demoProvider.complete(
      { type: "ref/prompt", name: "code-review" },
      { name: "language", value: "J" },
      undefined,
      ctx,
    );
    assert.deepEqual(done.completion.values, ["javascript", "java"]);
    const greeting = await demoProvider.readResource("bacio:///greeting/Ada", ctx);
    assert.equal((greeting.contents[0] as { text: string }).text, "Ciao, Ada! Benvenuto — welcome.\n");
  });
});
