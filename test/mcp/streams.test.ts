// StreamHub across a lost session channel (docs/storage.md "Channels"): events another replica
// published while this replica's subscription was down are taken from the event log once it is
// back, so a stream carried here misses nothing and repeats nothing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StreamHub, type SseSink } from "../../src/mcp/streams.js";
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
  const sink: SseSink = {
    write: (eventId, data) => void events.push(`${eventId} ${data}`),
    backlog: 0,
    destroy: () => undefined,
    close: () => undefined,
  };
  return { sink, events };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("StreamHub after a lost session channel", () => {
  it("delivers from the event log what was published while the channel was down, once", async () => {
    const store = new ReconnectingStore();
    const keys = createKeys("t");
    const options = { store, keys, ttlSeconds: 60, maxEvents: 100, onBusMessage: () => undefined };
    const here = new StreamHub(options);
    const elsewhere = new StreamHub(options);
    const position = await here.standalonePosition("acme", "s1");
    const { sink, events } = recordingSink();
    await here.attach("acme", "s1", "g", sink, { afterEntryId: position.slice(2) });

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
});
