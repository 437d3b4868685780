// Where each per-user `auth.type` gets its credentials (docs/upstream-auth.md): the sources app.ts
// builds, handed to the providers' factory as one lookup. "token_exchange": Portico's own source;
// "user_oauth": the connected-accounts layer's, when given.
import type { Fetch } from "../egress/fetch.js";
import type { TenantConfig } from "../records/tenant.js";
import { TokenExchangeSource, tokenExchangeOf, type AssertionSigner } from "./token-exchange.js";
import type { UserTokenSource } from "../providers/user-tokens.js";

export interface UserSourcesOptions {
  /** Signs Portico's assertions of users (its OAuth issuer and signing keys). */
  readonly signer: AssertionSigner;
  /** The providers' egress fetch, redirects kept to the same origin. */
  readonly fetch: Fetch;
  /** A tenant's record as this replica has it. */
  readonly tenant: (id: string) => TenantConfig | undefined;
  /** Sources by `auth.type` taking precedence (connected accounts; tests). */
  readonly given?: Readonly<Record<string, UserTokenSource>>;
}

/** The source of an `auth.type`, undefined when none serves it. */
export function userTokenSources(
  opts: UserSourcesOptions,
): (authType: string) => UserTokenSource | undefined {
  const sources: Record<string, UserTokenSource> = {
    token_exchange: new TokenExchangeSource({
      signer: opts.signer,
      fetch: opts.fetch,
      authOf: (tenant, provider) => tokenExchangeOf(opts.tenant(tenant), provider),
    }),
    ...opts.given,
  };
  return (authType) => (Object.hasOwn(sources, authType) ? sources[authType] : undefined);
}
