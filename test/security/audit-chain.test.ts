// The audit log is a tamper-evident chain (docs/operations.md "The audit log"): thousands of
// entries written by two replicas at once verify; an entry edited in the store, an edited entry
// re-chained with a plain hash, entries deleted at the new end, in the middle or at the old end
// (past the anchor trimming left) are each reported at the first entry that breaks the chain. The
// admin API verifies and exports a log as JSON lines.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { AuditLog, MAX_ENTRIES, type AuditInput } from "../../src/audit/audit.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

const entry = (i: number): AuditInput => ({
  actor: "api-key:key_x (ci)",
  action: "provider.update",
  tenant: "acme",
  target: `p${i}`,
  after: { n: i },
});

/** Rewrites a log's stream as an attacker with write access to the store would: every entry through `change`. */
async function rewrite(
  store: Store,
  stream: string,
  change: (entries: Array<Record<string, unknown>>) => Array<Record<string, unknown>>,
): Promise<void> {
  const rows = await store.streamReadAfter(stream, "0-0", 100_000);
  const edited = change(rows.map((r) => JSON.parse(r.data) as Record<string, unknown>));
  await store.del(stream);
  for (const e of edited) await store.streamAppend(stream, JSON.stringify(e), { maxLen: 100_000 });
}

describe("two replicas writing one tenant's log at once", () => {
  let a: RunningPortico;
  let b: RunningPortico;
  let logA: AuditLog;
  let logB: AuditLog;

  before(async () => {
    const redisPrefix = uniquePrefix();
    const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN };
    a = await startPortico({ tenants: [staticTenant("acme")], redisPrefix, env });
    b = await startPortico({ tenants: [staticTenant("acme")], redisPrefix, env });
    logA = new AuditLog(a.store, a.keys, new Secrets(TEST_SECRET));
    logB = new AuditLog(b.store, b.keys, new Secrets(TEST_SECRET));
  });

  after(async () => {
    await a.close();
    await b.close();
  });

  it("a chain of 2,000 entries, each sequence number once, verifies", async () => {
    const before = (await logA.verify("acme")).head ?? 0;
    const writers = [logA, logB].map(async (log, w) => {
      for (let batch = 0; batch < 50; batch++)
        await Promise.all(Array.from({ length: 20 }, (_, i) => log.record(entry(w * 1000 + batch * 20 + i))));
    });
    await Promise.all(writers);
    const report = await logA.verify("acme");
    const total = before + 2000;
    assert.deepEqual(report, { ok: true, verified: total, first: 1, last: total, head: total, unchained: 0 });
    const rows = await a.store.streamReadAfter(a.keys.auditChain("acme").stream, "0-0", 5000);
    const targets = new Set(rows.map((r) => (JSON.parse(r.data) as { target: string }).target));
    assert.equal(rows.length, total);
    assert.equal(targets.size, total, "no entry lost or written twice");
  });

  it("the admin API verifies the chain over a range and exports it as JSON lines", async () => {
    const admin = new AdminClient(a.url);
    const whole = await admin.get("/tenants/acme/audit/verify");
    assert.equal(whole.status, 200);
    assert.equal(whole.body.ok, true);
    const range = await admin.get("/tenants/acme/audit/verify?from=100&to=199");
    assert.deepEqual(
      { ok: range.body.ok, verified: range.body.verified, first: range.body.first, last: range.body.last },
      { ok: true, verified: 100, first: 100, last: 199 },
    );
    const res = await fetch(`${a.url}/admin/v1/tenants/acme/audit/export`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^application\/x-ndjson/);
    const lines = (await res.text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, any>);
    assert.deepEqual(lines[0], { anchor: null });
    const total = lines.at(-1)!.head.seq as number;
    assert.ok(total >= 2000);
    assert.equal(lines.length, total + 2);
    assert.deepEqual(
      lines.slice(1, 4).map((l) => [l.seq, typeof l.mac, typeof l.id]),
      [
        [1, "string", "string"],
        [2, "string", "string"],
        [3, "string", "string"],
      ],
    );
    // Entries the list shows carry their place and MAC too.
    const listed = await admin.get("/tenants/acme/audit?limit=1");
    assert.equal(listed.body.items[0].seq, total);
  });

  it("an entry edited in the store is named", async () => {
    const { stream } = a.keys.auditChain("acme");
    await rewrite(a.store, stream, (all) =>
      all.map((e) => (e.seq === 700 ? { ...e, actor: "someone else" } : e)),
    );
    const report = await logA.verify("acme");
    assert.equal(report.ok, false);
    assert.equal(report.broken?.seq, 700);
    assert.match(report.broken.reason, /MAC does not match/);
    const api = await new AdminClient(a.url).get("/tenants/acme/audit/verify");
    assert.equal(api.body.broken.seq, 700);
  });
});

describe("breaks a log's chain can have", () => {
  const secrets = new Secrets(TEST_SECRET);
  let store: MemoryStore;
  let log: AuditLog;
  const keys = createKeys("t");
  const { stream, head, anchor } = keys.auditChain("acme");

  before(async () => {
    store = new MemoryStore();
    log = new AuditLog(store, keys, secrets);
    for (let i = 1; i <= 50; i++) await log.record(entry(i));
    assert.equal((await log.verify("acme")).ok, true);
  });

  const fresh = async () => {
    store = new MemoryStore();
    log = new AuditLog(store, keys, secrets);
    for (let i = 1; i <= 50; i++) await log.record(entry(i));
  };

  it("an edited entry re-chained with a plain hash (no key): the first edited entry", async () => {
    await fresh();
    let previous = "";
    await rewrite(store, stream, (all) =>
      all.map((e) => {
        const edited = e.seq === 20 ? { ...e, after: { n: -1 } } : e;
        if ((e.seq as number) < 20) return ((previous = e.mac as string), e);
        const { mac: _mac, ...body } = edited;
        const mac = createHash("sha256")
          .update(`${previous}${JSON.stringify(body)}`)
          .digest("base64url")
          .slice(0, 22);
        previous = mac;
        return { ...body, mac };
      }),
    );
    await store.set(head, JSON.stringify({ seq: 50, mac: previous }));
    const report = await log.verify("acme");
    assert.equal(report.broken?.seq, 20);
  });

  it("a member appended after the MAC (a later duplicate wins when the entry is read): the entry", async () => {
    await fresh();
    // Spelled out in the raw data: the entry keeps its MAC, and a reader keeps the last actor.
    const rows = await store.streamReadAfter(stream, "0-0", 100);
    await store.del(stream);
    for (const row of rows) {
      const data =
        (JSON.parse(row.data) as { seq: number }).seq === 10
          ? `${row.data.slice(0, -1)},"actor":"api-key:bob"}`
          : row.data;
      await store.streamAppend(stream, data, { maxLen: 100 });
    }
    const report = await log.verify("acme");
    assert.equal(report.broken?.seq, 10);
  });

  it("an entry forged before the chain began", async () => {
    await fresh();
    const rows = await store.streamReadAfter(stream, "0-0", 100);
    await store.del(stream);
    await store.streamAppend(
      stream,
      JSON.stringify({ actor: "platform token", action: "tenant.delete", at: "x" }),
      {
        maxLen: 100,
      },
    );
    for (const row of rows) await store.streamAppend(stream, row.data, { maxLen: 100 });
    const report = await log.verify("acme");
    assert.equal(report.broken?.seq, 1);
    assert.match(report.broken.reason, /entries were added or removed before it/);
  });

  it("entries written before the chain existed are counted, and bound by its first link", async () => {
    store = new MemoryStore();
    log = new AuditLog(store, keys, secrets);
    for (let i = 0; i < 3; i++)
      await store.streamAppend(stream, JSON.stringify({ ...entry(i), at: "then" }), { maxLen: 100 });
    for (let i = 1; i <= 5; i++) await log.record(entry(i));
    assert.deepEqual(await log.verify("acme"), {
      ok: true,
      verified: 5,
      first: 1,
      last: 5,
      head: 5,
      unchained: 3,
    });
  });

  it("the newest entries deleted: the head names what is missing", async () => {
    await fresh();
    await rewrite(store, stream, (all) => all.filter((e) => (e.seq as number) <= 47));
    const report = await log.verify("acme");
    assert.equal(report.broken?.seq, 48);
    assert.match(report.broken.reason, /head names entry 50.*newest entries were deleted/);
  });

  it("entries deleted in the middle", async () => {
    await fresh();
    await rewrite(store, stream, (all) => all.filter((e) => e.seq !== 30 && e.seq !== 31));
    const report = await log.verify("acme");
    assert.equal(report.broken?.seq, 30);
    assert.match(report.broken.reason, /entries 30…31 are missing/);
  });

  it("the head deleted with entries", async () => {
    await fresh();
    await store.del(head);
    assert.match((await log.verify("acme")).broken!.reason, /no head/);
  });

  it("a full log trims its old end at an anchor, and still verifies; entries taken past the anchor are named", async () => {
    store = new MemoryStore();
    log = new AuditLog(store, keys, secrets);
    for (let i = 1; i <= MAX_ENTRIES + 25; i++) await log.record(entry(i));
    const report = await log.verify("acme");
    assert.deepEqual(
      {
        ok: report.ok,
        verified: report.verified,
        anchor: report.anchor,
        first: report.first,
        head: report.head,
      },
      { ok: true, verified: MAX_ENTRIES, anchor: 25, first: 26, head: MAX_ENTRIES + 25 },
    );
    // Someone deletes the 5 oldest kept entries and moves the anchor up to hide it.
    const rows = await store.streamReadAfter(stream, "0-0", 10);
    await rewrite(store, stream, (all) => all.filter((e) => (e.seq as number) > 30));
    await store.set(anchor, rows[4]!.data);
    const taken = await log.verify("acme");
    assert.equal(taken.broken?.seq, 31);
    assert.match(taken.broken.reason, /entries at the old end were deleted/);
  });
});
