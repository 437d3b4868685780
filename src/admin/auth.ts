// Who is calling the admin API: the platform key (PORTICO_ADMIN_TOKEN), a platform API key, or a
// tenant API key. Anything else is 401 with a Bearer challenge (RFC 6750).
import { fail } from "../protocol/errors.js";
import { bearerOf, secretMatcher } from "../crypto/secrets.js";
import type { ApiKeyStore } from "./api-keys.js";

export interface AdminPrincipal {
  /** The tenant a tenant key is scoped to; null for platform keys. */
  readonly tenant: string | null;
  /** Who, for the audit log. */
  readonly actor: string;
}

const REASONS = {
  unknown: "The key is not known",
  revoked: "The key was revoked",
  expired: "The key has expired",
} as const;

export class AdminAuth {
  readonly #isPlatform: (token: string) => boolean;

  constructor(
    platformToken: string,
    private readonly keys: ApiKeyStore,
  ) {
    this.#isPlatform = secretMatcher(platformToken);
  }

  /** The principal of an Authorization header; throws 401 otherwise. */
  async authenticate(header: string | undefined): Promise<AdminPrincipal> {
    const token = bearerOf(header);
    if (token === undefined) {
      const detail = header
        ? "Malformed Authorization header: send `Authorization: Bearer <key>`"
        : "Authentication required: send `Authorization: Bearer <key>` with the platform key or an API key";
      throw fail("PORTICO_ERR_ADMIN_UNAUTHENTICATED", detail, { presented: header !== undefined });
    }
    if (this.#isPlatform(token)) return { tenant: null, actor: "platform token" };
    const verdict = await this.keys.verify(token);
    if (!verdict.ok)
      throw fail("PORTICO_ERR_ADMIN_UNAUTHENTICATED", REASONS[verdict.reason], { presented: true });
    const { key } = verdict;
    return { tenant: key.tenant, actor: `api-key:${key.id} (${key.name})` };
  }
}
