// `portico connect` and local clients older than the server (docs/connect.md, docs/protocol-eras.md
// "Older revisions"): the official SDK 1.10.2 stdio client, which asks for 2024-11-05 and accepts
// nothing newer, through the bridge in both HTTP eras to an upstream whose answers carry audio and
// resource links (test/fixtures/media-server.ts). It is offered no capability 2024-11-05 lacks and
// gets those blocks as text saying what was left out. Beside it, clients of newer revisions get
// what theirs define, and client capabilities a revision lacks are not passed on (server-everything
// lists trigger-elicitation-request only to clients that declared elicitation).
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { Client } from "sdk-1-10/client/index.js";
import { StdioClientTransport } from "sdk-1-10/client/stdio.js";
import type { CallToolResult } from "sdk-1-10/types.js";
import { LINK, MEDIA_BLOCKS, startMediaUpstream, type MediaUpstream } from "../fixtures/media-server.js";
import { BRIDGE_ARGS, bridgeEnv, newBridgeHome, ROOT, runRaw, stdoutMessages } from "../support/connect.js";
import { startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

const ERAS = ["2026-07-28", "session"] as const;
const omitted = (what: string, version: string) => `[${what} omitted: not supported by protocol ${version}]`;
const AUDIO = "audio content (audio/wav, 12 KB)";
const RESOURCE_LINK = `resource link "readme" (${LINK.uri}, ${LINK.mimeType})`;
const IMAGE = MEDIA_BLOCKS[3];

const initialize = (protocolVersion: string, capabilities: object = {}) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
});
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

let media: MediaUpstream;
let everything: EverythingServer;
let portico: RunningPortico;
const home = newBridgeHome();

before(async () => {
  media = await startMediaUpstream();
  everything = await startEverything();
  portico = await startPortico({
    tenants: [
      { id: "media", auth: "none", providers: [{ id: "media", kind: "mcp", url: media.url }] },
      { id: "acme", auth: "none", providers: [{ id: "everything", kind: "mcp", url: everything.url }] },
    ],
  });
});
after(async () => {
  await portico?.close();
  await everything?.stop();
  await media?.close();
  rmSync(home.configDir, { recursive: true, force: true });
});

/** SDK 1.10.2 on the bridge's stdio; it closes the connection unless answered in 2024-11-05. */
async function sdk110(era: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...BRIDGE_ARGS, "connect", portico.mcpUrl("media"), "--era", era],
    cwd: ROOT,
    env: bridgeEnv(home),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: "sdk-1-10", version: "1.10.2" });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`${String(err)}\nbridge stderr:\n${stderr}`, { cause: err });
  }
  return client;
}

describe("portico connect: an SDK 1.10.2 stdio client (2024-11-05)", () => {
  for (const era of ERAS)
    it(`${era} over HTTP: offered no completions; audio and resource links come as text saying what was left out`, async (t) => {
      const client = await sdk110(era);
      t.after(() => client.close()); // also when an assertion fails: the bridge would outlive the test
      const caps = client.getServerCapabilities()!;
      assert.equal(caps.completions, undefined, "completions is a 2025-03-26 capability");
      assert.ok(caps.tools && caps.prompts && caps.logging, JSON.stringify(caps));

      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ["media", "sum"]);
      const result = (await client.callTool({ name: "media", arguments: {} }, undefined, {
        timeout: 10_000,
      })) as CallToolResult;
      assert.deepEqual(result.content, [
        { type: "text", text: "here it is" },
        { type: "text", text: omitted(AUDIO, "2024-11-05") },
        { type: "text", text: omitted(RESOURCE_LINK, "2024-11-05") },
        IMAGE,
      ]);
      const prompt = await client.getPrompt({ name: "media" }, { timeout: 10_000 });
      assert.deepEqual(
        prompt.messages.map((m) => (m.content.type === "text" ? m.content.text : m.content.type)),
        ["here it is", omitted(AUDIO, "2024-11-05"), omitted(RESOURCE_LINK, "2024-11-05"), "image"],
      );
      const read = await client.readResource({ uri: LINK.uri });
      assert.deepEqual(read.contents, [{ uri: LINK.uri, mimeType: LINK.mimeType, text: "# Read me" }]);
    });
});

describe("portico connect: each local revision gets what it defines", () => {
  /** initialize and one tools/call of `media` through the bridge, raw: the two answers. */
  async function callMedia(era: string, protocolVersion: string) {
    const run = await runRaw(["connect", portico.mcpUrl("media"), "--era", era], bridgeEnv(home), [
      initialize(protocolVersion),
      INITIALIZED,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "media", arguments: {} } },
    ]);
    assert.equal(run.code, 0, run.stderr);
    const [init, call] = stdoutMessages(run);
    return { init: init!.result, content: call!.result.content as unknown[] };
  }

  for (const era of ERAS) {
    it(`${era} over HTTP: 2025-03-26 is offered completions and gets audio, a resource link as text`, async () => {
      const { init, content } = await callMedia(era, "2025-03-26");
      assert.equal(init.protocolVersion, "2025-03-26");
      assert.ok("completions" in init.capabilities);
      assert.deepEqual(content, [
        MEDIA_BLOCKS[0],
        MEDIA_BLOCKS[1],
        { type: "text", text: omitted(RESOURCE_LINK, "2025-03-26") },
        IMAGE,
      ]);
    });

    it(`${era} over HTTP: 2025-11-25 is offered everything and gets every block as it is`, async () => {
      const { init, content } = await callMedia(era, "2025-11-25");
      assert.equal(init.protocolVersion, "2025-11-25");
      assert.ok("completions" in init.capabilities);
      assert.deepEqual(content, MEDIA_BLOCKS);
    });

    it(`${era} over HTTP: elicitation declared by a 2024-11-05 client is not passed on; by a 2025-06-18 one it is`, async () => {
      const toolsOf = async (protocolVersion: string) => {
        const declared = { sampling: {}, elicitation: {}, tasks: { requests: {} } };
        const run = await runRaw(["connect", portico.mcpUrl("acme"), "--era", era], bridgeEnv(home), [
          initialize(protocolVersion, declared),
          INITIALIZED,
          { jsonrpc: "2.0", id: 2, method: "tools/list" },
        ]);
        assert.equal(run.code, 0, run.stderr);
        const [init, list] = stdoutMessages(run);
        assert.equal(init!.result.protocolVersion, protocolVersion);
        return (list!.result.tools as Array<{ name: string }>).map((t) => t.name);
      };
      const old = await toolsOf("2024-11-05");
      assert.ok(old.includes("trigger-sampling-request"), "sampling, which 2024-11-05 defines, is passed on");
      assert.ok(!old.includes("trigger-elicitation-request"), "elicitation came with 2025-06-18");
      assert.ok((await toolsOf("2025-06-18")).includes("trigger-elicitation-request"));
    });
  }
});
