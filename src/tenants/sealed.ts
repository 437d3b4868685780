// Tenant records at rest (DESIGN.md §4): provider credentials (header values) are sealed with
// AES-256-GCM under a key derived from PORTICO_SECRET_KEY before they reach the store.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { ProviderConfig, TenantConfig } from "../providers/config.js";
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

function mapHeaders(provider: ProviderConfig, fn: (v: string) => string): ProviderConfig {
  const headers = (h: Readonly<Record<string, string>> | undefined) =>
    h && Object.fromEntries(Object.entries(h).map(([k, v]) => [k, fn(v)]));
  switch (provider.kind) {
    case "static":
      return provider;
    case "mcp":
      return provider.headers ? { ...provider, headers: headers(provider.headers) } : provider;
    case "http":
      return {
        ...provider,
        tools: provider.tools.map((t) => (t.headers ? { ...t, headers: headers(t.headers) } : t)),
      };
  }
}

/** The record as stored: every provider header value sealed. */
export function sealTenant(secrets: Secrets, tenant: TenantConfig): string {
  return JSON.stringify({
    ...tenant,
    providers: tenant.providers.map((p) => mapHeaders(p, (v) => seal(secrets, v))),
  });
}

/** The record as used: every sealed header value opened. */
export function unsealTenant(secrets: Secrets, stored: string): TenantConfig {
  const tenant = JSON.parse(stored) as TenantConfig;
  return { ...tenant, providers: tenant.providers.map((p) => mapHeaders(p, (v) => unseal(secrets, v))) };
}
