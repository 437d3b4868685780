// A client's own tasks as session-era upstreams see them (src/providers/mcp/session/client-tasks.ts):
// the upstream gets ids Portico makes and polls only tasks it was given, each reaching the client
// session that runs it, whichever replica the poll arrives at (the ids are in the store); bounded in
// number and in time. Against real upstreams: test/providers/mcp-tasks.test.ts.
import assert from "node:assert/strict";
import { it } from "node:test";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  CLIENT_TASK_MAX_MS,
  ClientTasks,
  MAX_CLIENT_TASKS,
  type ClientRoute,
} from "../../src/providers/mcp/session/client-tasks.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

/** A ClientTasks over a store of its own, or the given one (another replica of the same deployment). */
function clientTasks(now: () => number = Date.now, store = new MemoryStore({ now })): ClientTasks {
  return new ClientTasks({ store, keys: createKeys(), tenantId: "t", providerId: "p" }, now);
}

const TASK = { taskId: "c-1", status: "working", createdAt: "2026-01-01T00:00:00Z", ttl: 60_000 };

/** A route whose client (session `sid`) makes task c-1 and answers polls about it; records what it was asked. */
function route(sid: string | undefined, asked: Array<[string, string, unknown]> = []): ClientRoute {
  return {
    sessionId: sid,
    ask: async (method, params) => {
      asked.push([sid ?? "-", method, params?.taskId]);
      if (method === "sampling/createMessage" || method === "elicitation/create")
        return { task: { ...TASK } };
      if (method === "tasks/result")
        return { model: "m", _meta: { "io.modelcontextprotocol/related-task": { taskId: params?.taskId } } };
      return { ...TASK, taskId: params?.taskId };
    },
    askSession: async (s, method, params) => {
      asked.push([`outlet:${s}`, method, params?.taskId]);
      return { ...TASK, taskId: params?.taskId };
    },
  };
}

const sample = { messages: [], maxTokens: 1, task: { ttl: 60_000 } };

async function rejectsWith(work: Promise<unknown>, code: number, message: RegExp) {
  await assert.rejects(work, (err: unknown) => {
    assert.equal((err as McpError).code, code);
    assert.match((err as Error).message, message);
    return true;
  });
}

it("the upstream gets an unguessable id of Portico's; its polls reach the client under the client's id", async () => {
  const tasks = clientTasks();
  const asked: Array<[string, string, unknown]> = [];
  const made = await tasks.relay("sampling/createMessage", sample, route("s1", asked));
  const id = (made.task as { taskId: string }).taskId;
  assert.notEqual(id, "c-1");
  assert.ok(id.length >= 22);
  assert.equal(
    (made.task as { status: string }).status,
    "working",
    "the rest of the task as the client gave it",
  );

  const got = await tasks.relay("tasks/get", { taskId: id }, route("s1", asked));
  assert.equal(got.taskId, id);
  const result = await tasks.relay("tasks/result", { taskId: id }, route("s1", asked));
  assert.deepEqual(result._meta, { "io.modelcontextprotocol/related-task": { taskId: id } });
  assert.deepEqual(asked.slice(1), [
    ["s1", "tasks/get", "c-1"],
    ["s1", "tasks/result", "c-1"],
  ]);
});

it("a poll from another client's call, or from no call, goes to the client that runs the task", async () => {
  const tasks = clientTasks();
  const asked: Array<[string, string, unknown]> = [];
  const made = await tasks.relay("elicitation/create", { message: "?", task: {} }, route("s1", asked));
  const id = (made.task as { taskId: string }).taskId;
  await tasks.relay("tasks/get", { taskId: id }, route("s2", asked));
  await tasks.relay(
    "tasks/cancel",
    { taskId: id },
    { sessionId: undefined, askSession: route("x", asked).askSession },
  );
  assert.deepEqual(asked.slice(1), [
    ["outlet:s1", "tasks/get", "c-1"],
    ["outlet:s1", "tasks/cancel", "c-1"],
  ]);
});

it("hostile polls: an id never given, the client's own id, tasks/list and a request without a task", async () => {
  const tasks = clientTasks();
  const asked: Array<[string, string, unknown]> = [];
  await tasks.relay("sampling/createMessage", sample, route("s1", asked));
  await rejectsWith(
    tasks.relay("tasks/get", { taskId: "c-1" }, route("s1", asked)),
    -32602,
    /Task not found/,
  );
  await rejectsWith(
    tasks.relay("tasks/result", { taskId: "guess" }, route("s1", asked)),
    -32602,
    /Task not found/,
  );
  await rejectsWith(tasks.relay("tasks/get", {}, route("s1", asked)), -32602, /Task not found/);
  // A listing would mix every client of the shared upstream session.
  await rejectsWith(tasks.relay("tasks/list", {}, route("s1", asked)), -32601, /Method not found/);
  assert.equal(asked.length, 1, "none of them reached a client");
  // A request that asked for no task keeps the client's answer as it is.
  const plain = await tasks.relay("sampling/createMessage", { messages: [], maxTokens: 1 }, route("s1"));
  assert.equal((plain.task as { taskId: string }).taskId, "c-1");
  // Nor does a client without a session (it cannot be polled again).
  const stateless = await tasks.relay("sampling/createMessage", sample, route(undefined));
  assert.equal((stateless.task as { taskId: string }).taskId, "c-1");
});

it("a poll arriving at another replica reaches the client all the same", async () => {
  const store = new MemoryStore();
  const [one, two] = [clientTasks(Date.now, store), clientTasks(Date.now, store)];
  const asked: Array<[string, string, unknown]> = [];
  const made = await one.relay("sampling/createMessage", sample, route("s1", asked));
  const id = (made.task as { taskId: string }).taskId;
  const got = await two.relay(
    "tasks/get",
    { taskId: id },
    { sessionId: undefined, askSession: route("x", asked).askSession },
  );
  assert.equal(got.taskId, id);
  assert.deepEqual(asked.slice(1), [["outlet:s1", "tasks/get", "c-1"]]);
  // Another provider's upstream cannot poll it.
  const other = new ClientTasks({ store, keys: createKeys(), tenantId: "t", providerId: "q" });
  await rejectsWith(other.relay("tasks/get", { taskId: id }, route("s1")), -32602, /Task not found/);
});

it("bounded in time (the task's ttl, at most an hour) and in number (per client session and hour)", async () => {
  let now = 0;
  const tasks = clientTasks(() => now);
  const short = await tasks.relay("sampling/createMessage", sample, route("s1"));
  const shortId = (short.task as { taskId: string }).taskId;
  const longRoute: ClientRoute = {
    ...route("s1"),
    ask: async () => ({ task: { ...TASK, ttl: null } }),
  };
  const long = await tasks.relay("sampling/createMessage", sample, longRoute);
  const longId = (long.task as { taskId: string }).taskId;
  now = 60_000;
  await rejectsWith(tasks.relay("tasks/get", { taskId: shortId }, route("s1")), -32602, /Task not found/);
  await tasks.relay("tasks/get", { taskId: longId }, route("s1"));
  now = CLIENT_TASK_MAX_MS;
  await rejectsWith(tasks.relay("tasks/get", { taskId: longId }, route("s1")), -32602, /Task not found/);

  now = 0;
  const many = clientTasks(() => now);
  for (let i = 0; i < MAX_CLIENT_TASKS; i++) await many.relay("sampling/createMessage", sample, route("s1"));
  await rejectsWith(
    many.relay("sampling/createMessage", sample, route("s1")),
    -32603,
    /more than 1000 tasks for this server in the last hour/,
  );
  // Another client session has its own count; the first's is whole again an hour later.
  await many.relay("sampling/createMessage", sample, route("s2"));
  now = 3_600_001;
  await many.relay("sampling/createMessage", sample, route("s1"));
});
