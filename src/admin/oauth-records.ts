// How a tenant's OAuth records look on the admin API (grants and clients without their token
// lists or secret hashes), revoking grants with their access tokens, and RFC 7591 registration
// errors reported with JSON Pointers.
import { OAuthClientError, registrationResponse, type ClientRecord } from "../oauth/clients.js";
import type { Grant } from "../oauth/grants.js";
import type { TenantRecord } from "../tenants/tenant-store.js";
import { CLIENT_METADATA_MEMBERS } from "./openapi/oauth-schemas.js";
import { invalid } from "./openapi/validator.js";
import type { AdminDeps } from "./routes/deps.js";

/** A grant as the API shows it: no token ids, no tenant (the path names it). */
export function grantView(grant: Grant) {
  const { id, client_id, sub, scope, createdAt, revokedAt } = grant;
  return { id, client_id, sub, scope, createdAt, ...(revokedAt !== undefined ? { revokedAt } : {}) };
}

/** The tenant's grants (deleting a tenant forgets them, so every one is this tenant's). */
export async function tenantGrants(deps: AdminDeps, tenant: TenantRecord): Promise<Grant[]> {
  return deps.oauth.grants.grants(tenant.config.id);
}

/** Revokes each live grant (and its access tokens, on every replica); the ones it revoked. */
export async function revokeGrants(
  deps: AdminDeps,
  tenant: string,
  grants: readonly Grant[],
): Promise<Grant[]> {
  const live = grants.filter((g) => g.revokedAt === undefined);
  await Promise.all(live.map((g) => deps.oauth.tokens.revokeGrant(tenant, g.id)));
  return live;
}

/**
 * A client as the API shows it: its RFC 7591 §3.2.1 information without the secret, whether it
 * was pre-registered for this tenant, how many live grants it holds here, when it last obtained a
 * token and when its registration expires unless used. A client known only by its id (a Client ID
 * Metadata Document URL) has no stored metadata.
 */
export function clientView(
  clientId: string,
  record: ClientRecord | undefined,
  preRegistered: boolean,
  grants: number,
) {
  if (!record) return { client_id: clientId, preRegistered, grants };
  return {
    ...registrationResponse(record),
    preRegistered,
    grants,
    ...(record.lastUsedAt !== undefined && { lastUsedAt: isoOf(record.lastUsedAt) }),
    ...(record.expiresAt !== undefined && { expiresAt: isoOf(record.expiresAt) }),
  };
}

const isoOf = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

/** A validateRegistration failure as a 422 naming the member: "redirect_uris[1] must …" → /redirect_uris/1. */
export function registrationProblem(err: unknown): unknown {
  if (!(err instanceof OAuthClientError)) return err;
  const text = err.description;
  const head = /^([a-z_]+)(?:\[(\d+)\])? (.*)$/.exec(text);
  if (head && CLIENT_METADATA_MEMBERS.includes(head[1]!)) {
    const pointer = `/${head[1]}${head[2] === undefined ? "" : `/${head[2]}`}`;
    return invalid([{ pointer, detail: head[3]! }]);
  }
  const named = CLIENT_METADATA_MEMBERS.find((m) => new RegExp(`\\b${m}\\b`).test(text));
  return invalid([{ pointer: named ? `/${named}` : "", detail: text }]);
}
