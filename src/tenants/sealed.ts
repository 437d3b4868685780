// Tenant records at rest (DESIGN.md §4): provider credentials (providers/secret-fields.ts) are sealed with
// AES-256-GCM under a key derived from PORTICO_SECRET_KEY before they reach the store.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { ProviderConfig } from "../providers/config.js";
import { mapSecrets } from "../providers/secret-fields.js";
import type { Secrets } from "../secrets.js";

const PREFIX = "enc:v1:";

export function seal(secrets: Secrets, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", secrets.key("encryption"), iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** Opens a sealed value; throws when it was sealed under another key or altered. */
export function unseal(secrets: Secrets, sealed: string): string {
  if (!sealed.startsWith(PREFIX)) return sealed;
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
  const decipher = createDecipheriv("aes-256-gcm", secrets.key("encryption"), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}

/** Provider records as stored: every secret (secret-fields.ts) sealed. */
export function sealProviders(secrets: Secrets, providers: readonly ProviderConfig[]): ProviderConfig[] {
  const sealOne = (v: unknown) => (typeof v === "string" ? seal(secrets, v) : v);
  return providers.map((p) => mapSecrets(p, sealOne));
}

/** Provider records as used: every sealed secret opened. */
export function openProviders(secrets: Secrets, providers: readonly ProviderConfig[]): ProviderConfig[] {
  const open = (v: unknown) => (typeof v === "string" ? unseal(secrets, v) : v);
  return providers.map((p) => mapSecrets(p, open));
}
