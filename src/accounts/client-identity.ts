// How Portico is known to an upstream's authorization server (docs/upstream-auth.md "Client
// identity"): the Client ID Metadata Document Portico publishes for itself (MCP 2025-11-25 "Client
// ID Metadata Documents"), an RFC 7591 dynamic registration (stored sealed per tenant, provider
// and issuer), or a client the admin pre-registered.
import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import type { Fetch } from "../egress/fetch.js";
import type { UserOAuthAuth } from "../records/tenant.js";
import type { Secrets } from "../crypto/secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { resealStored, seal, unseal, type ResealTally } from "../tenants/sealed.js";
import { httpOptions, reason } from "./discovery.js";

/** Where Portico's own Client ID Metadata Document lives under the public base URL. */
export const UPSTREAM_CLIENT_PATH = "/oauth/upstream-client";
/** The one redirect URI of every connect flow. */
export const CALLBACK_PATH = "/accounts/callback";

export type ClientMode = "metadata_document" | "dynamic" | "preregistered";

export interface UpstreamClient {
  readonly mode: ClientMode;
  readonly client: oauth.Client;
  readonly auth: oauth.ClientAuth;
}

/** No way to be a client of that server; the message is for logs and the admin. */
export class ClientIdentityError extends Error {
  override readonly name = "ClientIdentityError";
}

interface Registration {
  readonly client_id: string;
  readonly client_secret?: string;
  readonly token_endpoint_auth_method?: string;
}

/** Portico's Client ID Metadata Document: its client_id is its own URL. */
export function upstreamClientDocument(publicUrl: string) {
  return {
    client_id: `${publicUrl}${UPSTREAM_CLIENT_PATH}`,
    client_name: "Portico" as string,
    client_uri: publicUrl,
    redirect_uris: [`${publicUrl}${CALLBACK_PATH}`],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

export class ClientIdentities {
  constructor(
    private readonly deps: {
      readonly store: Store;
      readonly keys: Keys;
      readonly secrets: Secrets;
      readonly fetch: Fetch;
      readonly publicUrl: string;
    },
  ) {}

  /**
   * The client to use at `as` for a provider. "auto": the pre-registered client when the admin set
   * a clientId, else the metadata document when the server supports it, else dynamic registration.
   */
  async clientFor(
    tenant: string,
    provider: string,
    auth: UserOAuthAuth,
    as: oauth.AuthorizationServer,
  ): Promise<UpstreamClient> {
    const mode = auth.registration ?? "auto";
    if (mode === "preregistered" || (mode === "auto" && auth.clientId !== undefined))
      return preregistered(auth);
    const cimd = as.client_id_metadata_document_supported === true;
    if (mode === "metadata_document" || (mode === "auto" && cimd)) {
      const clientId = `${this.deps.publicUrl}${UPSTREAM_CLIENT_PATH}`;
      return { mode: "metadata_document", client: { client_id: clientId }, auth: oauth.None() };
    }
    if (!as.registration_endpoint)
      throw new ClientIdentityError(
        `${as.issuer} supports neither client metadata documents nor dynamic registration: set a pre-registered clientId`,
      );
    const registration = await this.#registered(tenant, provider, as);
    const client: oauth.Client = { client_id: registration.client_id };
    const secret = registration.client_secret;
    if (secret === undefined) return { mode: "dynamic", client, auth: oauth.None() };
    const post = registration.token_endpoint_auth_method === "client_secret_post";
    return {
      mode: "dynamic",
      client,
      auth: post ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret),
    };
  }

  /** Forgets a dynamic registration the server no longer knows (invalid_client). */
  async forget(tenant: string, provider: string, issuer: string): Promise<void> {
    const digest = issuerDigest(issuer);
    await this.deps.store.del(this.deps.keys.accountRegistration(tenant, provider, digest));
    await this.deps.store.setRemove(this.deps.keys.accountRegistrations(tenant, provider), digest);
  }

  /** Forgets every registration of a provider that is deleted. */
  async forgetAll(tenant: string, provider: string): Promise<void> {
    const { store, keys } = this.deps;
    const index = keys.accountRegistrations(tenant, provider);
    const digests = await store.setMembers(index);
    await store.del(...digests.map((d) => keys.accountRegistration(tenant, provider, d)), index);
  }

  /** Seals every registration of a provider again under the current key (a key rotation). */
  async reseal(tenant: string, provider: string, tally: ResealTally): Promise<void> {
    const { store, keys, secrets } = this.deps;
    for (const digest of await store.setMembers(keys.accountRegistrations(tenant, provider))) {
      const key = keys.accountRegistration(tenant, provider, digest);
      await resealStored(store, key, secrets, "accounts", tally, () => ({
        tenant,
        pointer: `/registrations/${provider}/${digest}`,
      }));
    }
  }

  async #registered(tenant: string, provider: string, as: oauth.AuthorizationServer): Promise<Registration> {
    const { store, secrets } = this.deps;
    const key = this.deps.keys.accountRegistration(tenant, provider, issuerDigest(as.issuer));
    const stored = await store.get(key);
    if (stored !== null) return JSON.parse(unseal(secrets, stored, "accounts")) as Registration;
    const metadata = upstreamClientDocument(this.deps.publicUrl);
    let registration: Registration;
    try {
      const response = await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: metadata.client_name,
          redirect_uris: metadata.redirect_uris,
          grant_types: metadata.grant_types,
          response_types: metadata.response_types,
          token_endpoint_auth_method: "client_secret_basic",
        },
        httpOptions(this.deps.fetch, as.registration_endpoint!),
      );
      registration = await oauth.processDynamicClientRegistrationResponse(response);
    } catch (err) {
      throw new ClientIdentityError(`dynamic registration at ${as.issuer} failed: ${reason(err)}`);
    }
    const kept: Registration = {
      client_id: registration.client_id,
      ...(typeof registration.client_secret === "string" && { client_secret: registration.client_secret }),
      ...(registration.token_endpoint_auth_method && {
        token_endpoint_auth_method: registration.token_endpoint_auth_method,
      }),
    };
    // Two replicas registering at once: the first stored wins, the other's registration is unused.
    await store.set(key, seal(secrets, JSON.stringify(kept), "accounts"), { onlyIfAbsent: true });
    // Indexed, so that a key rotation reseals it and a deleted provider's go with it.
    await store.setAdd(this.deps.keys.accountRegistrations(tenant, provider), issuerDigest(as.issuer));
    const winner = await store.get(key);
    return winner === null ? kept : (JSON.parse(unseal(secrets, winner, "accounts")) as Registration);
  }
}

/** An issuer as it appears in keys: a digest, so any issuer URL makes a safe key. */
function issuerDigest(issuer: string): string {
  return createHash("sha256").update(issuer).digest("base64url").slice(0, 22);
}

function preregistered(auth: UserOAuthAuth): UpstreamClient {
  if (auth.clientId === undefined)
    throw new ClientIdentityError('"registration": "preregistered" needs a clientId');
  const client: oauth.Client = { client_id: auth.clientId };
  const secret = auth.clientSecret;
  return {
    mode: "preregistered",
    client,
    auth: secret === undefined ? oauth.None() : oauth.ClientSecretBasic(secret),
  };
}
