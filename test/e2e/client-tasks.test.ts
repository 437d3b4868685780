// A client's own tasks through Portico (2025-11-25 basic/utilities/tasks "Task-Augmented Sampling
// Request"; docs/upstream-mcp.md "Tasks passed through"): server-everything's
// trigger-sampling-request-async and trigger-elicitation-request-async ask the client to run the
// request as a task, then poll it with tasks/get and fetch it with tasks/result. An SDK v1 client
// with a task store, through two Portico replicas its requests alternate between, sees what it sees
// directly, but for the task id the upstream was given (Portico's, not the client's).
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { everythingTenant, startEverything, type EverythingServer } from "../support/everything.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

const CAPS: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {} },
  tasks: { cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
};
const SAMPLED = { role: "assistant", content: { type: "text", text: "sampled later" }, model: "m-1" };
const FORM = { action: "accept", content: { name: "Ada", favoriteColor: "Blue", agreeToTerms: true } };

let everything: EverythingServer;
let a: RunningPortico;
let b: RunningPortico;

before(async () => {
  everything = await startEverything();
  const prefix = uniquePrefix();
  const tenants = [everythingTenant(everything.url)];
  a = await startPortico({ redisPrefix: prefix, tenants });
  b = await startPortico({ redisPrefix: prefix, tenants });
});
after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await everything?.stop();
});

/** Every HTTP request of one client goes to the replica after the one before. */
function alternate(): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  let next = 0;
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    url.port = new URL([a.url, b.url][next++ % 2]!).port;
    return fetch(url, init);
  };
}

/**
 * An SDK v1 client that runs sampling and elicitation as tasks when asked (its task store answers
 * the upstream's tasks/get and tasks/result), each finishing 300 ms after it was made.
 */
async function taskRunningClient(url: string, viaReplicas: boolean) {
  const taskStore = new InMemoryTaskStore();
  const client = new Client({ name: "tasks", version: "1.0.0" }, { capabilities: CAPS, taskStore });
  const made: string[] = [];
  const later =
    (result: Record<string, unknown>) =>
    async (
      _request: unknown,
      extra: {
        taskStore?: {
          createTask(p: object): Promise<{ taskId: string }>;
          storeTaskResult(id: string, s: "completed", r: object): Promise<void>;
        };
      },
    ) => {
      const task = await extra.taskStore!.createTask({ ttl: 60_000, pollInterval: 100 });
      made.push(task.taskId);
      setTimeout(() => void extra.taskStore!.storeTaskResult(task.taskId, "completed", result), 300);
      return { task } as never;
    };
  client.setRequestHandler(CreateMessageRequestSchema, later(SAMPLED));
  client.setRequestHandler(ElicitRequestSchema, later(FORM));
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    viaReplicas ? { fetch: alternate() } : {},
  );
  await client.connect(transport);
  // The task store's expiry timers would hold the process open for a minute after the tests.
  const close = () => client.close().finally(() => taskStore.cleanup());
  return { client, made, close };
}

/** The tool's text with the task id the upstream was given replaced (it differs by path). */
function shown(result: unknown): { text: string; upstreamId: string } {
  const text = (result as { content: Array<{ text: string }> }).content.map((c) => c.text).join("\n");
  const upstreamId = /Task created: (\S+)/.exec(text)?.[1] ?? "";
  return { text: text.replaceAll(upstreamId, "<task>"), upstreamId };
}

for (const [tool, args] of [
  ["trigger-sampling-request-async", { prompt: "hi", maxTokens: 10 }],
  ["trigger-elicitation-request-async", {}],
] as const)
  it(`${tool}: the same report as directly; the upstream polls Portico's id, the client its own`, async () => {
    const direct = await taskRunningClient(everything.url, false);
    const through = await taskRunningClient(a.mcpUrl("acme"), true);
    try {
      const want = shown(await direct.client.callTool({ name: tool, arguments: args }));
      const got = shown(await through.client.callTool({ name: tool, arguments: args }));
      assert.match(got.text, /\[COMPLETED\]/);
      assert.equal(got.text, want.text);
      assert.equal(want.upstreamId, direct.made[0], "directly, the upstream polls the client's own id");
      assert.equal(through.made.length, 1);
      assert.notEqual(got.upstreamId, through.made[0], "through Portico, an id of Portico's");
      assert.ok(!got.text.includes(through.made[0]!), "the client's id never reaches the upstream");
    } finally {
      await direct.close();
      await through.close();
    }
  });
