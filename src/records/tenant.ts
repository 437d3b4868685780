// Provider and tenant records as configured (bootstrap file now, admin API later), and the
// naming rules they share. validate.ts checks them: a record that passes validateTenant() is safe
// to build providers from.
import type { VirtualServerConfig } from "./server.js";
import type { TenantPolicy } from "./policy.js";

export interface ProviderConfigBase {
  /** Slug, unique within the tenant. */
  readonly id: string;
  /** Name prefix for this provider's tools and prompts; "" or absent for none. */
  readonly prefix?: string;
  /** Between prefix and name; default "__". */
  readonly separator?: string;
}

export interface StaticPromptArgument {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
  /** Completion values offered for this argument. */
  readonly values?: readonly string[];
}

export interface StaticPromptMessage {
  readonly role: "user" | "assistant";
  /** Text with {{argument}} placeholders. */
  readonly text: string;
}

export interface StaticPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly StaticPromptArgument[];
  readonly messages: readonly StaticPromptMessage[];
}

export interface StaticResource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Exactly one of text and blob (base64). */
  readonly text?: string;
  readonly blob?: string;
}

export interface StaticResourceTemplate {
  /** RFC 6570 level-1 template, e.g. "docs://pages/{page}". */
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Content with {variable} placeholders, expanded with the values taken from the URI. */
  readonly text: string;
  /** Completion values per template variable. */
  readonly values?: Readonly<Record<string, readonly string[]>>;
}

export interface StaticProviderConfig extends ProviderConfigBase {
  readonly kind: "static";
  readonly prompts?: readonly StaticPrompt[];
  readonly resources?: readonly StaticResource[];
  readonly resourceTemplates?: readonly StaticResourceTemplate[];
}

export interface HttpTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default 30 000. */
  readonly timeoutMs?: number;
}

/** A fixed token sent as `Authorization: Bearer <token>` (RFC 6750 §2.1). */
export interface BearerAuth {
  readonly type: "bearer";
  readonly token: string;
}

/** An access token obtained with the client credentials grant (RFC 6749 §4.4), cached until it expires. */
export interface ClientCredentialsAuth {
  readonly type: "client_credentials";
  /** The authorization server's token endpoint (no discovery). */
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Space-separated scopes requested (RFC 6749 §3.3). */
  readonly scope?: string;
  /** The upstream the token is for (RFC 8707 resource indicator). */
  readonly resource?: string;
  /** How the client authenticates at the token endpoint; default client_secret_basic. */
  readonly authMethod?: "client_secret_basic" | "client_secret_post";
}

/** RFC 8693: Portico's own signed assertion of the user, exchanged at an STS for an upstream token. */
export interface TokenExchangeAuth {
  readonly type: "token_exchange";
  readonly tokenUrl: string;
  /** `audience` and/or `resource` of the requested token. */
  readonly audience?: string;
  readonly resource?: string;
  readonly scope?: string;
  readonly clientId: string;
  /** Write-only, sealed at rest. */
  readonly clientSecret: string;
  readonly authMethod?: "client_secret_basic" | "client_secret_post";
}

/** Each user connects their own account at the upstream (OAuth 2.1 code flow with PKCE S256). */
export interface UserOAuthAuth {
  readonly type: "user_oauth";
  /** The upstream's authorization server; absent: discovered from the upstream's 401 (RFC 9728, then RFC 8414 / OIDC discovery). */
  readonly issuer?: string;
  /** Space-separated scopes to ask for. */
  readonly scope?: string;
  /** How Portico is known to the upstream's AS: a pre-registered client when `clientId` is set, else its Client ID Metadata Document, else RFC 7591 registration. Default "auto": in that order, as the AS supports them (docs/upstream-auth.md). */
  readonly registration?: "auto" | "metadata_document" | "dynamic" | "preregistered";
  readonly clientId?: string;
  /** Write-only, sealed at rest. */
  readonly clientSecret?: string;
}

/** Credentials for an upstream, sent as its Authorization header; never the client's own token. */
export type UpstreamAuth = BearerAuth | ClientCredentialsAuth | TokenExchangeAuth | UserOAuthAuth;

/** The `auth` types whose credential is each user's own (docs/upstream-auth.md): never shared across users. */
export const PER_USER_AUTH: ReadonlySet<string> = new Set(["user_oauth", "token_exchange"]);

/** True when a provider's upstream credential is per user (a connected account or a token exchange). */
export function perUserAuth(cfg: ProviderConfig): boolean {
  return cfg.kind !== "static" && cfg.auth !== undefined && PER_USER_AUTH.has(cfg.auth.type);
}

export interface HttpProviderConfig extends ProviderConfigBase {
  readonly kind: "http";
  readonly tools: readonly HttpTool[];
  /** Credentials sent with every tool's requests. */
  readonly auth?: UpstreamAuth;
}

export interface McpProviderConfig extends ProviderConfigBase {
  readonly kind: "mcp";
  /** Streamable HTTP endpoint of the upstream MCP server. */
  readonly url: string;
  /** Static headers sent upstream (e.g. an API key); never the client's token. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Credentials sent with every upstream request. */
  readonly auth?: UpstreamAuth;
  /** Per-call timeout; default PORTICO_UPSTREAM_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /**
   * Per-user providers only: the user (`sub`) whose tool list is pinned as the reference that
   * users who have not connected see (docs/upstream-auth.md), for upstreams whose lists are the
   * same for every user.
   */
  readonly referenceUser?: string;
  /**
   * Which protocol era Portico speaks to the upstream. "auto" (the default) asks server/discover
   * on every connect and uses 2026-07-28 when the upstream lists it, else the session era;
   * "session" or "stateless" pins one, e.g. for a dual-era upstream whose session side does more.
   */
  readonly era?: UpstreamEra;
}

export type UpstreamEra = "auto" | "session" | "stateless";

export type ProviderConfig = StaticProviderConfig | HttpProviderConfig | McpProviderConfig;

/**
 * How an "oauth" tenant's users are known. "local": users managed through the admin API sign in
 * with a password. "oidc": they sign in at the tenant's own OpenID Connect provider (Portico is
 * its client). "external": the tenant's MCP clients bring tokens from another authorization
 * server, which Portico verifies against its JWKS.
 */
export type TenantIdentity =
  | { readonly type: "local" }
  | {
      readonly type: "oidc";
      readonly issuer: string;
      readonly clientId: string;
      /** Write-only through the admin API; sealed at rest. */
      readonly clientSecret: string;
      readonly scope?: string;
      /** Shown on the login button, e.g. "Acme SSO". */
      readonly label?: string;
      /** The ID token (or userinfo) claim holding the user's groups, e.g. "groups" (docs/policy.md). */
      readonly groupsClaim?: string;
      /** The claim holding the user's roles, e.g. "roles" or "realm_access.roles" (a dotted path). */
      readonly rolesClaim?: string;
    }
  | {
      readonly type: "external";
      readonly issuer: string;
      readonly jwksUrl: string;
      readonly audience?: string;
      /** The access token claim holding the user's groups (docs/policy.md). */
      readonly groupsClaim?: string;
      /** The access token claim holding the user's roles (a dotted path reaches into objects). */
      readonly rolesClaim?: string;
      /**
       * Portico's client at that issuer, to sign users in with OpenID Connect on the connect and
       * accounts pages (docs/upstream-auth.md); required for per-user providers. Secret write-only, sealed.
       */
      readonly login?: { readonly clientId: string; readonly clientSecret: string };
    };

/**
 * Rate limits and session caps of a tenant's MCP endpoint, counted across every replica. An
 * absent member takes the server default (PORTICO_RATE_LIMIT_*, PORTICO_MAX_SESSIONS_*); 0 means
 * no limit.
 */
export interface TenantLimits {
  /** Requests to /mcp/{tenant} per minute, all clients together. */
  readonly requestsPerMinute?: number;
  /** Requests per minute of one client: a user (whatever the OAuth client) when authenticated, else its IP. */
  readonly perClientRequestsPerMinute?: number;
  /** Live sessions one principal may hold. */
  readonly sessionsPerPrincipal?: number;
  /** Live sessions one client address may hold when the tenant has no authentication. */
  readonly sessionsPerAddress?: number;
}

/** The largest session cap a tenant may set. */
export const MAX_SESSIONS = 10_000_000;

/** The largest per-minute limit a tenant may set. */
export const MAX_REQUESTS_PER_MINUTE = 100_000_000;

export interface TenantConfig {
  /** Slug `^[a-z0-9][a-z0-9-]{0,62}$`; the MCP URL is /mcp/{id}. */
  readonly id: string;
  /** "none" serves without authentication (demos, conformance); "oauth" arrives with OAuth. */
  readonly auth: "none" | "oauth";
  readonly name?: string;
  /** Absent: local users. */
  readonly identity?: TenantIdentity;
  /** Absent: the PORTICO_RATE_LIMIT_* defaults. */
  readonly limits?: TenantLimits;
  readonly providers: readonly ProviderConfig[];
  /** Virtual servers at /mcp/{id}/{server}: selections of the providers' entries (server.ts). */
  readonly servers?: readonly VirtualServerConfig[];
  /** Who may list and use which entries (docs/policy.md); absent: everyone, everything. */
  readonly policy?: TenantPolicy;
}

export const DEFAULT_SEPARATOR = "__";
/** A provider's `prefix` and `separator`. */
export const PREFIX = /^[A-Za-z0-9_.-]{0,32}$/;
export const SEPARATOR = /^[A-Za-z0-9_.-]{0,8}$/;

/** The name a client sees for a provider's tool or prompt. */
export function exposedName(provider: ProviderConfigBase, name: string): string {
  return provider.prefix ? `${provider.prefix}${provider.separator ?? DEFAULT_SEPARATOR}${name}` : name;
}
