// StreamHub across a lost session channel (docs/storage.md "Channels"): events another replica
// published while this replica's subscription was down are taken from the event log once it is
// back, so a stream carried here misses nothing and repeats nothing; a client's answer to a
// server-to-client request is kept in the store before it is published, and read there.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClientAsks } from "../../src/mcp/session/client-asks.js";
import { StreamHub, type BusMessage, type SseSink } from "../../src/mcp/session/streams.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

/** The embedded store, with a hand on the "subscription is back" callbacks. */
class ReconnectingStore extends MemoryStore {
  readonly resyncs: Array<() => void> = [];
  override subscribe(channel: string, listener: (message: string) => void, onResync?: () => void) {
    if (onResync) this.resyncs.push(onResync);
    return super.subscribe(channel, listener);
  }
  reconnect(): void {
    for (const resync of this.resyncs) resync();
  }
}

function recordingSink() {
  const events: string[] = [];
  const closed: boolean[] = [];
  const sink: SseSink = {
    write: (eventId, data) => void events.push(`${eventId} ${data}`),
    backlog: 0,
    destroy: () => undefined,
    close: () => void closed.push(true),
  };
  return { sink, events, closed };
}

async function setUp() {
  const store = new ReconnectingStore();
  const keys = createKeys("t");
  const bus: BusMessage[] = [];
  const options = {
    store,
    keys,
    ttlSeconds: 60,
    maxEvents: 100,
    onBusMessage: (_t: string, _s: string, m: BusMessage) => void bus.push(m),
  };
  await store.set(keys.session("acme", "s1"), "{}");
  const here = new StreamHub(options);
  const position = await here.standalonePosition("acme", "s1");
  const recorded = recordingSink();
  await here.attach("acme", "s1", "g", recorded.sink, { afterEntryId: position.slice(2) });
  return { store, keys, bus, elsewhere: new StreamHub(options), ...recorded };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("StreamHub after a lost session channel", () => {
  it("delivers from the event log what was published while the channel was down, once", async () => {
    const { store, keys, elsewhere, events } = await setUp();

    const first = await elsewhere.emit("acme", "s1", "g", '{"method":"a"}');
    // Published while this replica's subscriber was away: in the log, never on the channel.
    const missed = await store.streamAppend(keys.eventLog("acme", "s1", "g"), '{"method":"b"}', {
      maxLen: 100,
    });
    assert.deepEqual(events, [`${first} {"method":"a"}`]);

    store.reconnect();
    await tick();
    const third = await elsewhere.emit("acme", "s1", "g", '{"method":"c"}');
    store.reconnect(); // nothing new in the log: nothing repeated
    await tick();
    assert.deepEqual(events, [
      `${first} {"method":"a"}`,
      `g.${missed} {"method":"b"}`,
      `${third} {"method":"c"}`,
    ]);
  });

  it("ends the streams of a session deleted while the channel was down", async () => {
    const { store, keys, bus, closed } = await setUp();
    await store.del(keys.session("acme", "s1")); // its "end" was published meanwhile
    store.reconnect();
    await tick();
    assert.deepEqual(closed, [true]);
    assert.deepEqual(bus, [{ k: "end" }]);
  });
});

describe("a client's answer published while the channel was down", () => {
  it("is read from the store once the subscription is back, and settles the request waiting here", async () => {
    const { store, keys } = await setUp();
    const hub = new StreamHub({ store, keys, ttlSeconds: 60, maxEvents: 100, onBusMessage: () => undefined });
    const asks = new ClientAsks(hub, 300);
    let asked: { id: string } | undefined;
    const answered = asks.request("acme", "s1", "sampling/createMessage", {}, undefined, async (json) => {
      asked = JSON.parse(json) as { id: string };
    });
    while (!asked) await tick();
    // Another replica kept the answer, then published it while this one's subscriber was away.
    await hub.keepAnswer(
      "acme",
      "s1",
      asked.id,
      JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { role: "assistant" } }),
      60,
    );
    store.reconnect();
    assert.deepEqual(await answered, { role: "assistant" });
  });

  it("without one kept, the request goes on waiting for the answer", async () => {
    const { store, keys } = await setUp();
    const hub = new StreamHub({ store, keys, ttlSeconds: 60, maxEvents: 100, onBusMessage: () => undefined });
    const asks = new ClientAsks(hub, 300);
    let asked: { id: string } | undefined;
    const answered = asks.request("acme", "s1", "roots/list", {}, undefined, async (json) => {
      asked = JSON.parse(json) as { id: string };
    });
    while (!asked) await tick();
    store.reconnect();
    await tick();
    assert.equal(asks.settle("acme", "s1", { jsonrpc: "2.0", id: asked.id, result: { roots: [] } }), true);
    assert.deepEqual(await answered, { roots: [] });
  });
});

describe("streams ended by a shutdown (closeAll)", () => {
  /** A sink that records its events and how it was closed. */
  function closingSink() {
    const events: string[] = [];
    const closes: Array<[retryMs: number | undefined, eventId: string | undefined]> = [];
    const sink: SseSink = {
      write: (eventId) => void events.push(eventId),
      backlog: 0,
      destroy: () => undefined,
      close: (retryMs, eventId) => void closes.push([retryMs, eventId]),
    };
    return { sink, events, closes };
  }

  it("a resumed stream that got no event repeats, with the hint, the id it resumed from", async () => {
    const { elsewhere: hub } = await setUp();
    const position = await hub.standalonePosition("acme", "s1");
    const resumed = closingSink();
    await hub.attach("acme", "s1", "g", resumed.sink, { afterEntryId: position.slice(2), resumed: true });
    hub.closeAll(750);
    assert.deepEqual(resumed.events, []);
    assert.deepEqual(resumed.closes, [[750, position]]);
  });

  it("one that got an event, or was not resumed, ends with the hint alone", async () => {
    const { elsewhere: hub } = await setUp();
    const position = await hub.standalonePosition("acme", "s1");
    const fresh = closingSink();
    await hub.attach("acme", "s1", "g", fresh.sink, { afterEntryId: position.slice(2) });
    const given = closingSink();
    await hub.attach("acme", "s1", "r1", given.sink, { afterEntryId: "0-0", resumed: true });
    await hub.emit("acme", "s1", "r1", '{"method":"notifications/progress"}');
    hub.closeAll(750);
    assert.deepEqual(fresh.closes, [[750, undefined]]);
    assert.equal(given.events.length, 1);
    assert.deepEqual(given.closes, [[750, undefined]]);
  });
});
