// The in-memory revocation list recovers from a store outage: a first check while the store is
// away fails (tokens are refused) without breaking every later check, and revocations whose
// broadcast was missed are read again as soon as the subscription is back.
import assert from "node:assert/strict";
import { it } from "node:test";
import { RevocationList } from "../../src/oauth/revocations.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";

const keys = createKeys("t");

/** A memory store that can be "down" and whose subscriptions can be resynced by hand. */
function flakyStore() {
  const store: Store = new MemoryStore();
  const state = { down: false, resyncs: [] as (() => void)[] };
  const subscribe = store.subscribe.bind(store);
  store.subscribe = async (channel, listener, onResync) => {
    if (state.down) throw new Error("store unavailable");
    if (onResync) state.resyncs.push(onResync);
    return subscribe(channel, listener);
  };
  return { store, state };
}

it("a check while the store is away fails, and the next one once it is back works", async () => {
  const { store, state } = flakyStore();
  const list = new RevocationList(store, keys);
  state.down = true;
  await assert.rejects(list.has("jti-1"), /store unavailable/);
  state.down = false;
  assert.equal(await list.has("jti-1"), false);
  await list.close();
});

it("revocations whose broadcast was missed are read again when the subscription is back", async () => {
  const { store, state } = flakyStore();
  const list = new RevocationList(store, keys);
  assert.equal(await list.has("jti-2"), false);
  // Written by another replica while this one's subscription was down: no broadcast arrived.
  const exp = Math.floor(Date.now() / 1000) + 600;
  await store.sortedAdd(keys.revokedTokens(), `${exp}:jti-2`, exp);
  assert.equal(await list.has("jti-2"), false, "not known yet");
  for (const resync of state.resyncs) resync();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await list.has("jti-2"), true);
  await list.close();
});
