// Key material derived from PORTICO_SECRET_KEY and the previous keys still accepted (HKDF, one key
// per purpose), MACs under them, and random identifiers.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

export type KeyPurpose =
  "cursor" | "encryption" | "request-state" | "etag" | "accounts" | "accounts-link" | "audit";

/**
 * The key material of PORTICO_SECRET_KEY and PORTICO_SECRET_KEY_PREVIOUS (docs/operations.md
 * "Rotating PORTICO_SECRET_KEY"): new seals and MACs use the current key; what older keys made
 * still opens and verifies. The current key is always tried first, so a hot path that sees
 * current tokens does the same work as with one key.
 */
export class Secrets {
  readonly #roots: readonly Buffer[];
  readonly #derived = new Map<KeyPurpose, readonly Buffer[]>();
  /** True when no PORTICO_SECRET_KEY was given and a random per-process key is in use. */
  readonly ephemeral: boolean;

  constructor(secret: string | undefined, previous: readonly string[] = []) {
    this.ephemeral = secret === undefined;
    const current = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
    const older = previous.filter((p) => p !== secret).map((p) => Buffer.from(p, "utf8"));
    this.#roots = [current, ...older];
  }

  /** A 32-byte key for one purpose, from the current secret; keys for different purposes are independent. */
  key(purpose: KeyPurpose): Buffer {
    return this.keys(purpose)[0]!;
  }

  /** The keys for one purpose: the current one first, then one per previous secret, in order. */
  keys(purpose: KeyPurpose): readonly Buffer[] {
    let keys = this.#derived.get(purpose);
    if (keys === undefined) {
      keys = this.#roots.map((root) => Buffer.from(hkdfSync("sha256", root, "portico", purpose, 32)));
      this.#derived.set(purpose, keys);
    }
    return keys;
  }

  /** A MAC bound to the purpose under the current key, truncated to 128 bits, base64url. */
  mac(purpose: KeyPurpose, data: string): string {
    return macWith(this.key(purpose), data);
  }

  /** Every MAC of `data` the keys would accept, the current key's first (ETags are compared as strings). */
  macs(purpose: KeyPurpose, data: string): string[] {
    return this.keys(purpose).map((key) => macWith(key, data));
  }

  /** True when `mac` is the MAC of `data` under the current key or a previous one. */
  verify(purpose: KeyPurpose, data: string, mac: string): boolean {
    for (const key of this.keys(purpose)) if (macEquals(mac, macWith(key, data))) return true;
    return false;
  }
}

function macWith(key: Buffer, data: string): string {
  return createHmac("sha256", key).update(data).digest().subarray(0, 16).toString("base64url");
}

/** Constant-time comparison of two base64url MACs. */
export function macEquals(a: string, b: string): boolean {
  const x = Buffer.from(a, "base64url");
  const y = Buffer.from(b, "base64url");
  // Only the canonical spelling counts: base64url's unused low bits must not give a MAC twins.
  if (x.toString("base64url") !== a) return false;
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1); undefined otherwise. */
export function bearerOf(header: string | undefined): string | undefined {
  return /^Bearer +([\x21-\x7e]+) *$/i.exec(header ?? "")?.[1];
}

/**
 * Checks candidates against a configured secret (an admin or metrics token): compared as SHA-256
 * digests, so in constant time whatever the lengths.
 */
export function secretMatcher(secret: string): (candidate: string) => boolean {
  const expected = createHash("sha256").update(secret).digest();
  return (candidate) => timingSafeEqual(createHash("sha256").update(candidate).digest(), expected);
}

// Random ids are cut from a pooled CSPRNG buffer: one randomBytes call serves many ids.
const POOL_SIZE = 16 * 1024;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** `bytes` CSPRNG bytes as base64url (16 bytes → 22 visible-ASCII characters). */
export function randomId(bytes = 16): string {
  if (offset + bytes > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const id = pool.toString("base64url", offset, offset + bytes);
  offset += bytes;
  return id;
}
