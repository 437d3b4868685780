// The resource server in front of /mcp/{tenant} (MCP authorization; RFC 6750, RFC 9728, RFC 8707):
// every request of an "oauth" tenant carries a bearer token issued for exactly that tenant's MCP
// URL, by Portico or by the tenant's external authorization server; failures get 401 (or 403 for a
// missing scope) with a challenge naming the metadata URL.
import { fail } from "../protocol/errors.js";
import type { Metrics } from "../metrics/metrics.js";
import type { TenantRuntime } from "../tenants/runtime.js";
import type { Authenticated } from "../policy/caller.js";

/** What a verified access token says. */
export interface TokenClaims {
  readonly sub: string;
  readonly client_id: string;
  readonly scope: string;
  /** The user's groups and roles, when the token carries them (docs/policy.md "Groups and roles"). */
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  /** A local user's username, when the token names it. */
  readonly username?: string;
}

/** Checks a token's signature, issuer, audience, lifetime and revocation; throws when it fails. */
export interface TokenVerifier {
  verify(token: string, audience: string): Promise<TokenClaims>;
}

export const SCOPES = {
  read: "mcp:read",
  tools: "mcp:tools",
  offline: "offline_access",
} as const;

/** RFC 6749 §3.3 scope-token: 1*( %x21 / %x23-5B / %x5D-7E ), and short. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;

/** Every scope the authorization server knows (its metadata), least privilege first. */
export const SCOPES_SUPPORTED = [SCOPES.read, SCOPES.tools, SCOPES.offline];

/**
 * The scopes of the MCP endpoint itself (Protected Resource Metadata, WWW-Authenticate): without
 * offline_access, which is no resource requirement (MCP 2026-07-28 authorization, "Refresh Tokens").
 */
export const RESOURCE_SCOPES: readonly string[] = [SCOPES.read, SCOPES.tools];

/** The scope an MCP method needs: calling tools acts; everything else reads. */
export function scopeFor(method: string): string {
  return method === "tools/call" ? SCOPES.tools : SCOPES.read;
}

/** Whether granted scopes cover a needed one: mcp:tools implies mcp:read (a broad scope implies narrower ones). */
export function covers(granted: readonly string[], needed: string): boolean {
  return granted.includes(needed) || (needed === SCOPES.read && granted.includes(SCOPES.tools));
}

/** Who asks, as sessions record it: a session is bound to its user and its client. */
export function principalOf(claims: TokenClaims): string {
  return `${claims.sub} via ${claims.client_id}`;
}

/**
 * A virtual server of a tenant (docs/architecture.md §8): a protected resource of its own at
 * `/mcp/{tenant}/{server}`, whose tokens name that URL and carry its scopes besides the standard ones.
 */
export interface ServerResource {
  readonly tenant: string;
  readonly server: string;
  readonly scopes?: readonly string[] | undefined;
}

/** What a request is to: a tenant's MCP URL (its id) or one of its virtual servers'. */
export type ProtectedResource = string | ServerResource;

/** The protected resource a runtime is: its tenant's URL, or its virtual server's (§8). */
export function protectedResource(tenant: TenantRuntime): ProtectedResource {
  const { server } = tenant;
  return server ? { tenant: tenant.config.id, server: server.id, scopes: server.scopes } : tenant.config.id;
}

/** The path of a protected resource below `/mcp/`. */
export function resourcePath(target: ProtectedResource): string {
  return typeof target === "string" ? target : `${target.tenant}/${target.server}`;
}

function tenantOf(target: ProtectedResource): string {
  return typeof target === "string" ? target : target.tenant;
}

/** The scopes a resource names: the standard ones, and a server's own. */
function scopesOf(target: ProtectedResource): readonly string[] {
  return typeof target === "string" || !target.scopes?.length
    ? RESOURCE_SCOPES
    : [...RESOURCE_SCOPES, ...target.scopes];
}

/** The verifier of a tenant's tokens (Portico's own, or its external server's); in memory, no I/O. */
export type VerifierFor = (tenant: string) => TokenVerifier;

/**
 * Whether a request's path ends with "/" (`/mcp/acme/`, `/mcp/acme/?x`): the client named the
 * resource with a trailing slash, and RFC 9728 §3.3 has it compare the metadata's `resource` to
 * that URL exactly (VS Code does). No allocation: it runs on every /mcp request.
 */
export function pathEndsWithSlash(url: string): boolean {
  const query = url.indexOf("?");
  const end = query === -1 ? url.length : query;
  return end > 1 && url.charCodeAt(end - 1) === 47;
}

/**
 * Whether `presented` names the tenant resource `canonical` (the MCP URL without a trailing slash):
 * equal, or equal but for one trailing slash. Clients that build URLs with the URL API, or whose
 * user typed a slash, send `…/mcp/acme/` for the same endpoint (docs/oauth.md#client-quirks).
 */
export function sameResource(presented: string, canonical: string): boolean {
  return (
    presented === canonical ||
    (presented.length === canonical.length + 1 &&
      presented.charCodeAt(canonical.length) === 47 &&
      presented.startsWith(canonical))
  );
}

export class ResourceServer {
  readonly #verifierFor: VerifierFor;

  constructor(
    private readonly publicUrl: string,
    verifier: TokenVerifier | VerifierFor,
    private readonly metrics?: Metrics,
  ) {
    this.#verifierFor = typeof verifier === "function" ? verifier : () => verifier;
  }

  /**
   * The tenant's MCP URL: the audience its tokens name. `slash`: as a client wrote it with a
   * trailing slash; tokens for either spelling count on both (sameResource).
   */
  resource(target: ProtectedResource, slash = false): string {
    return `${this.publicUrl}/mcp/${resourcePath(target)}${slash ? "/" : ""}`;
  }

  /** RFC 9728 path-based metadata URL of the tenant's MCP endpoint (of `resource(tenant, slash)`). */
  metadataUrl(target: ProtectedResource, slash = false): string {
    return `${this.publicUrl}/.well-known/oauth-protected-resource/mcp/${resourcePath(target)}${slash ? "/" : ""}`;
  }

  /**
   * The Protected Resource Metadata document (RFC 9728 §2), naming the server whose tokens count.
   * Its `resource` is the URL the client used, trailing slash and all (RFC 9728 §3.3).
   */
  metadata(target: ProtectedResource, authorizationServer: string, slash = false, name?: string) {
    return {
      resource: this.resource(target, slash),
      authorization_servers: [authorizationServer],
      scopes_supported: scopesOf(target),
      bearer_methods_supported: ["header"],
      resource_name: `Portico · ${name ?? resourcePath(target)}`,
    };
  }

  /**
   * The caller of a request to an "oauth" tenant. Tokens only in the Authorization header
   * (never the query string); anything missing, malformed or failing verification is 401.
   * `slash`: the request's path ended with "/", so challenges name the metadata of that URL.
   */
  async authenticate(
    tenant: ProtectedResource,
    authorization: string | undefined,
    slash = false,
  ): Promise<Authenticated> {
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? "");
    if (!match) {
      // No credentials at all is how a client learns where to get a token (RFC 6750 §3.1): no event.
      if (authorization !== undefined) this.metrics?.oauthEvent("failure", "invalid_token");
      throw this.#unauthorized(tenant, slash, authorization !== undefined, "a bearer token is required");
    }
    let claims: TokenClaims;
    try {
      claims = await this.#verifierFor(tenantOf(tenant)).verify(match[1]!, this.resource(tenant));
    } catch {
      // The reason stays in the verifier's logs; the wire says only that the token is not good here.
      this.metrics?.oauthEvent("failure", "invalid_token");
      throw this.#unauthorized(
        tenant,
        slash,
        true,
        "the access token is invalid, expired, or not for this server",
      );
    }
    return {
      principal: principalOf(claims),
      user: claims.sub,
      clientId: claims.client_id,
      scopes: claims.scope.split(" ").filter(Boolean),
      ...(claims.groups !== undefined && claims.groups.length > 0 && { groups: claims.groups }),
      ...(claims.roles !== undefined && claims.roles.length > 0 && { roles: claims.roles }),
      ...(claims.username !== undefined && { username: claims.username }),
      ...(slash && { trailingSlash: true as const }),
    };
  }

  /**
   * Throws 403 with an insufficient_scope step-up challenge when the scopes do not cover `needed`,
   * or miss one of a virtual server's own scopes.
   */
  requireScope(tenant: ProtectedResource, caller: Authenticated, needed: string): void {
    const own =
      typeof tenant === "string" ? undefined : tenant.scopes?.find((s) => !caller.scopes.includes(s));
    if (own === undefined && covers(caller.scopes, needed)) return;
    this.metrics?.oauthEvent("failure", "insufficient_scope");
    if (own !== undefined) needed = own;
    // RFC 6750 §3: the challenge's scope is granted scopes plus the needed one, each a scope-token
    // (RFC 6749 §3.3): an external server's token may carry anything, and a quote or line break
    // would break the header (or the response).
    const scope = [...new Set([...caller.scopes, needed])]
      .filter((s) => s !== SCOPES.offline && SCOPE_TOKEN.test(s))
      .join(" ");
    throw fail("PORTICO_ERR_MCP_INSUFFICIENT_SCOPE", `Forbidden: this needs the "${needed}" scope`, {
      challenge: `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${this.metadataUrl(tenant, caller.trailingSlash)}", error_description="this needs the ${needed} scope"`,
    });
  }

  #unauthorized(tenant: ProtectedResource, slash: boolean, presented: boolean, description: string) {
    const params = [
      ...(presented ? [`error="invalid_token"`, `error_description="${description}"`] : []),
      `resource_metadata="${this.metadataUrl(tenant, slash)}"`,
      `scope="${scopesOf(tenant).join(" ")}"`,
    ];
    return fail("PORTICO_ERR_MCP_UNAUTHORIZED", `Unauthorized: ${description}`, {
      challenge: `Bearer ${params.join(", ")}`,
    });
  }
}
