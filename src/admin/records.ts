// How admin records look on the wire and how writes to them are checked: secrets redacted
// (kept-secrets.ts keeps them), ETags and If-Match (RFC 9110 §13.1.1), JSON Merge Patch (RFC 7396), and the semantic
// validation of records/validate.ts reported with JSON Pointers; the same for identity settings.
import { excerpt, fail, isPorticoError } from "../protocol/errors.js";
import type { ProviderConfig, TenantConfig, TenantIdentity } from "../records/tenant.js";
import { IDENTITY_SECRETS, mapSecrets } from "../records/secret-fields.js";
import { checkAgainst, validateIdentity, validateProvider, validateTenant } from "../records/validate.js";
import type { Secrets } from "../crypto/secrets.js";
import { canonical } from "../tenants/tenant-store.js";
import { keepSecrets, SET } from "./kept-secrets.js";
import { invalid } from "./openapi/validator.js";

/** A record as the API shows it: every secret reads {"set": true}. */
export function redact<T>(record: T): T {
  return mapSecrets(record, () => SET);
}

/** A strong ETag of a record: a MAC, so it reveals nothing about the secrets it covers. */
export function etagOf(secrets: Secrets, record: unknown): string {
  return `"${secrets.mac("etag", canonical(record))}"`;
}

/**
 * Throws 412 unless If-Match (absent, `*`, or a list of tags) admits the record's ETag. A tag
 * made under a previous PORTICO_SECRET_KEY still matches, so a rotation does not fail every
 * read-modify-write in flight.
 */
export function checkIfMatch(ifMatch: string | undefined, secrets: Secrets, record: unknown): void {
  if (ifMatch === undefined || ifMatch === "*") return;
  const tags = ifMatch.split(",").map((t) => t.trim());
  const accepted = secrets.macs("etag", canonical(record)).map((mac) => `"${mac}"`);
  // If-Match uses the strong comparison: weak tags never match.
  if (accepted.some((tag) => tags.includes(tag))) return;
  const current = accepted[0]!;
  throw fail(
    "PORTICO_ERR_ADMIN_PRECONDITION_FAILED",
    `The record changed since you read it (If-Match ${excerpt(ifMatch)}, now ${current}): GET it again, reapply your change and send the new ETag`,
  );
}

/** RFC 7396 JSON Merge Patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    // Defined, not assigned: a member named "__proto__" stays data (and fails validation as an
    // unknown field) instead of becoming the object's prototype.
    else
      Object.defineProperty(out, key, {
        value: mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

/** "provider.tools[0].name" (validate.ts paths) as "/tools/0/name". */
function pointerOf(path: string, root: string): string {
  const rest = path === root ? "" : path.slice(root.length);
  return rest
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .slice(1)
    .map((t) => `/${t.replaceAll("~", "~0").replaceAll("/", "~1")}`)
    .join("");
}

/** Runs one of validate.ts's checks, turning its complaint into `code` with a JSON Pointer. */
export function asProblem<T>(run: () => T, root: string, code: "invalid" | "conflict"): T {
  try {
    return run();
  } catch (err) {
    if (!isPorticoError(err) || err.code !== "PORTICO_ERR_CONFIG_INVALID") throw err;
    const path = (err.data as { path?: string } | undefined)?.path ?? root;
    const detail = err.message.slice(err.message.indexOf(": ") + 2);
    if (code === "conflict") throw fail("PORTICO_ERR_ADMIN_CONFLICT", `Conflict: ${detail}`);
    throw invalid([{ pointer: pointerOf(path, root), detail }]);
  }
}

/** A whole tenant record checked again (cross-record rules such as per-user providers needing sign-in): 422. */
export function checkTenant(input: unknown): TenantConfig {
  return asProblem(() => validateTenant(input, "tenant"), "tenant", "invalid");
}

/**
 * A provider record checked beyond its schema: placeholders, names, URLs (422), then ids and
 * exposed names against the tenant's other providers (409 naming both).
 */
export function checkProvider(input: unknown, others: readonly ProviderConfig[]): ProviderConfig {
  const provider = asProblem(() => validateProvider(input, "provider"), "provider", "invalid");
  asProblem(() => checkAgainst(provider, "provider", others), "provider", "conflict");
  return provider;
}

/** Identity settings as the API shows them: the OIDC client secret reads {"set": true}. */
export function redactIdentity(identity: TenantIdentity | undefined): Record<string, unknown> {
  if (!identity) return { type: "local" };
  if (identity.type === "oidc") return { ...identity, clientSecret: SET };
  if (identity.type === "external" && identity.login)
    return { ...identity, login: { ...identity.login, clientSecret: SET } };
  return { ...identity };
}

/**
 * Identity input checked beyond its schema (validateIdentity, 422 with a JSON Pointer), with a
 * `{"set": true}` client secret replaced by the stored one under the kept-secret rule
 * (kept-secrets.ts: same issuer, else 422).
 */
export function checkIdentity(
  input: unknown,
  current: TenantIdentity | undefined,
): { identity: TenantIdentity; kept: readonly string[] } {
  const check = (record: unknown) =>
    asProblem(() => validateIdentity(record, "identity"), "identity", "invalid");
  const type = (input as { type?: unknown }).type;
  if (type !== "oidc" && type !== "external") return { identity: check(input), kept: [] };
  const { record, kept } = keepSecrets(input, current, IDENTITY_SECRETS, check);
  return { identity: record, kept };
}
