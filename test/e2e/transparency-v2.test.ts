// Transparency across eras (issue 16): an SDK v2 client (@modelcontextprotocol/client) speaking
// 2026-07-28 through Portico to server-everything, which speaks only the session era, so Portico
// bridges. Compared at the SDK API level with an SDK v1 client connected directly and declaring the
// same capabilities, for all 8 combinations of sampling / elicitation / roots (2026-07-28 keeps all
// three client capabilities): the lists' items, call results (content, structuredContent, isError),
// the sampling / elicitation / roots requests the client's handlers receive, progress, reads, prompts.
//
// Not compared, by design of the eras: result-level `_meta` (2026-07-28 results name their server;
// Portico is that server), JSON-RPC error messages (the SDKs word them differently; code and data are
// compared), and each tool's `execution` (task support: 2026-07-28's Tool has no such field, and
// task-augmented calls are later work; the task tools are not called). Nondeterminism and the other
// rules: test/e2e/transparency.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import {
  byName,
  capabilitiesOf,
  COMBOS,
  connectPeer,
  failureCode,
  FORM_ANSWER,
  listAll,
  lists,
  normalise,
  offered,
  ROOTS,
  type Asked,
  type Combo,
  type Peer,
} from "../support/everything-peers.js";
import {
  startEverythingBehindPortico,
  type EverythingBehindPortico,
  type EverythingServer,
} from "../support/everything.js";
import type { RunningPortico } from "../support/portico.js";
import { CALLS } from "../support/transparency.js";

let everything: EverythingServer;
let portico: RunningPortico;

let setup: EverythingBehindPortico | undefined;

before(async () => {
  setup = await startEverythingBehindPortico();
  ({ everything, portico } = setup);
});
after(() => setup?.close());

interface V2Peer {
  readonly client: V2Client;
  readonly asked: Asked[];
}

/** An SDK v2 client on 2026-07-28 declaring `combo`, its handlers answering as connectPeer's do. */
async function connectV2(url: string, combo: Combo, era: "modern" | "legacy" = "modern"): Promise<V2Peer> {
  const client = new V2Client(
    { name: "transparency-v2", version: "1.0.0" },
    {
      capabilities: capabilitiesOf(combo) as never,
      ...(era === "modern" && { versionNegotiation: { mode: { pin: "2026-07-28" } } }),
    },
  );
  const asked: Asked[] = [];
  if (combo.sampling)
    client.setRequestHandler("sampling/createMessage", async (req) => {
      asked.push({ method: req.method, params: req.params });
      const first = req.params.messages[0]?.content;
      const text = first && "text" in first ? String(first.text) : "";
      return {
        role: "assistant",
        model: "transparency-model",
        content: { type: "text", text: `sampled: ${text}` },
      };
    });
  if (combo.elicitation)
    client.setRequestHandler("elicitation/create", async (req) => {
      asked.push({ method: req.method, params: req.params });
      return req.params.mode === "url" ? { action: "accept" } : { action: "accept", content: FORM_ANSWER };
    });
  if (combo.roots)
    client.setRequestHandler("roots/list", async (req) => {
      asked.push({ method: req.method, params: req.params });
      return { roots: ROOTS };
    });
  await client.connect(new V2Transport(new URL(url)));
  assert.equal(client.getProtocolEra(), era);
  return { client, asked };
}

/** A call's outcome as the SDK API shows it, in either SDK: the result's fields, or the error's code and data. */
async function apiOutcome(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    const { content, structuredContent, isError } = (await fn()) as Record<string, unknown>;
    return normalise({ content, structuredContent, isError: isError ?? false });
  } catch (err) {
    const { code, data } = err as { code?: unknown; data?: unknown };
    if (typeof code !== "number") throw err;
    return normalise({ code, data });
  }
}

/** The fields of a list item the SDK API exposes, but not `execution` (see the header). */
function item(entry: Record<string, unknown>): Record<string, unknown> {
  const { execution: _execution, ...rest } = entry;
  return normalise(rest) as Record<string, unknown>;
}

const v2lists = {
  tools: (c: V2Client) =>
    listAll<{ name: string }>((cursor) => c.listTools(cursor ? { cursor } : undefined), "tools", byName),
  prompts: (c: V2Client) =>
    listAll<{ name: string }>((cursor) => c.listPrompts(cursor ? { cursor } : undefined), "prompts", byName),
  resources: (c: V2Client) =>
    listAll<{ uri: string }>(
      (cursor) => c.listResources(cursor ? { cursor } : undefined),
      "resources",
      (r) => r.uri,
    ),
  resourceTemplates: (c: V2Client) =>
    listAll<{ uriTemplate: string }>(
      (cursor) => c.listResourceTemplates(cursor ? { cursor } : undefined),
      "resourceTemplates",
      (t) => t.uriTemplate,
    ),
};

// The harness first: the same comparison passes between the v1 client and a v2 client both direct
// (the v2 one on the session era, the only one server-everything speaks).
describeV2("harness: v1 direct vs v2 direct on the session era", (combo) =>
  connectV2(everything.url, combo, "legacy"),
);
describeV2(
  "v1 direct vs v2 on 2026-07-28 through Portico",
  (combo) => connectV2(portico.mcpUrl("acme"), combo),
  true,
);

/** `bridged`: the subject speaks 2026-07-28 to a session-era upstream through Portico's bridge. */
function describeV2(title: string, subject: (combo: Combo) => Promise<V2Peer>, bridged = false): void {
  for (const combo of COMBOS) describeCombo(`${title}, declaring ${combo.label}`, combo, subject, bridged);
}

function describeCombo(
  title: string,
  combo: Combo,
  subject: (combo: Combo) => Promise<V2Peer>,
  bridged: boolean,
): void {
  describe(title, () => {
    let ref: Peer;
    let sub: V2Peer;
    before(async () => {
      [ref, sub] = await Promise.all([connectPeer(everything.url, combo), subject(combo)]);
    });
    after(async () => {
      await Promise.allSettled([ref?.close(), sub?.client.close()]);
    });

    for (const list of ["tools", "prompts", "resources", "resourceTemplates"] as const) {
      it(`${list}: same items`, async () => {
        const [expected, actual] = (
          await Promise.all([lists[list](ref.client), v2lists[list](sub.client)])
        ).map((entries) => entries.map((e) => item(e as never))) as [
          Record<string, unknown>[],
          Record<string, unknown>[],
        ];
        if (list === "tools")
          assert.deepEqual(
            actual.map((t) => t.name),
            expected.map((t) => t.name),
            "tool names",
          );
        assert.deepEqual(actual, expected);
      });
    }

    for (const call of CALLS) {
      const declared = offered(combo, call.gate);
      const args = call.arguments ? ` ${JSON.stringify(call.arguments)}` : "";
      it(`tools/call ${call.name}${args}${declared ? "" : ` (${call.gate} not declared)`}`, async () => {
        const params = { name: call.name, arguments: call.arguments };
        const [refStart, subStart] = [ref.asked.length, sub.asked.length];
        const [expected, actual] = await Promise.all([
          apiOutcome(() => ref.client.callTool(params)),
          apiOutcome(() => sub.client.callTool(params)),
        ]);
        if (!declared) {
          // Not offered: a failure with the same code, in either form (see failureCode).
          assert.notEqual(failureCode(expected), undefined, "the reference call fails");
          assert.equal(failureCode(actual), failureCode(expected));
          return;
        }
        if (bridged && call.name === "get-roots-list")
          // By design (docs/protocol-eras.md, bridging): server-everything asks for roots outside
          // any call, right after initialize, and answers get-roots-list from what it got; a
          // 2026-07-28 client has no session to be asked on, so it is never asked outside a call.
          return;
        const refAsked = ref.asked.slice(refStart).map((a) => (bridged ? without2025Fields(a) : a));
        if (bridged && (expected as { code?: unknown }).code === URL_ELICITATION_REQUIRED) {
          // By design: -32042 does not exist in 2026-07-28; the bridge makes it a URL-mode input
          // request, which this client accepts, and its retry runs the tool again.
          const urls = (asked: Asked[]) =>
            asked
              .filter((a) => a.method === "elicitation/create")
              .map((a) => (a.params as { url?: unknown } | undefined)?.url);
          const wanted = (
            (expected as { data: { elicitations: Array<{ url: string }> } }).data.elicitations ?? []
          ).map((e) => e.url);
          // The retry runs the tool again, which may ask more (server-everything asks its own URL).
          const asked = urls(sub.asked.slice(subStart));
          assert.deepEqual(asked.slice(0, wanted.length), wanted, "the URLs to open, as input requests");
          assert.equal((actual as { isError?: unknown }).isError, false, JSON.stringify(actual));
          return;
        }
        assert.deepEqual(actual, expected);
        // A roots/list server-everything sends on its own after initialize is timing (see
        // test/support/transparency.ts), not part of the call.
        const timed = (asked: Asked[]) => asked.filter((a) => a.method !== "roots/list");
        if (call.asks) assert.deepEqual(timed(sub.asked.slice(subStart)), timed(refAsked), "input requests");
      });
    }

    it("tools/call with progress", async () => {
      const run = async (call: (onprogress: (p: unknown) => void) => Promise<unknown>) => {
        const progress: unknown[] = [];
        return { outcome: await apiOutcome(() => call((p) => progress.push(p))), progress };
      };
      const params = { name: "trigger-long-running-operation", arguments: { duration: 0.15, steps: 3 } };
      const [expected, actual] = await Promise.all([
        run((onprogress) => ref.client.callTool(params, undefined, { onprogress })),
        run((onprogress) => sub.client.callTool(params, { onprogress })),
      ]);
      assert.deepEqual(actual, expected);
    });

    it("resources/read and prompts/get", async () => {
      const pick = (r: unknown) => {
        const { contents, messages, description } = r as Record<string, unknown>;
        return normalise({ contents, messages, description });
      };
      const outcome = async (fn: () => Promise<unknown>) =>
        apiOutcome(async () => ({ content: pick(await fn()) }));
      const reads = (c: Pick<V2Client, "readResource" | "getPrompt">) =>
        Promise.all([
          outcome(() => c.readResource({ uri: "demo://resource/static/document/instructions.md" })),
          outcome(() => c.readResource({ uri: "demo://resource/dynamic/text/5" })),
          outcome(() => c.readResource({ uri: "demo://resource/dynamic/blob/6" })),
          outcome(() => c.readResource({ uri: "demo://resource/dynamic/text/not-a-number" })),
          outcome(() => c.getPrompt({ name: "simple-prompt" })),
          outcome(() => c.getPrompt({ name: "args-prompt", arguments: { city: "Paris", state: "TX" } })),
          outcome(() =>
            c.getPrompt({ name: "resource-prompt", arguments: { resourceType: "Text", resourceId: "4" } }),
          ),
        ]);
      const [expected, actual] = await Promise.all([reads(ref.client as never), reads(sub.client)]);
      assert.deepEqual(actual, expected);
    });

    it("completion/complete on a prompt and a resource template", async () => {
      const prompt = { type: "ref/prompt" as const, name: "completable-prompt" };
      const template = { type: "ref/resource" as const, uri: "demo://resource/dynamic/text/{resourceId}" };
      const outcome = async (fn: () => Promise<{ completion: unknown }>) =>
        apiOutcome(async () => ({ content: (await fn()).completion }));
      const completions = (c: Pick<V2Client, "complete">) =>
        Promise.all([
          outcome(() => c.complete({ ref: prompt, argument: { name: "department", value: "S" } })),
          outcome(() =>
            c.complete({
              ref: prompt,
              argument: { name: "name", value: "" },
              context: { arguments: { department: "Engineering" } },
            }),
          ),
          outcome(() => c.complete({ ref: template, argument: { name: "resourceId", value: "7" } })),
        ]);
      const [expected, actual] = await Promise.all([
        completions(ref.client as never),
        completions(sub.client),
      ]);
      assert.deepEqual(actual, expected);
    });

    // roots/list is not compared: server-everything asks for roots only outside a call, which
    // cannot reach a 2026-07-28 client (see get-roots-list above).
  });
}

/** -32042, URL elicitation required: 2025-11-25 only. */
const URL_ELICITATION_REQUIRED = -32042;

/**
 * An input request as a 2026-07-28 client gets it: URL-mode elicitation has no `elicitationId`
 * in that revision (2026-07-28 changelog, item 11).
 */
function without2025Fields(asked: Asked): Asked {
  const params = asked.params as Record<string, unknown> | undefined;
  if (asked.method !== "elicitation/create" || !params || !("elicitationId" in params)) return asked;
  const { elicitationId: _id, ...rest } = params;
  return { ...asked, params: rest };
}
