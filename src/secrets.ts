// Key material derived from PORTICO_SECRET_KEY (HKDF, one key per purpose) and random identifiers.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

export type KeyPurpose = "cursor" | "encryption" | "request-state" | "etag";

export class Secrets {
  readonly #root: Buffer;
  /** True when no PORTICO_SECRET_KEY was given and a random per-process key is in use. */
  readonly ephemeral: boolean;

  constructor(secret: string | undefined) {
    this.ephemeral = secret === undefined;
    this.#root = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
  }

  /** A 32-byte key for one purpose; keys for different purposes are independent. */
  key(purpose: KeyPurpose): Buffer {
    return Buffer.from(hkdfSync("sha256", this.#root, "portico", purpose, 32));
  }

  /** A MAC bound to the purpose, truncated to 128 bits, base64url. */
  mac(purpose: KeyPurpose, data: string): string {
    return createHmac("sha256", this.key(purpose))
      .update(data)
      .digest()
      .subarray(0, 16)
      .toString("base64url");
  }
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
