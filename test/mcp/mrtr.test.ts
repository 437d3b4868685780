// The rounds of a 2026-07-28 call whose provider asks the client mid-call (basic/patterns/mrtr):
// a question stops the call and holds it; the retry's answers resume it; a client that goes away
// releases it at once instead of at the input timeout.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CallRun, RoundMeta } from "../../src/mcp/stateless/call-run.js";
import { Mrtr } from "../../src/mcp/stateless/mrtr.js";
import type { RoundCall } from "../../src/mcp/stateless/mrtr-types.js";
import { RequestStates } from "../../src/mcp/stateless/request-state.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

const META: RoundMeta = {
  progressToken: undefined,
  logLevel: undefined,
  clientCapabilities: { elicitation: {} },
};

function mrtr(maxHeldPerTenant?: number, store = new MemoryStore()) {
  const secrets = new Secrets("0123456789abcdef0123456789abcdef");
  return new Mrtr({
    states: new RequestStates(secrets, 60_000),
    store,
    keys: createKeys("t"),
    timeoutSeconds: 60,
    maxHeldPerTenant,
  });
}

/** A tools/call whose close listener the test fires, as a client leaving would. */
function roundCall(params: Record<string, unknown> = { name: "ask" }, tenant = "acme") {
  const closers: Array<() => void> = [];
  const call: RoundCall = {
    tenant,
    principal: "",
    request: { jsonrpc: "2.0", id: 1, method: "tools/call", params },
    meta: META,
    send: () => undefined,
    onClose: (listener) => void closers.push(listener),
  };
  return { call, close: () => closers.forEach((c) => c()) };
}

/** Work that asks one question and answers with what it was told; `ended` says how it ended. */
function askingWork() {
  const ended: string[] = [];
  const start = async (run: CallRun) => {
    try {
      const answer = await run.ask("elicitation/create", { message: "Name?" });
      ended.push("answered");
      return { content: [{ type: "text", text: JSON.stringify(answer) }] };
    } catch (err) {
      ended.push(`failed: ${(err as Error).message}`);
      throw err;
    }
  };
  return { start, ended };
}

describe("held calls", () => {
  it("are resumed by a retry that brings the answers", async () => {
    const m = mrtr();
    const work = askingWork();
    const first = await m.serve(roundCall().call, work.start);
    assert.equal(first.resultType, "input_required");
    assert.equal(m.holding, 1);
    const key = Object.keys(first.inputRequests as object)[0]!;
    const retry = roundCall({
      name: "ask",
      inputResponses: { [key]: { action: "accept", content: { name: "ada" } } },
      requestState: first.requestState,
    });
    const done = await m.serve(retry.call, work.start);
    assert.match(JSON.stringify(done.content), /ada/);
    assert.deepEqual(work.ended, ["answered"]);
    assert.equal(m.holding, 0);
  });

  it("ask again when an answer lacks the shape of its question's result", async () => {
    const m = mrtr();
    const work = askingWork();
    const first = await m.serve(roundCall().call, work.start);
    const key = Object.keys(first.inputRequests as object)[0]!;
    let state = first.requestState;
    for (const bad of [{ action: "bogus" }, { action: "accept", content: "ada" }, { model: "m" }]) {
      const again = await m.serve(
        roundCall({ name: "ask", inputResponses: { [key]: bad }, requestState: state }).call,
        work.start,
      );
      assert.equal(again.resultType, "input_required", JSON.stringify(bad));
      assert.deepEqual(Object.keys(again.inputRequests as object), [key]);
      state = again.requestState;
    }
    assert.deepEqual(work.ended, [], "the upstream never saw the malformed answers");
    const done = await m.serve(
      roundCall({ name: "ask", inputResponses: { [key]: { action: "decline" } }, requestState: state }).call,
      work.start,
    );
    assert.match(JSON.stringify(done.content), /decline/);
  });

  it("are held up to the tenant's limit; past it the call is cancelled and refused", async () => {
    const m = mrtr(2);
    const works = [askingWork(), askingWork(), askingWork()];
    const [first] = await Promise.all(works.slice(0, 2).map((w) => m.serve(roundCall().call, w.start)));
    assert.equal(m.holding, 2);
    const refused = await m.serve(roundCall().call, works[2]!.start).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.match(
      String((refused as Error).message),
      /Too Many Requests: 2 requests of this tenant already wait/,
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.match(works[2]!.ended[0] ?? "", /^failed: Too Many Requests/);
    // Another tenant is not affected; a finished call frees its place.
    const other = await m.serve(roundCall({ name: "ask" }, "globex").call, askingWork().start);
    assert.equal(other.resultType, "input_required");
    const key = Object.keys(first!.inputRequests as object)[0]!;
    const answer = { [key]: { action: "accept", content: {} } };
    await m.serve(
      roundCall({ name: "ask", inputResponses: answer, requestState: first!.requestState }).call,
      works[0]!.start,
    );
    const again = await m.serve(roundCall().call, askingWork().start);
    assert.equal(again.resultType, "input_required");
  });

  it("are not held when the store cannot make them reachable: the call ends, its place is free", async () => {
    const store = new MemoryStore();
    store.set = () => Promise.reject(new Error("store down"));
    const m = mrtr(1, store);
    const work = askingWork();
    const refused = await m.serve(roundCall().call, work.start).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.match(String(refused), /store down/);
    assert.equal(m.holding, 0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(work.ended, ["failed: store down"]);
  });

  it("are released and cancelled when the client leaves before getting the input_required answer", async () => {
    const m = mrtr();
    const work = askingWork();
    const { call, close } = roundCall();
    const first = await m.serve(call, work.start);
    assert.equal(first.resultType, "input_required");
    close(); // the stream closed before the answer (and its requestState) was written
    assert.equal(m.holding, 0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(work.ended, ["failed: the client closed the response stream"]);
  });

  it("are released when the client of a retry leaves before the next input_required answer", async () => {
    const m = mrtr();
    let asked = 0;
    const start = async (run: CallRun) => {
      for (;;) await run.ask("elicitation/create", { message: `again ${++asked}` });
    };
    const first = await m.serve(roundCall().call, start);
    const key = Object.keys(first.inputRequests as object)[0]!;
    const retry = roundCall({
      name: "ask",
      inputResponses: { [key]: { action: "accept", content: {} } },
      requestState: first.requestState,
    });
    const second = await m.serve(retry.call, start);
    assert.equal(second.resultType, "input_required");
    assert.equal(m.holding, 1);
    retry.close();
    assert.equal(m.holding, 0);
  });
});

/** The embedded store, losing what is published on retries' channels while `dropping`; reconnect() runs the resyncs. */
class LossyStore extends MemoryStore {
  dropping = false;
  readonly #resyncs: Array<() => void> = [];
  override subscribe(channel: string, listener: (message: string) => void, onResync?: () => void) {
    if (onResync) this.#resyncs.push(onResync);
    return super.subscribe(channel, listener);
  }
  override publish(channel: string, message: string): Promise<void> {
    if (this.dropping && /:held:[^:]+\.[^:]+:bus$/.test(channel)) return Promise.resolve();
    return super.publish(channel, message);
  }
  reconnect(): void {
    for (const resync of this.#resyncs) resync();
  }
}

describe("a retry on another replica than the one holding the call", () => {
  it("gets the call's result even when it went by while its subscription was down", async () => {
    const store = new LossyStore();
    const holder = mrtr(undefined, store);
    const elsewhere = mrtr(undefined, store);
    const work = askingWork();
    const first = await holder.serve(roundCall().call, work.start);
    const key = Object.keys(first.inputRequests as object)[0]!;
    const retry = roundCall({
      name: "ask",
      inputResponses: { [key]: { action: "accept", content: { name: "ada" } } },
      requestState: first.requestState,
    });
    store.dropping = true;
    const done = elsewhere.serve(retry.call, work.start);
    while (work.ended.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the result was published, and lost
    store.dropping = false;
    store.reconnect();
    assert.match(JSON.stringify((await done).content), /ada/);
  });
});
