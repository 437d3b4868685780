// StreamHub across a lost session channel (docs/storage.md "Channels"): events another replica
// published while this replica's subscription was down are taken from the event log once it is
// back, so a stream carried here misses nothing and repeats nothing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
