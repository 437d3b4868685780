// The authorization server's signing keys (docs/oauth.md "Signing keys"): ES256 (P-256) pairs named by
// their RFC 7638 thumbprint, kept in one durable record with private keys sealed (tenants/sealed.ts).
// The newest key signs; a replaced key stays in the JWKS (RFC 7517 §5) until its tokens have expired.
// Every write is a compare-and-set, so replicas starting or rotating at once agree on one key.

import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from "jose";
import { fail } from "../protocol/errors.js";
import type { Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { addTally, emptyTally, resealValue, seal, unseal, type ResealTally } from "../tenants/sealed.js";

export interface SigningKeysOptions {
  /** Age at which the signing key is replaced by a new one (default 30 days). */
  readonly rotateAfterSeconds?: number;
  /** How long a replaced key stays published: at least the access token lifetime (default 1 day). */
  readonly retireAfterSeconds?: number;
  /** How long a replica trusts its copy of the record before reading it again (default 5). */
  readonly cacheSeconds?: number;
  /** Clock in epoch milliseconds; tests inject one. */
  readonly now?: () => number;
}

/** A published verification key (RFC 7517 §4, RFC 7518 §6.2.1); never carries the private `d`. */
export interface PublicJwk {
  readonly kty: "EC";
  readonly crv: "P-256";
  readonly x: string;
  readonly y: string;
  readonly kid: string;
  readonly alg: "ES256";
  readonly use: "sig";
}

/** The key that signs now. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
}

interface StoredKey {
  readonly kid: string;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Epoch seconds from which a replaced key is no longer published; absent on the signing key. */
  readonly retireAt?: number;
  /** The private JWK as JSON, sealed. */
  readonly privateJwk: string;
  readonly publicJwk: { readonly kty: "EC"; readonly crv: "P-256"; readonly x: string; readonly y: string };
}

/** The stored record: the signing key first, then replaced keys still published. */
interface StoredRecord {
  readonly v: 1;
  readonly keys: readonly StoredKey[];
}

interface Snapshot {
  readonly raw: string | null;
  readonly record: StoredRecord;
  readonly readAtMs: number;
}

const DAY_SECONDS = 24 * 60 * 60;
/** An unknown kid makes a replica read the record again at most this often, so forged kids cannot flood the store. */
const UNKNOWN_KID_REREAD_MS = 1000;
const MAX_WRITE_ATTEMPTS = 5;

export class SigningKeys {
  readonly rotateAfterSeconds: number;
  readonly retireAfterSeconds: number;
  readonly #cacheMs: number;
  readonly #now: () => number;
  #snapshot: Snapshot | undefined;
  #reading: Promise<Snapshot> | undefined;
  #signing: SigningKey | undefined;
  readonly #publicKeys = new Map<string, CryptoKey>();

  constructor(
    readonly store: Store,
    readonly keys: Keys,
    private readonly secrets: Secrets,
    options: SigningKeysOptions = {},
  ) {
    this.rotateAfterSeconds = positive("rotateAfterSeconds", options.rotateAfterSeconds ?? 30 * DAY_SECONDS);
    this.retireAfterSeconds = positive("retireAfterSeconds", options.retireAfterSeconds ?? DAY_SECONDS);
    this.#cacheMs = 1000 * positive("cacheSeconds", options.cacheSeconds ?? 5);
    this.#now = options.now ?? Date.now;
  }

  /** The key that signs now; creates the first key, or rotates, when it is time. */
  async current(): Promise<SigningKey> {
    const key = (await this.#settled()).record.keys[0]!;
    if (this.#signing?.kid !== key.kid) this.#signing = { kid: key.kid, privateKey: await this.#open(key) };
    return this.#signing;
  }

  /** The JWK Set to publish: public keys only, the signing key first. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const { record } = await this.#settled();
    return { keys: this.#published(record).map(publicJwk) };
  }

  /** The verification key named `kid` while it is published; undefined for any other kid. */
  async publicKey(kid: string): Promise<CryptoKey | undefined> {
    // A kid another replica has just created is not in our copy yet: read again, at a bounded rate.
    const stored =
      this.#find((await this.#settled()).record, kid) ??
      this.#find((await this.#settled(UNKNOWN_KID_REREAD_MS)).record, kid);
    if (stored === undefined) return undefined;
    let key = this.#publicKeys.get(kid);
    if (key === undefined) {
      key = asCryptoKey(await importJWK({ ...stored.publicJwk }, "ES256"));
      this.#publicKeys.set(kid, key);
    }
    return key;
  }

  /**
   * Seals every stored private key under the current PORTICO_SECRET_KEY (compare-and-set); keys
   * no key opens stay as they are and are reported in `tally.failed`.
   */
  async reseal(tally: ResealTally): Promise<void> {
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const { raw, record } = await this.#read(0);
      if (raw === null) return;
      const round = emptyTally();
      const keys = record.keys.map((k, i) => ({
        ...k,
        privateJwk: resealValue(this.secrets, k.privateJwk, round, () => ({
          tenant: null,
          pointer: `/keys/${i}/privateJwk`,
        })) as string,
      }));
      const next = JSON.stringify({ v: 1, keys });
      if (round.resealed === 0 || (await this.store.compareAndSet(this.keys.oauthSigningKeys(), raw, next))) {
        if (round.resealed > 0) this.#adopt(next);
        return addTally(tally, round);
      }
    }
    throw new Error(`${this.keys.oauthSigningKeys()} changed under every write attempt`);
  }

  #nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  #published(record: StoredRecord): StoredKey[] {
    const now = this.#nowSeconds();
    return record.keys.filter((k) => k.retireAt === undefined || k.retireAt > now);
  }

  #find(record: StoredRecord, kid: string): StoredKey | undefined {
    return this.#published(record).find((k) => k.kid === kid);
  }

  /** True when the record needs a write: no key yet, the signing key is due, or a key has retired. */
  #due(record: StoredRecord): boolean {
    const now = this.#nowSeconds();
    const [signing, ...replaced] = record.keys;
    if (signing === undefined || now - signing.createdAt >= this.rotateAfterSeconds) return true;
    return replaced.some((k) => k.retireAt !== undefined && k.retireAt <= now);
  }

  /** A copy of the record with nothing due, writing the next record when needed (compare-and-set). */
  async #settled(maxAgeMs = this.#cacheMs): Promise<Snapshot> {
    let snapshot = await this.#read(maxAgeMs);
    if (!this.#due(snapshot.record)) return snapshot;
    // Another replica may have written already: decide on a fresh copy; a lost race reads again.
    snapshot = await this.#read(0);
    for (let attempt = 1; this.#due(snapshot.record); attempt++) {
      if (attempt > MAX_WRITE_ATTEMPTS)
        throw new Error(`${this.keys.oauthSigningKeys()} changed under every write attempt`);
      const raw = JSON.stringify(await this.#next(snapshot.record));
      if (await this.store.compareAndSet(this.keys.oauthSigningKeys(), snapshot.raw, raw))
        return this.#adopt(raw);
      snapshot = await this.#read(0);
    }
    return snapshot;
  }

  /** The record after rotation (when due) and with retired keys dropped. */
  async #next(record: StoredRecord): Promise<StoredRecord> {
    const now = this.#nowSeconds();
    const kept = record.keys.filter((k) => k.retireAt === undefined || k.retireAt > now);
    const signing = kept[0];
    if (signing !== undefined && now - signing.createdAt < this.rotateAfterSeconds)
      return { v: 1, keys: kept };
    // A replica that cannot open the keys (another PORTICO_SECRET_KEY) must not add one only it can open.
    if (signing !== undefined) await this.#open(signing);
    const replaced = kept.map((k, i) => (i === 0 ? { ...k, retireAt: now + this.retireAfterSeconds } : k));
    return { v: 1, keys: [await this.#generate(now), ...replaced] };
  }

  async #generate(now: number): Promise<StoredKey> {
    const pair = await generateKeyPair("ES256", { extractable: true });
    const { x, y } = await exportJWK(pair.publicKey);
    if (typeof x !== "string" || typeof y !== "string") throw new Error("exported P-256 key lacks x or y");
    const publicJwk = { kty: "EC", crv: "P-256", x, y } as const;
    const privateJwk = JSON.stringify(await exportJWK(pair.privateKey));
    const kid = await calculateJwkThumbprint(publicJwk, "sha256");
    return { kid, createdAt: now, privateJwk: seal(this.secrets, privateJwk), publicJwk };
  }

  /** Opens a sealed private key; a clear error when it was sealed under another PORTICO_SECRET_KEY. */
  async #open(key: StoredKey): Promise<CryptoKey> {
    let json: string;
    try {
      json = unseal(this.secrets, key.privateJwk);
    } catch {
      throw this.#unreadable(
        "its private keys were sealed under another PORTICO_SECRET_KEY. Start Portico with the key " +
          "that sealed them, or delete the record to make new keys (every issued access token becomes invalid)",
      );
    }
    // unseal passes unsealed text through; a private key in the clear is not one we wrote.
    if (json === key.privateJwk) throw this.#unreadable(`key ${key.kid} is not sealed`);
    const jwk = JSON.parse(json) as JWK;
    if (jwk.x !== key.publicJwk.x || jwk.y !== key.publicJwk.y || typeof jwk.d !== "string")
      throw this.#unreadable(`the private key of ${key.kid} does not match its public key`);
    return asCryptoKey(await importJWK(jwk, "ES256"));
  }

  #read(maxAgeMs: number): Promise<Snapshot> {
    const snapshot = this.#snapshot;
    if (snapshot !== undefined && this.#now() - snapshot.readAtMs < maxAgeMs)
      return Promise.resolve(snapshot);
    // Decisions to write need a read that started after them; cached reads share one in flight.
    if (maxAgeMs === 0) return this.#load();
    this.#reading ??= this.#load().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  async #load(): Promise<Snapshot> {
    return this.#adopt(await this.store.get(this.keys.oauthSigningKeys()));
  }

  #adopt(raw: string | null): Snapshot {
    const record = raw === null ? { v: 1 as const, keys: [] } : this.#parse(raw);
    for (const kid of this.#publicKeys.keys())
      if (!record.keys.some((k) => k.kid === kid)) this.#publicKeys.delete(kid);
    this.#snapshot = { raw, record, readAtMs: this.#now() };
    return this.#snapshot;
  }

  #parse(raw: string): StoredRecord {
    let record: unknown;
    try {
      record = JSON.parse(raw);
    } catch {
      throw this.#unreadable("it is not JSON");
    }
    const keys = (record as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || !keys.every(isStoredKey)) throw this.#unreadable("its shape is unknown");
    return { v: 1, keys };
  }

  #unreadable(why: string) {
    return fail("PORTICO_ERR_CONFIG_INVALID", `OAuth signing keys (${this.keys.oauthSigningKeys()}): ${why}`);
  }
}

function isStoredKey(value: unknown): value is StoredKey {
  const k = value as Partial<Record<keyof StoredKey, unknown>> | null;
  const pub = k?.publicJwk as Partial<Record<string, unknown>> | null | undefined;
  return (
    typeof k?.kid === "string" &&
    typeof k.createdAt === "number" &&
    (k.retireAt === undefined || typeof k.retireAt === "number") &&
    typeof k.privateJwk === "string" &&
    pub?.kty === "EC" &&
    pub.crv === "P-256" &&
    typeof pub.x === "string" &&
    typeof pub.y === "string"
  );
}

/** Built field by field, so nothing but public members can reach the JWKS. */
function publicJwk(key: StoredKey): PublicJwk {
  const { x, y } = key.publicJwk;
  return { kty: "EC", crv: "P-256", x, y, kid: key.kid, alg: "ES256", use: "sig" };
}

function asCryptoKey(key: CryptoKey | Uint8Array): CryptoKey {
  if (key instanceof Uint8Array) throw new Error("expected an EC key, got symmetric key bytes");
  return key;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
