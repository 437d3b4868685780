// The audit log: every admin write, who made it, when, and the record before and after with
// secrets redacted; policy denials, login back-offs, users' own disconnections and run-time catalog
// conflicts (once for all replicas). One bounded stream per tenant plus one for the platform, read
// newest first. Each log is a tamper-evident chain (docs/operations.md "The audit log"): every
// entry has a sequence number and a MAC, keyed by PORTICO_SECRET_KEY's own "audit" key, over
// itself and the MAC of the entry before it. Replicas append without a lock: an entry is written
// only while the log's head is still the one its MAC was made on (a compare-and-set, retried).
import { createHash } from "node:crypto";
import type { Secrets } from "../crypto/secrets.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { ProviderConflict } from "../providers/catalog.js";
import type { DefinitionChange, Notice } from "../providers/pin-book.js";

export interface AuditEntry {
  readonly id: string;
  /** Its place in its log: 1 for the first entry written there. Absent on entries older than the chain. */
  readonly seq?: number;
  readonly at: string;
  readonly actor: string;
  /** `<resource>.<verb>`, e.g. provider.create. */
  readonly action: string;
  readonly tenant: string | null;
  /** The id of what was written. */
  readonly target: string;
  readonly before?: unknown;
  readonly after?: unknown;
  /** Which secrets the write kept, set or removed (JSON Pointers); never their values. */
  readonly secrets?: SecretChanges;
  /** The user whose action it was, when a user's (a policy denial, a disconnection). */
  readonly user?: { readonly sub: string; readonly username?: string };
  /** The OAuth client the user acted through, when known. */
  readonly client?: string;
  /** The virtual server it happened on, when one. */
  readonly server?: string;
  /** A changed tool definition, member by member (tool.changed). */
  readonly changes?: readonly DefinitionChange[];
  /** The provider's pinning when a definition changed: "warn" served it, "block" held it back. */
  readonly pinning?: "warn" | "block" | "off";
  /** The chain's MAC over this entry and the one before (base64url). */
  readonly mac?: string;
}

/** Which secrets a write kept or set (pointers in the saved record) and removed (in the one before). */
export interface SecretChanges {
  readonly kept: string[];
  readonly set: string[];
  readonly removed: string[];
}

export type AuditInput = Omit<AuditEntry, "id" | "at" | "seq" | "mac">;

/** A log's newest link, as its head key holds it. */
interface Link {
  readonly seq: number;
  readonly mac: string;
  /** On the first link: how many entries older than the chain preceded it. */
  readonly unchained?: number;
}

/** What verify() found: the entries checked, and the first one that breaks the chain. */
export interface ChainReport {
  readonly ok: boolean;
  /** Entries whose MAC was checked. */
  readonly verified: number;
  /** The sequence numbers checked, first and last. */
  readonly first?: number;
  readonly last?: number;
  /** The stored head and the anchor the old end was trimmed at. */
  readonly head?: number;
  readonly anchor?: number;
  /** Entries older than the chain (written before it existed): not checked. */
  readonly unchained: number;
  readonly broken?: { readonly seq: number; readonly id?: string; readonly reason: string };
}

/** Entries kept per log; older ones are trimmed, the last one trimmed kept as the anchor. */
export const MAX_ENTRIES = 10_000;
/** How long an append that keeps losing the race for the head is tried again before it fails. */
const APPEND_DEADLINE_MS = 10_000;
/** The longest pause before trying again: each loss doubles it from 1 ms, and a random part of it is waited. */
const MAX_BACKOFF_MS = 64;
/** How an entry's MAC is spelled at the end of its stored JSON. */
const MAC_MEMBER = ',"mac":"';
/** How long a conflict or a changed tool definition stays recorded: one that lasts is not recorded again for a day. */
const NOTED_SECONDS = 86_400;

export class AuditLog {
  /** Per log, the tail of this replica's appends: they go one at a time, so only replicas race for a head. */
  readonly #tails = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly secrets: Secrets,
    private readonly metrics?: Metrics,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records a write in its tenant's log, or the platform log when it has no tenant. */
  async record(entry: AuditInput, platformToo = false): Promise<void> {
    const at = this.now().toISOString();
    const logs = [entry.tenant];
    if (platformToo && entry.tenant !== null) logs.push(null);
    await Promise.all(logs.map((log) => this.#queued(log, entry, at)));
    this.metrics?.adminWrite(entry.action);
  }

  /** Appends after this replica's earlier appends to the same log have settled. */
  #queued(log: string | null, entry: AuditInput, at: string): Promise<void> {
    const name = log ?? "";
    const previous = this.#tails.get(name) ?? Promise.resolve();
    const appended = previous.then(() => this.#append(log, entry, at));
    const tail = appended.catch(() => undefined);
    this.#tails.set(name, tail);
    void tail.then(() => {
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    });
    return appended;
  }

  /**
   * Appends to one log's chain: its MAC made on the head it read, written only if that is still
   * the head (another replica may have appended meanwhile: then read again).
   */
  async #append(log: string | null, entry: AuditInput, at: string): Promise<void> {
    const keys = this.keys.auditChain(log);
    const deadline = Date.now() + APPEND_DEADLINE_MS;
    for (let attempt = 0; ; attempt++) {
      const raw = await this.store.get(keys.head);
      const head = raw === null ? undefined : (JSON.parse(raw) as Link);
      const seq = (head?.seq ?? 0) + 1;
      // The first link names how many entries older than the chain the log holds: none can be added.
      const unchained = head
        ? 0
        : (await this.store.streamReadAfter(keys.stream, "0-0", 2 * MAX_ENTRIES)).length;
      const body = JSON.stringify({ ...entry, at, seq, ...(unchained > 0 && { unchained }) });
      const mac = this.secrets.mac("audit", linkInput(log, seq, head?.mac ?? "", body));
      const data = `${body.slice(0, -1)}${MAC_MEMBER}${mac}"}`;
      if (await this.store.chainAppend(keys, raw, JSON.stringify({ seq, mac }), data, MAX_ENTRIES)) return;
      if (Date.now() >= deadline) break;
      // Lost to another replica. Trying again at once lets the same replica win every time (its
      // next append reads the head as early as the loser does): a random pause breaks the rhythm.
      const backoff = Math.min(MAX_BACKOFF_MS, 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * backoff));
    }
    throw new Error(`the audit log of ${log ?? "the platform"} stayed busy: entry not recorded`);
  }

  /**
   * Verifies a log's chain (`tenant` null: the platform's): each entry's MAC, in sequence from the
   * anchor (or 1), against the stored head, and that trimming, not someone, removed the old end.
   * `from`…`to` (sequence numbers) limits the entries whose MACs are checked; the others link them.
   */
  async verify(tenant: string | null, from = 1, to = Number.MAX_SAFE_INTEGER): Promise<ChainReport> {
    const keys = this.keys.auditChain(tenant);
    const [rawHead, rawAnchor] = await Promise.all([this.store.get(keys.head), this.store.get(keys.anchor)]);
    const head = rawHead === null ? undefined : (JSON.parse(rawHead) as Link);
    const anchor = rawAnchor === null ? undefined : linkOf(rawAnchor);
    let expected = (anchor?.seq ?? 0) + 1;
    let previous = anchor?.mac ?? "";
    let verified = 0;
    let unchained = 0;
    let first: number | undefined;
    let checked: number | undefined;
    let last: Link | undefined;
    const report = (broken?: ChainReport["broken"]): ChainReport => ({
      ok: broken === undefined,
      verified,
      ...(first !== undefined && { first, last: checked }),
      ...(head && { head: head.seq }),
      ...(anchor && { anchor: anchor.seq }),
      unchained,
      ...(broken && { broken }),
    });
    for await (const row of this.#entries(keys.stream)) {
      const link = linkOf(row.data);
      if (!link) {
        if (last !== undefined || anchor !== undefined)
          return report({
            seq: expected,
            id: row.id,
            reason: "an entry without a sequence number or MAC in the chain",
          });
        unchained++;
        continue;
      }
      if (link.seq !== expected)
        return report({
          seq: expected,
          id: row.id,
          reason:
            link.seq > expected
              ? `entries ${expected}…${link.seq - 1} are missing (deleted)`
              : `entry ${link.seq} is out of place (expected ${expected})`,
        });
      // Older entries trimmed since (the anchor is one of them) may be fewer; never more.
      const legacyTrimmed = rawAnchor !== null && anchor === undefined;
      if (link.seq === 1 && link.unchained !== unchained && !(legacyTrimmed && unchained < link.unchained!))
        return report({
          seq: 1,
          id: row.id,
          reason: `the chain began after ${link.unchained} older entries, but ${unchained} precede it: entries were added or removed before it`,
        });
      if (link.seq >= from && link.seq <= to) {
        // The MAC is the entry's last member, exactly: nothing may follow it (a later duplicate wins in JSON).
        const suffix = `${MAC_MEMBER}${link.mac}"}`;
        const body = row.data.endsWith(suffix) ? `${row.data.slice(0, -suffix.length)}}` : "";
        if (!body || !this.secrets.verify("audit", linkInput(tenant, link.seq, previous, body), link.mac))
          return report({
            seq: link.seq,
            id: row.id,
            reason: "its MAC does not match: the entry, or the one before it, was changed",
          });
        verified++;
        first ??= link.seq;
        checked = link.seq;
      }
      previous = link.mac;
      last = link;
      expected++;
    }
    if (head && (last?.seq !== head.seq || last.mac !== head.mac))
      return report({
        seq: (last?.seq ?? anchor?.seq ?? 0) + 1,
        reason: `the head names entry ${head.seq}, but the newest entry is ${last?.seq ?? "none"}: the newest entries were deleted`,
      });
    if (!head && last)
      return report({ seq: last.seq, reason: "the log has entries but no head: the head was deleted" });
    // The old end is trimmed only once the log is full: fewer entries after the anchor means some were taken.
    if (anchor && head && head.seq - anchor.seq < MAX_ENTRIES)
      return report({
        seq: anchor.seq + 1,
        reason: `the anchor is at ${anchor.seq}, but only ${head.seq - anchor.seq} entries follow it: entries at the old end were deleted`,
      });
    return report();
  }

  /** The log as JSON lines (`tenant` null: the platform's): its anchor, every entry in order, its head. */
  async *export(tenant: string | null): AsyncGenerator<string> {
    const keys = this.keys.auditChain(tenant);
    const [head, anchor] = await Promise.all([this.store.get(keys.head), this.store.get(keys.anchor)]);
    yield JSON.stringify({ anchor: anchor === null ? null : (JSON.parse(anchor) as unknown) });
    for await (const row of this.#entries(keys.stream))
      yield `{"id":${JSON.stringify(row.id)},${row.data.slice(1)}`;
    yield JSON.stringify({ head: head === null ? null : (JSON.parse(head) as unknown) });
  }

  /** A stream's entries, oldest first, read a page at a time. */
  async *#entries(stream: string): AsyncGenerator<{ id: string; data: string }> {
    let after = "0-0";
    for (;;) {
      const rows = await this.store.streamReadAfter(stream, after, 1000);
      for (const row of rows) yield row;
      if (rows.length < 1000) return;
      after = rows.at(-1)!.id;
    }
  }

  /**
   * Records a run-time catalog conflict (docs/architecture.md §3) as `provider.conflict` by
   * Portico itself, unless a replica recorded the same one within a day (docs/storage.md).
   */
  async conflict(tenant: string, provider: string, conflict: ProviderConflict): Promise<void> {
    const digest = createHash("sha256")
      .update(
        JSON.stringify([
          provider,
          conflict.kind,
          conflict.name,
          conflict.profile,
          ...(conflict.server === undefined ? [] : [conflict.server]),
        ]),
      )
      .digest("hex")
      .slice(0, 32);
    await this.#recordOnce(this.keys.conflictNoted(tenant, digest), {
      actor: "portico",
      action: "provider.conflict",
      tenant,
      target: provider,
      after: conflict,
    });
  }

  /**
   * Records a pinned provider's tool definition that no approval covers (providers/pin-book.ts) as
   * `tool.changed` or `tool.added` by Portico itself, with the approved definition before, the
   * new one after and the diff between them; once for every replica that sees it (within a day).
   */
  async definitionChanged(tenant: string, notice: Notice): Promise<void> {
    await this.#recordOnce(this.keys.pinNoted(tenant, notice.provider, notice.digest), {
      actor: "portico",
      action: notice.change === "changed" ? "tool.changed" : "tool.added",
      tenant,
      target: notice.provider,
      ...(notice.before && { before: notice.before }),
      after: notice.definition,
      ...(notice.diff.length > 0 && { changes: notice.diff }),
      pinning: notice.mode,
    });
  }

  /** Records an entry unless a replica marked `noted` within a day: what many replicas see, once. */
  async #recordOnce(noted: string, entry: AuditInput): Promise<void> {
    const first = await this.store.set(noted, "1", { ttlSeconds: NOTED_SECONDS, onlyIfAbsent: true });
    if (first) await this.record(entry);
  }

  /** A page, newest first, of entries older than `before` (an entry id). */
  async page(tenant: string | null, before: string | undefined, limit: number): Promise<AuditEntry[]> {
    const key = this.keys.auditChain(tenant).stream;
    const rows = await this.store.streamReadBefore(key, before, limit);
    return rows.map((row) => ({ id: row.id, ...(JSON.parse(row.data) as Omit<AuditEntry, "id">) }));
  }

  /** Drops a tenant's log (the tenant is deleted; the platform log keeps the deletion). */
  async removeTenant(tenant: string): Promise<void> {
    const { stream, head, anchor } = this.keys.auditChain(tenant);
    await this.store.del(stream, head, anchor);
  }
}

/** What an entry's MAC covers: its log, its place, the MAC before it and its own JSON. */
function linkInput(log: string | null, seq: number, previous: string, body: string): string {
  return `${log === null ? "" : `t:${log}`}\n${seq}\n${previous}\n${body}`;
}

/** The sequence number and MAC of a stored entry; undefined for one older than the chain. */
function linkOf(data: string): Link | undefined {
  try {
    const { seq, mac, unchained } = JSON.parse(data) as { seq?: unknown; mac?: unknown; unchained?: unknown };
    if (typeof seq !== "number" || typeof mac !== "string") return undefined;
    return { seq, mac, unchained: typeof unchained === "number" ? unchained : 0 };
  } catch {
    return undefined;
  }
}
