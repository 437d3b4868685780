// The sign-in half of the authorization server: the authorization endpoint (OAuth 2.1 §4.1.1) and
// the pages behind it — login (a local password, or federated at the tenant's OpenID provider with
// its callback, federation.ts) and consent — ending in a redirect back to the verified client.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import type { Metrics } from "../metrics/metrics.js";
import type { TenantRegistry } from "../tenants/registry.js";
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
  type ResourceTarget,
} from "./authorize.js";
import type { ClientMetadataFetcher } from "./client-metadata.js";
import type { ClientStore } from "./clients.js";
import { FederationError, type Federation, type OidcIdentity } from "./federation.js";
import type { GrantStore } from "./grants.js";
import type { LoginThrottle } from "./login-throttle.js";
import { consentPage, errorPage, loginPage, pageHeaders } from "./pages.js";
import type { LimitedEndpoint } from "./rate-limit.js";
import type { UserStore } from "./users.js";

export interface SignInDeps {
  readonly issuer: string;
  readonly registry: TenantRegistry;
  readonly clients: ClientStore;
  readonly clientMetadata: ClientMetadataFetcher;
  readonly users: UserStore;
  readonly grants: GrantStore;
  readonly flows: FlowStore;
  readonly federation: Federation;
  /** Back-off on failed logins, checked before the password is hashed. */
  readonly loginThrottle: LoginThrottle;
  /** Per-IP rate limits of the authorization endpoint and the login and consent forms (rate-limit.ts). */
  readonly rateLimit?: (endpoint: LimitedEndpoint) => onRequestAsyncHookHandler | undefined;
  readonly metrics: Metrics;
  /** First-party clients (the connected-accounts pages): signed in without a consent page. */
  readonly trustedClients?: readonly string[];
}

/**
 * The one answer to a login that did not succeed: a wrong username, a wrong password and a
 * back-off in force read the same (and take about as long), so a stranger learns none of them.
 */
export const LOGIN_FAILED =
  "Wrong username or password, or too many attempts: check them and try again in a moment.";

type Form = Record<string, string | string[]>;

/** Tenants this server issues tokens for: "oauth" ones, except those trusting an external server. */
export function servesTenant(registry: TenantRegistry, id: string): boolean {
  const config = registry.get(id)?.config;
  return config?.auth === "oauth" && config.identity?.type !== "external";
}

/**
 * The headers of a flow's login and consent pages. Chromium applies CSP form-action to each
 * redirect that follows a form submission, so with `form-action 'self'` alone the browser stops
 * at the 303 back to the client: the client's redirect URI is allowed as a form target, and on an
 * oidc tenant's login page the provider's authorization endpoint too (with a session there, one
 * submission runs Portico → provider → Portico callback → client).
 */
function flowPageHeaders(targets: readonly string[]): Record<string, string> {
  return pageHeaders([...new Set(targets.map(formActionSource).filter((s) => s !== undefined))]);
}

/**
 * A CSP source expression for a URL: its origin, when its host can be written as a CSP host
 * (letters, digits, dots and dashes: not an IPv6 literal), else its scheme alone.
 */
export function formActionSource(uri: string): string | undefined {
  const url = URL.canParse(uri) ? new URL(uri) : undefined;
  if (!url) return undefined;
  const web = url.protocol === "https:" || url.protocol === "http:";
  if (web && /^[A-Za-z0-9.-]+$/.test(url.hostname)) return url.origin;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}

/** Registers /oauth/authorize, /oauth/login, /oauth/callback and /oauth/consent. */
export function signInRoutes(app: FastifyInstance, deps: SignInDeps): void {
  const { issuer, registry, users, grants, flows, federation, loginThrottle, metrics } = deps;
  const limited = (endpoint: LimitedEndpoint) => {
    const onRequest = deps.rateLimit?.(endpoint);
    return onRequest ? { onRequest } : {};
  };
  const secureCookies = issuer.startsWith("https:");
  const cookieName = secureCookies ? "__Host-portico-flow" : "portico-flow";

  /** A client by id: registered here, or a Client ID Metadata Document URL. */
  const resolveClient = async (clientId: string): Promise<ResolvedClient | undefined> => {
    if (deps.clientMetadata.isClientId(clientId)) {
      const doc = await deps.clientMetadata.resolve(clientId).catch(() => undefined);
      return (
        doc && {
          clientId,
          name: doc.client_name,
          redirectUris: doc.redirect_uris,
          refreshTokens: doc.grant_types.includes("refresh_token"),
        }
      );
    }
    const record = await deps.clients.get(clientId);
    return (
      record && {
        clientId,
        name: record.metadata.client_name ?? clientId,
        redirectUris: record.metadata.redirect_uris,
        refreshTokens: record.metadata.grant_types.includes("refresh_token"),
        ...(record.tenant !== undefined ? { tenant: record.tenant } : {}),
      }
    );
  };

  const servedHere = (id: string) => servesTenant(registry, id);
  const tenantOf = (resource: string): ResourceTarget | undefined => {
    const prefix = `${issuer}/mcp/`;
    if (!resource.startsWith(prefix)) return undefined;
    // `…/mcp/acme/` names the same resource as `…/mcp/acme` (docs/oauth.md#client-quirks).
    const path = resource.slice(prefix.length, resource.endsWith("/") ? -1 : undefined);
    const [id = "", server, ...rest] = path.split("/");
    if (rest.length > 0 || !servedHere(id)) return undefined;
    if (server === undefined) return { tenant: id };
    // A virtual server is a resource of its own (docs/architecture.md §8).
    const scopes = registry.server(id, server)?.server?.scopes;
    if (!registry.server(id, server)) return undefined;
    return scopes ? { tenant: id, server, scopes } : { tenant: id, server };
  };
  const oauthTenants = () => registry.ids().filter(servedHere).sort();
  const oidcOf = (tenant: string | undefined): OidcIdentity | undefined => {
    const identity = tenant === undefined ? undefined : registry.get(tenant)?.config.identity;
    return identity?.type === "oidc" ? identity : undefined;
  };

  /** A page; `formTargets` are where its forms' submissions may end up (flowPageHeaders). */
  const page = (reply: FastifyReply, status: number, html: string, formTargets: readonly string[] = []) =>
    reply.code(status).headers(flowPageHeaders(formTargets)).send(html);
  const login = async (
    reply: FastifyReply,
    flow: Flow,
    extra: { error?: string; username?: string; status?: number } = {},
  ) => {
    const { status = extra.error ? 401 : 200, ...shown } = extra;
    const provider = oidcOf(flow.tenant);
    const targets = [flow.redirectUri];
    if (provider) targets.push((await federation.authorizationEndpoint(provider)) ?? provider.issuer);
    return page(
      reply,
      status,
      loginPage({
        flow: flow.id,
        csrf: flow.csrf,
        clientName: flow.clientName,
        ...(flow.tenant ? { tenant: flow.tenant } : { tenants: oauthTenants() }),
        // Local users may sign in to an oidc tenant too: the page offers both.
        ...(provider && { federated: provider.label ?? new URL(provider.issuer).host }),
        ...shown,
      }),
      targets,
    );
  };

  app.get("/oauth/authorize", limited("authorize"), async (req, reply) => {
    let request: Omit<Flow, "id" | "csrf">;
    try {
      request = await parseAuthorization(req.query as Record<string, unknown>, resolveClient, tenantOf);
    } catch (err) {
      if (err instanceof PageError) {
        metrics.oauthEvent("failure", "invalid_request");
        return page(reply, 400, errorPage(err.title, err.message));
      }
      if (err instanceof RedirectError) {
        metrics.oauthEvent("failure", err.error);
        // The URI parseAuthorization verified, never the raw query (which may be empty or another URI).
        return reply.redirect(
          redirectBack(err.redirectUri, {
            error: err.error,
            error_description: err.message,
            state: err.state,
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

  const cookieOf = (req: FastifyRequest): string | undefined =>
    (req.headers.cookie ?? "")
      .split(/; */)
      .find((c) => c.startsWith(`${cookieName}=`))
      ?.slice(cookieName.length + 1);
  const flowOf = async (req: FastifyRequest): Promise<Flow | undefined> => {
    const form = (req.body ?? {}) as Form;
    return flows.check(form.flow, form.csrf, cookieOf(req));
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
    const grant = await grants.createGrant({
      tenant,
      client_id: flow.clientId,
      sub: flow.sub!,
      scope,
      // A local user's groups and roles are read at each issuance; a federated one's are the claims'.
      ...(flow.federated ? {} : { username: flow.username! }),
      ...(flow.groups?.length && { groups: flow.groups }),
      ...(flow.roles?.length && { roles: flow.roles }),
    });
    const code = await grants.issueCode(tenant, {
      grantId: grant.id,
      client_id: flow.clientId,
      redirect_uri: flow.redirectUri,
      code_challenge: flow.codeChallenge,
      scope,
      resource: `${issuer}/mcp/${tenant}${flow.server === undefined ? "" : `/${flow.server}`}`,
      refresh: flow.refresh,
    });
    await flows.end(flow);
    metrics.oauthEvent("authorization");
    return reply.redirect(redirectBack(flow.redirectUri, { code, state: flow.state, iss: issuer }), 303);
  };

  const consentOrFinish = async (reply: FastifyReply, flow: Flow) => {
    if (deps.trustedClients?.includes(flow.clientId)) return finish(reply, flow);
    const consented = await grants.consented(flow.tenant!, flow.sub!, flow.clientId, flow.server);
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
      [flow.redirectUri],
    );
  };

  /** Sends the browser to the tenant's OpenID provider, the flow remembering state, nonce and verifier. */
  const federate = async (reply: FastifyReply, flow: Flow) => {
    const identity = oidcOf(flow.tenant);
    if (!identity) return login(reply, flow, { error: "This tenant has no single sign-on; use a password." });
    let started: Awaited<ReturnType<Federation["begin"]>>;
    try {
      started = await federation.begin(identity);
    } catch (err) {
      reply.log.warn({ err, tenant: flow.tenant }, "federated sign-in could not start");
      const error = "Single sign-on is unavailable right now. Try again later.";
      return login(reply, flow, { error, status: 502 });
    }
    await flows.update({ ...flow, federation: started.pending });
    return reply.header("cache-control", "no-store").redirect(started.url.toString(), 303);
  };

  app.post("/oauth/login", limited("login"), async (req, reply) => {
    let flow = await flowOf(req);
    if (!flow) return expired(reply);
    const form = req.body as Form;
    const chosen = typeof form.tenant === "string" ? form.tenant : undefined;
    if (!flow.tenant) {
      if (!chosen || !servedHere(chosen)) return login(reply, flow, { error: "Choose a tenant." });
      flow = { ...flow, tenant: chosen };
    }
    if (form.federated === "1") return federate(reply, flow);
    const username = typeof form.username === "string" ? form.username : "";
    const password = typeof form.password === "string" ? form.password : "";
    if (!username || !password) return login(reply, flow, { error: LOGIN_FAILED, username });
    // Before the hash: a refused attempt costs a store round trip, not 32 MiB of scrypt.
    const ticket = await loginThrottle.begin({ tenant: flow.tenant!, username, ip: req.ip });
    if (!ticket.allowed) {
      await loginThrottle.paced();
      return login(reply, flow, { error: LOGIN_FAILED, username });
    }
    const started = performance.now();
    const user = await users.verify(ticket.tenant, username, password);
    loginThrottle.timed(performance.now() - started);
    if (!user) {
      for (const start of await loginThrottle.failed(ticket))
        reply.log.warn(
          { tenant: start.tenant, scope: start.scope, failures: start.failures },
          "login back-off started",
        );
      return login(reply, flow, { error: LOGIN_FAILED, username });
    }
    await loginThrottle.succeeded(ticket);
    flow = {
      ...flow,
      sub: user.sub,
      username: user.username,
      federation: undefined,
      federated: undefined,
      groups: undefined,
      roles: undefined,
    };
    await flows.update(flow);
    return consentOrFinish(reply, flow);
  });

  const signInFailed = (reply: FastifyReply, status: number) =>
    page(
      reply,
      status,
      errorPage(
        "Sign-in failed",
        "Signing in with your organisation's account did not work. Go back to your application and start again.",
      ),
    );

  // OpenID Connect Core §3.1.2.5: the provider's answer. Its state must be the one the browser's
  // flow holds (single-use); until then nothing is redirected to the client.
  app.get("/oauth/callback", async (req, reply) => {
    const callback = new URL(req.url, issuer);
    const state = callback.searchParams.get("state");
    const cookie = cookieOf(req);
    const taken = state && cookie ? await flows.takeFederation(cookie, state) : undefined;
    if (!taken) return signInFailed(reply, 400);
    const { flow, pending } = taken;
    const identity = oidcOf(flow.tenant);
    try {
      if (identity?.issuer !== pending.issuer)
        throw new FederationError("failed", "the tenant's provider changed during the sign-in");
      const user = await federation.complete(identity, pending, callback);
      const signedIn: Flow = {
        ...flow,
        sub: user.sub,
        username: user.username,
        federated: true,
        ...(user.groups && { groups: user.groups }),
        ...(user.roles && { roles: user.roles }),
      };
      await flows.update(signedIn);
      return await consentOrFinish(reply, signedIn);
    } catch (err) {
      if (!(err instanceof FederationError)) throw err;
      reply.log.warn({ err, tenant: flow.tenant }, "federated sign-in failed");
      await flows.end(flow);
      metrics.oauthEvent("failure", err.kind === "failed" ? "server_error" : "access_denied");
      if (err.kind === "failed") return signInFailed(reply, 502);
      // The flow is verified: the client may hear that the user did not sign in (RFC 6749 §4.1.2.1).
      return reply.redirect(
        redirectBack(flow.redirectUri, {
          error: "access_denied",
          error_description: "the sign-in at the identity provider was cancelled or refused",
          state: flow.state,
          iss: issuer,
        }),
        303,
      );
    }
  });

  app.post("/oauth/consent", limited("consent"), async (req, reply) => {
    const flow = await flowOf(req);
    if (!flow?.sub || !flow.tenant) return expired(reply);
    const decision = (req.body as Form).decision;
    if (decision !== "allow") {
      await flows.end(flow);
      metrics.oauthEvent("failure", "access_denied");
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
    await grants.rememberConsent(flow.tenant, flow.sub, flow.clientId, flow.server, flow.scopes);
    return finish(reply, flow);
  });
}
