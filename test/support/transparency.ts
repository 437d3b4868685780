// The transparency suite (test/e2e/transparency*.test.ts): for each capability profile (by default the
// 8 combinations of declared sampling / elicitation / roots), a reference client and a client under
// test (both SDK v1) see the same lists, call results, server-to-client requests, notifications,
// progress, reads, prompts and completions from server-everything.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  byName,
  COMBOS,
  failureCode,
  lists,
  offered,
  outcomeOf,
  type Asked,
  type Combo,
  type Gate,
  type Outcome,
  type Peer,
} from "./everything-peers.js";

export interface ToolCall {
  readonly name: string;
  readonly arguments?: Record<string, unknown>;
  readonly gate?: Gate;
  /** Compare the server-to-client requests made during the call (sampling, elicitation). */
  readonly asks?: boolean;
}

/**
 * Deterministic calls of server-everything's tools. Left out: get-env (prints the server's
 * environment), gzip-file-as-resource (fetches a URL), the toggle-* tools (start timers on the
 * session), and the task tools (simulate-research-query, trigger-*-async): task-augmented calls
 * are later work.
 */
export const CALLS: readonly ToolCall[] = [
  { name: "echo", arguments: { message: "hello through the gateway" } },
  { name: "get-sum", arguments: { a: 2, b: 40 } },
  { name: "get-structured-content", arguments: { location: "Chicago" } },
  { name: "get-resource-links", arguments: { count: 4 } },
  { name: "get-resource-reference", arguments: { resourceType: "Text", resourceId: 2 } },
  { name: "get-resource-reference", arguments: { resourceType: "Blob", resourceId: 3 } },
  { name: "get-annotated-message", arguments: { messageType: "error", includeImage: true } },
  { name: "get-tiny-image" },
  { name: "echo", arguments: { message: 42 } }, // invalid arguments: the SDK server's error result
  {
    name: "trigger-sampling-request",
    arguments: { prompt: "capital of France?", maxTokens: 20 },
    gate: "sampling",
    asks: true,
  },
  { name: "trigger-elicitation-request", gate: "elicitation", asks: true },
  {
    name: "trigger-url-elicitation",
    arguments: { url: "https://example.com/consent", elicitationId: "fixed-elicitation" },
    gate: "elicitation.url",
    asks: true,
  },
  // The error path: -32042 with the elicitation in the error's data.
  {
    name: "trigger-url-elicitation",
    arguments: { url: "https://example.com/consent", errorPath: true },
    gate: "elicitation.url",
  },
  { name: "get-roots-list", gate: "roots" },
];

/** A client declaring `combo`, connected to server-everything somehow (directly, through Portico…). */
export type Connect = (combo: Combo) => Promise<Peer>;

/** Registers, for each combo, one test per list, call and read comparing `reference` with `subject`. */
export function describeTransparency(
  title: string,
  reference: Connect,
  subject: Connect,
  combos: readonly Combo[] = COMBOS,
): void {
  describe(title, () => {
    for (const combo of combos) describeCombo(combo, reference, subject);
  });
}

function describeCombo(combo: Combo, reference: Connect, subject: Connect): void {
  describe(`declaring ${combo.label}`, () => {
    let ref: Peer;
    let sub: Peer;
    before(async () => {
      [ref, sub] = await Promise.all([reference(combo), subject(combo)]);
    });
    after(async () => {
      await Promise.allSettled([ref?.close(), sub?.close()]);
    });
    const both = <T>(fn: (peer: Peer) => Promise<T>) => Promise.all([fn(ref), fn(sub)]);

    it("every list result carries the same fields beside its items", async () => {
      const extras = (result: Record<string, unknown>, items: string) => {
        const { [items]: _items, nextCursor: _cursor, ...rest } = result;
        return rest;
      };
      const [expected, actual] = await both((p) =>
        Promise.all([
          p.client.listTools().then((r) => extras(r, "tools")),
          p.client.listPrompts().then((r) => extras(r, "prompts")),
          p.client.listResources().then((r) => extras(r, "resources")),
          p.client.listResourceTemplates().then((r) => extras(r, "resourceTemplates")),
        ]),
      );
      assert.deepEqual(actual, expected);
    });

    it("tools/list: same tools, every field", async () => {
      const [expected, actual] = await both((p) => lists.tools(p.client));
      // Names first, for a readable failure; then every field of every tool.
      assert.deepEqual(actual.map(byName), expected.map(byName), "tool names");
      assert.deepEqual(withoutGatewayTasks(actual, expected), expected);
    });
    it("prompts/list", async () => {
      const [expected, actual] = await both((p) => lists.prompts(p.client));
      assert.deepEqual(actual, expected);
    });
    it("resources/list", async () => {
      const [expected, actual] = await both((p) => lists.resources(p.client));
      assert.deepEqual(actual, expected);
    });
    it("resources/templates/list", async () => {
      const [expected, actual] = await both((p) => lists.resourceTemplates(p.client));
      assert.deepEqual(actual, expected);
    });

    for (const call of CALLS) {
      const declared = offered(combo, call.gate);
      const args = call.arguments ? ` ${JSON.stringify(call.arguments)}` : "";
      it(`tools/call ${call.name}${args}${declared ? "" : ` (${call.gate} not declared)`}`, async () => {
        const [expected, actual] = await both((p) => callRecording(p, call));
        if (!declared) {
          // A tool the client was not offered: a failure with the same code, in either form (see failureCode).
          assert.notEqual(failureCode(expected.outcome), undefined, "the reference call fails");
          assert.equal(failureCode(actual.outcome), failureCode(expected.outcome));
          return;
        }
        assert.deepEqual(actual.outcome, expected.outcome);
        // A roots/list the upstream sends on its own 350 ms after initialize may fall in any call's
        // window (timing): it is compared by the roots test below, not per call.
        const timed = (asked: Asked[]) =>
          call.name === "get-roots-list" ? asked : asked.filter((a) => a.method !== "roots/list");
        if (call.asks)
          assert.deepEqual(
            timed(actual.asked),
            timed(expected.asked),
            "server-to-client requests during the call",
          );
      });
    }

    it("tools/call with progress: the same notifications/progress", async () => {
      const [expected, actual] = await both(async (p) => {
        const progress: unknown[] = [];
        const outcome = await outcomeOf(() =>
          p.client.callTool(
            { name: "trigger-long-running-operation", arguments: { duration: 0.15, steps: 3 } },
            undefined,
            { onprogress: (n) => progress.push(n) },
          ),
        );
        return { outcome, progress };
      });
      assert.deepEqual(actual, expected);
    });

    it("resources/read and prompts/get", async () => {
      const reads = (p: Peer) =>
        Promise.all([
          outcomeOf(() => p.client.readResource({ uri: "demo://resource/static/document/instructions.md" })),
          outcomeOf(() => p.client.readResource({ uri: "demo://resource/dynamic/text/5" })),
          outcomeOf(() => p.client.readResource({ uri: "demo://resource/dynamic/blob/6" })),
          outcomeOf(() => p.client.readResource({ uri: "demo://resource/dynamic/text/not-a-number" })),
          outcomeOf(() => p.client.getPrompt({ name: "simple-prompt" })),
          outcomeOf(() =>
            p.client.getPrompt({ name: "args-prompt", arguments: { city: "Paris", state: "TX" } }),
          ),
          outcomeOf(() =>
            p.client.getPrompt({
              name: "resource-prompt",
              arguments: { resourceType: "Text", resourceId: "4" },
            }),
          ),
        ]);
      const [expected, actual] = await both(reads);
      assert.deepEqual(actual, expected);
    });

    it("completion/complete on a prompt and a resource template", async () => {
      const prompt = { type: "ref/prompt" as const, name: "completable-prompt" };
      const template = { type: "ref/resource" as const, uri: "demo://resource/dynamic/text/{resourceId}" };
      const completions = (p: Peer) =>
        Promise.all([
          outcomeOf(() => p.client.complete({ ref: prompt, argument: { name: "department", value: "S" } })),
          outcomeOf(() =>
            p.client.complete({
              ref: prompt,
              argument: { name: "name", value: "" },
              context: { arguments: { department: "Engineering" } },
            }),
          ),
          outcomeOf(() => p.client.complete({ ref: template, argument: { name: "resourceId", value: "7" } })),
        ]);
      const [expected, actual] = await both(completions);
      assert.deepEqual(actual, expected);
    });

    if (combo.roots)
      it("roots/list reaches the client with the same params", async () => {
        // server-everything asks for roots 350 ms after initialize and on get-roots-list; how often
        // is timing, what it asks is not.
        const [expected, actual] = await both(async (p) =>
          distinct(p.asked.filter((a) => a.method === "roots/list")),
        );
        assert.ok(expected.length > 0, "the reference was asked for its roots");
        assert.deepEqual(actual, expected);
      });

    if (combo.roots)
      it("the log message the upstream sends once it has the roots reaches the client", async () => {
        // server-everything logs "Roots updated: …" on the session after each roots/list answer.
        const logs = (p: Peer) =>
          distinct(
            p.notified.filter((n) => n.method === "notifications/message" && /Roots/.test(JSON.stringify(n))),
          );
        const expected = logs(ref);
        assert.ok(expected.length > 0, "the reference got the log message");
        for (let waited = 0; logs(sub).length < expected.length && waited < 2000; waited += 100)
          await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(logs(sub), expected);
      });
  });
}

/** Calls `call`, returning its outcome and the server-to-client requests received meanwhile. */
async function callRecording(peer: Peer, call: ToolCall): Promise<{ outcome: Outcome; asked: Asked[] }> {
  const start = peer.asked.length;
  const outcome = await outcomeOf(() => peer.client.callTool({ name: call.name, arguments: call.arguments }));
  return { outcome, asked: peer.asked.slice(start) };
}

function distinct(asked: Asked[]): Asked[] {
  return [...new Map(asked.map((a) => [JSON.stringify(a), a])).values()];
}

/**
 * The tools under test without the one difference Portico documents (docs/upstream-mcp.md#tasks): to
 * a client that declared tasks it lists a tool the upstream does not require as a task as
 * `execution.taskSupport: "optional"` (server-everything's SDK lists its other tools "forbidden"),
 * since it runs any call as a task itself.
 */
function withoutGatewayTasks<T extends { name: string; execution?: unknown }>(
  actual: readonly T[],
  expected: readonly T[],
): T[] {
  const upstream = new Map(expected.map((t) => [t.name, t]));
  return actual.map((tool) => {
    const own = upstream.get(tool.name);
    const support = (own?.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
    if (!own || (support !== undefined && support !== "forbidden")) return tool;
    if (JSON.stringify(tool.execution) !== '{"taskSupport":"optional"}') return tool;
    const { execution: _execution, ...rest } = tool;
    return (own.execution === undefined ? rest : { ...rest, execution: own.execution }) as T;
  });
}
