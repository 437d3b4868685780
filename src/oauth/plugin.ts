// The authorization server's routes (DESIGN.md §1): metadata (RFC 8414, OpenID discovery), JWKS,
// dynamic registration (RFC 7591), the authorization endpoint with its login and consent pages,
// the token endpoint and revocation (RFC 7009). Errors speak RFC 6749: JSON from the token
// endpoint, redirects to a verified redirect URI, pages otherwise.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SCOPES_SUPPORTED } from "../auth/resource-server.js";
import type { TenantRegistry } from "../tenants/registry.js";
import type { AccessTokens } from "./access-tokens.js";
import {
  describeScopes,
  FLOW_TTL_SECONDS,
  parseAuthorization,
  PageError,
  redirectBack,
  RedirectError,
  type Flow,
  type FlowStore,
  type ResolvedClient,
} from "./authorize.js";
import { isClientIdUrl, type ClientMetadataFetcher } from "./client-metadata.js";
import { OAuthClientError, validateRegistration, type ClientStore } from "./clients.js";
import type { GrantStore } from "./grants.js";
import { consentPage, errorPage, loginPage, PAGE_HEADERS } from "./pages.js";
import type { SigningKeys } from "./signing-keys.js";
import { TokenError, type TokenService } from "./token.js";
import type { UserStore } from "./users.js";

export interface OAuthPluginOptions {
  readonly issuer: string;
  readonly registry: TenantRegistry;
  readonly clients: ClientStore;
  readonly clientMetadata: ClientMetadataFetcher;
  readonly users: UserStore;
  readonly grants: GrantStore;
  readonly flows: FlowStore;
  readonly tokens: TokenService;
  readonly accessTokens: AccessTokens;
  readonly signingKeys: SigningKeys;
}

type Form = Record<string, string | string[]>;

function field(form: Form, name: string): string | undefined {
  const v = form[name];
  if (Array.isArray(v)) throw new TokenError("invalid_request", `${name} appears more than once`);
  return v;
}

export async function oauthPlugin(app: FastifyInstance, opts: OAuthPluginOptions): Promise<void> {
  const { issuer, registry, clients, clientMetadata, users, grants, flows, tokens } = opts;
  const secureCookies = issuer.startsWith("https:");
  const cookieName = secureCookies ? "__Host-portico-flow" : "portico-flow";

  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      const prev = form[k];
      form[k] = prev === undefined ? v : [...[prev].flat(), v];
    }
    done(null, form);
  });

  const metadata = {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/oauth/jwks.json`,
    scopes_supported: SCOPES_SUPPORTED,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
  const serveMetadata = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply
      .header("access-control-allow-origin", "*")
      .header("cache-control", "public, max-age=300")
      .send(metadata);
  app.get("/.well-known/oauth-authorization-server", serveMetadata);
  app.get("/.well-known/openid-configuration", serveMetadata);
  app.get("/oauth/jwks.json", async (_req, reply) =>
    reply
      .header("access-control-allow-origin", "*")
      .header("cache-control", "public, max-age=300")
      .send(await opts.signingKeys.jwks()),
  );

  app.post("/oauth/register", async (req, reply) => {
    void reply.header("cache-control", "no-store").header("access-control-allow-origin", "*");
    try {
      return reply.code(201).send(await clients.register(validateRegistration(req.body)));
    } catch (err) {
      if (err instanceof OAuthClientError)
        return reply.code(400).send({ error: err.error, error_description: err.description });
      throw err;
    }
  });

  /** A client by id: registered here, or a Client ID Metadata Document URL. */
  const resolveClient = async (clientId: string): Promise<ResolvedClient | undefined> => {
    if (isClientIdUrl(clientId)) {
      const doc = await clientMetadata.resolve(clientId).catch(() => undefined);
      return doc && { clientId, name: doc.client_name, redirectUris: doc.redirect_uris };
    }
    const record = await clients.get(clientId);
    return (
      record && {
        clientId,
        name: record.metadata.client_name ?? clientId,
        redirectUris: record.metadata.redirect_uris,
      }
    );
  };

  const tenantOf = (resource: string): string | undefined => {
    const prefix = `${issuer}/mcp/`;
    if (!resource.startsWith(prefix)) return undefined;
    const id = resource.slice(prefix.length);
    return registry.get(id)?.config.auth === "oauth" ? id : undefined;
  };
  const oauthTenants = () =>
    registry
      .ids()
      .filter((id) => registry.get(id)?.config.auth === "oauth")
      .sort();

  const page = (
    reply: FastifyReply,
    status: number,
    html: string,
    headers: Record<string, string> = PAGE_HEADERS,
  ) => reply.code(status).headers(headers).send(html);
  const login = (reply: FastifyReply, flow: Flow, extra: { error?: string; username?: string } = {}) =>
    page(
      reply,
      extra.error ? 401 : 200,
      loginPage({
        flow: flow.id,
        csrf: flow.csrf,
        clientName: flow.clientName,
        ...(flow.tenant ? { tenant: flow.tenant } : { tenants: oauthTenants() }),
        ...extra,
      }),
      flowPageHeaders(flow),
    );

  app.get("/oauth/authorize", async (req, reply) => {
    let request: Omit<Flow, "id" | "csrf">;
    try {
      request = await parseAuthorization(req.query as Record<string, unknown>, resolveClient, tenantOf);
    } catch (err) {
      if (err instanceof PageError) return page(reply, 400, errorPage(err.title, err.message));
      if (err instanceof RedirectError) {
        const q = req.query as Record<string, string>;
        const client = await resolveClient(q.client_id!);
        const target = q.redirect_uri ?? client?.redirectUris[0];
        return reply.redirect(
          redirectBack(target!, {
            error: err.error,
            error_description: err.message,
            state: typeof q.state === "string" ? q.state : undefined,
            iss: issuer,
          }),
          302,
        );
      }
      throw err;
    }
    const flow = await flows.create(request);
    const cookie = `${cookieName}=${flow.id}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${FLOW_TTL_SECONDS}${secureCookies ? "; Secure" : ""}`;
    void reply.header("set-cookie", cookie);
    return login(reply, flow);
  });

  const flowOf = async (req: FastifyRequest): Promise<Flow | undefined> => {
    const form = (req.body ?? {}) as Form;
    const cookie = (req.headers.cookie ?? "")
      .split(/; */)
      .find((c) => c.startsWith(`${cookieName}=`))
      ?.slice(cookieName.length + 1);
    return flows.check(form.flow, form.csrf, cookie);
  };
  const expired = (reply: FastifyReply) =>
    page(
      reply,
      400,
      errorPage(
        "Sign-in expired",
        "This sign-in page is no longer valid. Go back to your application and start again.",
      ),
    );

  /** Sends the browser back to the client with a fresh code. */
  const finish = async (reply: FastifyReply, flow: Flow) => {
    const tenant = flow.tenant!;
    const scope = flow.scopes.join(" ");
    const grant = await grants.createGrant({ tenant, client_id: flow.clientId, sub: flow.sub!, scope });
    const code = await grants.issueCode(tenant, {
      grantId: grant.id,
      client_id: flow.clientId,
      redirect_uri: flow.redirectUri,
      code_challenge: flow.codeChallenge,
      scope,
      resource: `${issuer}/mcp/${tenant}`,
    });
    await flows.end(flow);
    return reply.redirect(redirectBack(flow.redirectUri, { code, state: flow.state, iss: issuer }), 303);
  };

  const consentOrFinish = async (reply: FastifyReply, flow: Flow) => {
    const consented = await grants.consented(flow.tenant!, flow.sub!, flow.clientId);
    if (flow.scopes.every((s) => consented.includes(s))) return finish(reply, flow);
    return page(
      reply,
      200,
      consentPage({
        flow: flow.id,
        csrf: flow.csrf,
        clientName: flow.clientName,
        clientId: flow.clientId,
        redirectUri: flow.redirectUri,
        tenant: flow.tenant!,
        user: flow.username ?? flow.sub!,
        scopes: describeScopes(flow.scopes),
      }),
      flowPageHeaders(flow),
    );
  };

  app.post("/oauth/login", async (req, reply) => {
    let flow = await flowOf(req);
    if (!flow) return expired(reply);
    const form = req.body as Form;
    const chosen = typeof form.tenant === "string" ? form.tenant : undefined;
    if (!flow.tenant) {
      if (!chosen || registry.get(chosen)?.config.auth !== "oauth")
        return login(reply, flow, { error: "Choose a tenant." });
      flow = { ...flow, tenant: chosen };
    }
    const username = typeof form.username === "string" ? form.username : "";
    const password = typeof form.password === "string" ? form.password : "";
    const user = username && password ? await users.verify(flow.tenant!, username, password) : undefined;
    if (!user) return login(reply, flow, { error: "Wrong username or password.", username });
    flow = { ...flow, sub: user.sub, username: user.username };
    await flows.update(flow);
    return consentOrFinish(reply, flow);
  });

  app.post("/oauth/consent", async (req, reply) => {
    const flow = await flowOf(req);
    if (!flow?.sub || !flow.tenant) return expired(reply);
    const decision = (req.body as Form).decision;
    if (decision !== "allow") {
      await flows.end(flow);
      return reply.redirect(
        redirectBack(flow.redirectUri, {
          error: "access_denied",
          error_description: "the user denied access",
          state: flow.state,
          iss: issuer,
        }),
        303,
      );
    }
    await grants.rememberConsent(flow.tenant, flow.sub, flow.clientId, flow.scopes);
    return finish(reply, flow);
  });

  /** RFC 6749 §2.3.1: client_secret_basic, client_secret_post, or none. */
  const authenticateClient = async (req: FastifyRequest, form: Form) => {
    const basic = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(req.headers.authorization ?? "");
    if (basic) {
      const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon < 0) throw new TokenError("invalid_client", "malformed Basic credentials", 401);
      const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
      const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "));
      if (field(form, "client_id") !== undefined && field(form, "client_id") !== id)
        throw new TokenError("invalid_client", "client_id differs from the Basic credentials", 401);
      await authenticateRegistered(id, secret, "client_secret_basic");
      return id;
    }
    const id = field(form, "client_id");
    if (!id) throw new TokenError("invalid_client", "client authentication is required", 401);
    const secret = field(form, "client_secret");
    if (isClientIdUrl(id)) {
      if (secret !== undefined)
        throw new TokenError("invalid_client", "metadata-document clients are public", 401);
      return id;
    }
    await authenticateRegistered(id, secret, secret === undefined ? "none" : "client_secret_post");
    return id;
  };
  const authenticateRegistered = async (
    id: string,
    secret: string | undefined,
    method: "none" | "client_secret_basic" | "client_secret_post",
  ) => {
    try {
      await clients.authenticate(id, secret, method);
    } catch (err) {
      if (err instanceof OAuthClientError)
        throw new TokenError("invalid_client", "client authentication failed", 401);
      throw err;
    }
  };

  const tokenErrors = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof TokenError)) throw err;
    if (err.status === 401) void reply.header("www-authenticate", 'Basic realm="portico"');
    return reply.code(err.status).send({ error: err.error, error_description: err.message });
  };

  app.post("/oauth/token", async (req, reply) => {
    void reply
      .header("cache-control", "no-store")
      .header("pragma", "no-cache")
      .header("access-control-allow-origin", "*");
    try {
      const form = (req.body ?? {}) as Form;
      if (typeof req.body !== "object" || req.body === null)
        throw new TokenError("invalid_request", "send an application/x-www-form-urlencoded body");
      const clientId = await authenticateClient(req, form);
      const params = Object.fromEntries(Object.keys(form).map((k) => [k, field(form, k)!]));
      switch (params.grant_type) {
        case "authorization_code":
          return reply.send(await tokens.exchangeCode(clientId, params));
        case "refresh_token":
          return reply.send(await tokens.refresh(clientId, params));
        default:
          throw new TokenError(
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
          );
      }
    } catch (err) {
      return tokenErrors(reply, err);
    }
  });

  app.post("/oauth/revoke", async (req, reply) => {
    void reply.header("cache-control", "no-store").header("access-control-allow-origin", "*");
    try {
      const form = (req.body ?? {}) as Form;
      const clientId = await authenticateClient(req, form);
      const token = field(form, "token");
      if (!token) throw new TokenError("invalid_request", "token is required");
      await tokens.revoke(clientId, token);
      return reply.code(200).send();
    } catch (err) {
      return tokenErrors(reply, err);
    }
  });
}

/**
 * The headers of a flow's login and consent pages. Chromium applies CSP form-action to each
 * redirect that follows a form submission, so with `form-action 'self'` alone the browser stops
 * at the 303 back to the client: the client's redirect URI is allowed as a form target as well.
 */
function flowPageHeaders(flow: Flow): Record<string, string> {
  const target = formActionSource(flow.redirectUri);
  if (!target) return PAGE_HEADERS;
  const csp = PAGE_HEADERS["content-security-policy"];
  return {
    ...PAGE_HEADERS,
    "content-security-policy": csp.replace("form-action 'self'", `form-action 'self' ${target}`),
  };
}

/**
 * A CSP source expression for a redirect URI: its origin, when its host can be written as a CSP
 * host (letters, digits, dots and dashes: not an IPv6 literal), else its scheme alone.
 */
function formActionSource(uri: string): string | undefined {
  const url = URL.canParse(uri) ? new URL(uri) : undefined;
  if (!url) return undefined;
  const web = url.protocol === "https:" || url.protocol === "http:";
  if (web && /^[A-Za-z0-9.-]+$/.test(url.hostname)) return url.origin;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}
