// Tenant records at rest (docs/storage.md): provider credentials (records/secret-fields.ts) are sealed
// with AES-256-GCM under a key derived from PORTICO_SECRET_KEY before they reach the store; values
// sealed under a previous key (PORTICO_SECRET_KEY_PREVIOUS) still open until resealed.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { ProviderConfig } from "../records/tenant.js";
import { mapSecrets } from "../records/secret-fields.js";
import type { KeyPurpose, Secrets } from "../crypto/secrets.js";
import type { Store } from "../store/store.js";

const PREFIX = "enc:v1:";

/** Seals under the current key of `purpose` ("encryption" for records; connected accounts have their own). */
export function seal(secrets: Secrets, plaintext: string, purpose: KeyPurpose = "encryption"): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", secrets.key(purpose), iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** Opens a sealed value under the current key, then each previous one; throws when none opens it. */
export function unseal(secrets: Secrets, sealed: string, purpose: KeyPurpose = "encryption"): string {
  if (!sealed.startsWith(PREFIX)) return sealed;
  const opened = openSealed(secrets, sealed, purpose);
  if (opened === undefined) throw new Error("sealed under another key, or altered");
  return opened.plaintext;
}

/** What a sealed value holds and which key opened it (0: the current one). */
export interface Opened {
  readonly plaintext: string;
  readonly keyIndex: number;
}

/** Opens a sealed value (`enc:v1:…`) with the first key that fits; undefined when none does. */
export function openSealed(
  secrets: Secrets,
  sealed: string,
  purpose: KeyPurpose = "encryption",
): Opened | undefined {
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
  if (raw.length < 28) return undefined;
  const keys = secrets.keys(purpose);
  for (let keyIndex = 0; keyIndex < keys.length; keyIndex++) {
    try {
      const decipher = createDecipheriv("aes-256-gcm", keys[keyIndex]!, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const plaintext = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      return { plaintext, keyIndex };
    } catch {
      // not this key: try the next
    }
  }
  return undefined;
}

/** True for a value written by seal(). */
export function isSealed(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(PREFIX);
}

/** Provider records as stored: every secret (records/secret-fields.ts) sealed. */
export function sealProviders(secrets: Secrets, providers: readonly ProviderConfig[]): ProviderConfig[] {
  const sealOne = (v: unknown) => (typeof v === "string" ? seal(secrets, v) : v);
  return providers.map((p) => mapSecrets(p, sealOne));
}

/** Provider records as used: every sealed secret opened. */
export function openProviders(secrets: Secrets, providers: readonly ProviderConfig[]): ProviderConfig[] {
  const open = (v: unknown) => (typeof v === "string" ? unseal(secrets, v) : v);
  return providers.map((p) => mapSecrets(p, open));
}

/** One value no key opened during a reseal: whose record, and where in it. */
export interface ResealFailure {
  /** The tenant; null for platform records (the OAuth signing keys). */
  readonly tenant: string | null;
  /** Where the value sits, e.g. /providers/0/headers/x-api-key or /keys/0/privateJwk. */
  readonly pointer: string;
}

/** Counts of a reseal (docs/operations.md "Rotating PORTICO_SECRET_KEY"). */
export interface ResealTally {
  resealed: number;
  alreadyCurrent: number;
  readonly failed: ResealFailure[];
}

export function emptyTally(): ResealTally {
  return { resealed: 0, alreadyCurrent: 0, failed: [] };
}

/**
 * A sealed value under the current key: a value sealed under a previous key is sealed again, one
 * already current or that no key opens is returned as it is (and counted as such); so is
 * anything not sealed.
 */
export function resealValue(
  secrets: Secrets,
  value: unknown,
  tally: ResealTally,
  where: () => ResealFailure,
  purpose: KeyPurpose = "encryption",
): unknown {
  if (!isSealed(value)) return value;
  const opened = openSealed(secrets, value, purpose);
  if (opened === undefined) {
    tally.failed.push(where());
    return value;
  }
  if (opened.keyIndex === 0) {
    tally.alreadyCurrent++;
    return value;
  }
  tally.resealed++;
  return seal(secrets, opened.plaintext, purpose);
}

/** Adds one round's counts to the whole reseal's. */
export function addTally(tally: ResealTally, round: ResealTally): void {
  tally.resealed += round.resealed;
  tally.alreadyCurrent += round.alreadyCurrent;
  tally.failed.push(...round.failed);
}

/**
 * Reseals a stored value that is sealed as a whole (a connected account, a client registration)
 * with compare-and-set: a write meanwhile (a refresh) is read again, never overwritten.
 */
export async function resealStored(
  store: Store,
  key: string,
  secrets: Secrets,
  purpose: KeyPurpose,
  tally: ResealTally,
  where: () => ResealFailure,
): Promise<void> {
  for (let attempt = 0; attempt < RESEAL_ATTEMPTS; attempt++) {
    const raw = await store.get(key);
    if (raw === null) return;
    const round = emptyTally();
    const next = resealValue(secrets, raw, round, where, purpose) as string;
    if (round.resealed === 0 || (await store.compareAndSet(key, raw, next))) return addTally(tally, round);
  }
  throw new Error(`${key}: too many concurrent writers, try again`);
}

const RESEAL_ATTEMPTS = 20;
