// Assembles the authorization server and the resource server from the configuration: signing
// keys, token issuing and verification, clients, users, grants and pending sign-ins.
import type { Config } from "../config/env.js";
import { ResourceServer } from "../auth/resource-server.js";
import type { Secrets } from "../secrets.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { AccessTokens } from "./access-tokens.js";
import { FlowStore } from "./authorize.js";
import { ClientMetadataFetcher } from "./client-metadata.js";
import { ClientStore } from "./clients.js";
import { GrantStore } from "./grants.js";
import type { OAuthPluginOptions } from "./plugin.js";
import { SigningKeys } from "./signing-keys.js";
import { TokenService } from "./token.js";
import { UserStore } from "./users.js";

export interface OAuthSurfaceDeps {
  readonly config: Config;
  readonly store: Store;
  readonly keys: Keys;
  readonly secrets: Secrets;
  readonly registry: TenantRegistry;
}

export interface OAuthSurface {
  readonly plugin: OAuthPluginOptions;
  readonly resourceServer: ResourceServer;
  readonly users: UserStore;
  readonly clients: ClientStore;
  readonly grants: GrantStore;
  readonly tokens: TokenService;
}

export async function oauthSurface(deps: OAuthSurfaceDeps): Promise<OAuthSurface> {
  const { config, store, keys, secrets, registry } = deps;
  const issuer = config.publicUrl;
  const lifetime = config.accessTokenTtlSeconds;
  const signingKeys = new SigningKeys(store, keys, secrets, {
    retireAfterSeconds: Math.max(86_400, lifetime + 60),
  });
  // Fails fast when the stored keys were sealed under another PORTICO_SECRET_KEY.
  await signingKeys.current();
  const accessTokens = new AccessTokens(signingKeys, issuer, { lifetimeSeconds: lifetime });
  const clients = new ClientStore(store, keys);
  const users = new UserStore(store, keys);
  const grants = new GrantStore(store, keys);
  const tokens = new TokenService(grants, accessTokens);
  return {
    resourceServer: new ResourceServer(issuer, accessTokens),
    users,
    clients,
    grants,
    tokens,
    plugin: {
      issuer,
      registry,
      clients,
      clientMetadata: new ClientMetadataFetcher({ allowCidrs: config.clientMetadataAllowCidrs }),
      users,
      grants,
      flows: new FlowStore(store, keys),
      tokens,
      accessTokens,
      signingKeys,
    },
  };
}
