// A tenant's `instructions` (src/mcp/instructions.ts), as the official SDK clients of both eras
// read them: the admin's text, then each upstream MCP server's own guidance (from its initialize or
// its server/discover) under the names its tools have here, then in search mode how to find
// tools; a virtual server's own text; an upstream pinned with `block` gives the text approved when
// its provider was saved (test/security/pinning.test.ts holds a changed text back).
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { startMinimalUpstream, type MinimalUpstream } from "../fixtures/minimal-server.js";
import { startStatelessUpstream, type StatelessUpstream } from "../fixtures/stateless-server.js";
import { connectClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";

let old: MinimalUpstream;
let modern: StatelessUpstream;
let pinned: MinimalUpstream;
let portico: RunningPortico;

before(async () => {
  old = await startMinimalUpstream({ instructions: "Add numbers with add." });
  modern = await startStatelessUpstream({ instructions: "Subscribe before you read the watched resource." });
  pinned = await startMinimalUpstream({ instructions: "Held tools: approved when saved." });
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "none",
        instructions: "Acme's tools. Ask before deleting anything.",
        toolDiscovery: "search",
        providers: [
          { id: "calc", kind: "mcp", url: old.url, prefix: "calc" },
          { id: "modern", kind: "mcp", url: modern.url },
          { id: "held", kind: "mcp", url: pinned.url, prefix: "held", pinning: "block" },
        ],
        servers: [
          {
            id: "math",
            instructions: "Only arithmetic here.",
            toolDiscovery: "list",
            providers: [{ provider: "calc" }],
          },
        ],
      },
    ],
  });
});
after(async () => {
  await portico?.close();
  await Promise.all([old?.close(), modern?.close(), pinned?.close()]);
});

const EXPECTED = [
  "Acme's tools. Ask before deleting anything.",
  "From the MCP server behind the tools named calc__…:\nAdd numbers with add.",
  "From the MCP server behind provider modern:\nSubscribe before you read the watched resource.",
  "From the MCP server behind the tools named held__…:\nHeld tools: approved when saved.",
  "Only a few tools are listed here. Find the others with search_tools (describe the task in words), read one's arguments with describe_tool, then run it with call_tool or by its name.",
].join("\n\n");

it("a session-era client gets them from initialize", async () => {
  const rc = await connectClient(portico.mcpUrl("acme"));
  try {
    assert.equal(rc.client.getInstructions(), EXPECTED);
  } finally {
    await rc.client.close();
  }
});

it("a 2026-07-28 client gets the same from server/discover", async () => {
  const client = new V2Client({ name: "v2", version: "1" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new V2Transport(new URL(portico.mcpUrl("acme"))));
  try {
    assert.equal(client.getProtocolEra(), "modern");
    assert.equal(client.getInstructions(), EXPECTED);
  } finally {
    await client.close();
  }
});

it("a virtual server gives its own text and its providers' guidance only", async () => {
  const rc = await connectClient(portico.mcpUrl("acme/math"));
  try {
    assert.equal(
      rc.client.getInstructions(),
      // A virtual server lists each tool by its own name: the provider is named instead.
      "Only arithmetic here.\n\nFrom the MCP server behind provider calc:\nAdd numbers with add.",
    );
  } finally {
    await rc.client.close();
  }
});
