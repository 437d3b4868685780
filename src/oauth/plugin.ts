// The authorization server's routes (docs/architecture.md §1): metadata (RFC 8414, OpenID discovery), JWKS,
// dynamic registration (RFC 7591), the authorization endpoint with its login and consent pages
// (sign-in.ts), the token endpoint and revocation (RFC 7009). Errors speak RFC 6749: JSON from the
// token endpoint, redirects to a verified redirect URI, pages otherwise.
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
} from "fastify";
import { SCOPES_SUPPORTED } from "../auth/resource-server.js";
import { excerpt } from "../protocol/errors.js";
import type { Metrics } from "../metrics/metrics.js";
import type { TenantRegistry } from "../tenants/registry.js";
import type { AccessTokens } from "./access-tokens.js";
import type { FlowStore } from "./authorize.js";
import type { ClientMetadataFetcher } from "./client-metadata.js";
import { CONNECT_CLIENT_PATH, connectClientDocument } from "./connect-client.js";
import { OAuthClientError, validateRegistration, type ClientRecord, type ClientStore } from "./clients.js";
import type { RegistrationBudget } from "./registration-budget.js";
import type { Federation } from "./federation.js";
import { tenantOfSecret, type GrantStore } from "./grants.js";
import type { LoginThrottle } from "./login-throttle.js";
import type { LimitedEndpoint } from "./rate-limit.js";
import { servesTenant, signInRoutes } from "./sign-in.js";
import type { SigningKeys } from "./signing-keys.js";
import { TokenError, type RefreshPermission, type TokenService } from "./token.js";
import type { UserStore } from "./users.js";

export interface OAuthPluginOptions {
  readonly issuer: string;
  readonly registry: TenantRegistry;
  readonly clients: ClientStore;
  /** What dynamic registration admits: clients per address per hour, and the body's size. */
  readonly registration: { readonly budget: RegistrationBudget; readonly maxBytes: number };
  readonly clientMetadata: ClientMetadataFetcher;
  readonly users: UserStore;
  readonly grants: GrantStore;
  readonly flows: FlowStore;
  readonly tokens: TokenService;
  readonly accessTokens: AccessTokens;
  readonly signingKeys: SigningKeys;
  readonly federation: Federation;
  /** Back-off on failed logins (login-throttle.ts). */
  readonly loginThrottle: LoginThrottle;
  /** Per-IP rate limits of the token, registration, login and consent endpoints (rate-limit.ts). */
  readonly rateLimit?: (endpoint: LimitedEndpoint) => onRequestAsyncHookHandler | undefined;
  /** Counts registrations, authorizations, tokens, revocations and failures. */
  readonly metrics: Metrics;
  /** First-party clients signed in without a consent page (the connected-accounts pages). */
  readonly trustedClients?: readonly string[];
}

type Form = Record<string, string | string[]>;

function field(form: Form, name: string): string | undefined {
  const v = form[name];
  if (Array.isArray(v)) throw new TokenError("invalid_request", `${excerpt(name)} appears more than once`);
  return v;
}

const BODY_ERRORS: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "the body is not valid JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "the body is empty",
  FST_ERR_CTP_BODY_TOO_LARGE: "the body is too large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported content type",
};

/**
 * RFC 6749 §2.3.1: Basic credentials are form-urlencoded first; broken percent-encoding is a
 * client authentication failure, not a server error.
 */
function formDecoded(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    throw new TokenError("invalid_client", "malformed Basic credentials", 401);
  }
}

/** The form of a token or revocation request (RFC 6749 §3.2: application/x-www-form-urlencoded). */
function formBody(req: FastifyRequest): Form {
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers["content-type"] ?? ""))
    throw new TokenError("invalid_request", "send an application/x-www-form-urlencoded body");
  return req.body as Form;
}

export async function oauthPlugin(app: FastifyInstance, opts: OAuthPluginOptions): Promise<void> {
  const { issuer, registry, clients, tokens, metrics } = opts;

  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      const prev = form[k];
      form[k] = prev === undefined ? v : [...[prev].flat(), v];
    }
    done(null, form);
  });
  // RFC 6749 §5.2 errors from these endpoints even when Fastify refuses the body (bad JSON, too
  // large, wrong media type); anything unexpected is a server_error, its reason in the log.
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status =
      err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, "oauth request failed");
    return reply
      .code(status)
      .header("cache-control", "no-store")
      .send(
        status === 500
          ? { error: "server_error", error_description: "internal error; the server log has the details" }
          : {
              error: "invalid_request",
              error_description: BODY_ERRORS[err.code] ?? "the request could not be read",
            },
      );
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
  // The bridge's Client ID Metadata Document (docs/connect.md).
  const connectClient = connectClientDocument(issuer);
  app.get(CONNECT_CLIENT_PATH, async (_req, reply) =>
    reply
      .header("access-control-allow-origin", "*")
      .header("cache-control", "public, max-age=3600")
      .send(connectClient),
  );
  app.get("/oauth/jwks.json", async (_req, reply) =>
    reply
      .header("access-control-allow-origin", "*")
      .header("cache-control", "public, max-age=300")
      .send(await opts.signingKeys.jwks()),
  );

  const limited = (endpoint: LimitedEndpoint) => {
    const onRequest = opts.rateLimit?.(endpoint);
    return onRequest ? { onRequest } : {};
  };

  const { budget, maxBytes } = opts.registration;
  // A registration too large is client metadata refused (RFC 7591 §3.2.2), not a generic 413.
  const registrationErrors = (err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void => {
    if (err.code !== "FST_ERR_CTP_BODY_TOO_LARGE") throw err;
    metrics.oauthEvent("failure", "invalid_client_metadata");
    void reply
      .code(400)
      .header("cache-control", "no-store")
      .header("access-control-allow-origin", "*")
      .send({
        error: "invalid_client_metadata",
        error_description: `the registration request is larger than ${maxBytes} bytes`,
      });
  };
  app.post(
    "/oauth/register",
    { ...limited("register"), bodyLimit: maxBytes, errorHandler: registrationErrors },
    async (req, reply) => {
      void reply.header("cache-control", "no-store").header("access-control-allow-origin", "*");
      let metadata;
      try {
        metadata = validateRegistration(req.body);
      } catch (err) {
        if (!(err instanceof OAuthClientError)) throw err;
        metrics.oauthEvent("failure", err.error);
        return reply.code(400).send({ error: err.error, error_description: err.description });
      }
      // Counted once the request is a registration: a malformed one stores nothing.
      const wait = await budget.take(req.ip);
      if (wait !== undefined) {
        metrics.oauthEvent("failure", "temporarily_unavailable");
        return reply
          .code(429)
          .header("retry-after", String(wait))
          .send({
            error: "temporarily_unavailable",
            error_description: `this address registered too many clients this hour; retry after ${wait} s`,
          });
      }
      const registered = await clients.register(metadata);
      metrics.oauthEvent("registration");
      return reply.code(201).send(registered);
    },
  );

  signInRoutes(app, opts);

  /**
   * RFC 6749 §2.3.1: client_secret_basic, client_secret_post, or none. `mayRefresh` is whether
   * the registered grant_types include refresh_token, or for a metadata-document client how to
   * ask its document (only once the code or token is known to be its own).
   */
  const authenticateClient = async (
    req: FastifyRequest,
    form: Form,
  ): Promise<{ id: string; mayRefresh?: RefreshPermission; record?: ClientRecord }> => {
    const basic = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(req.headers.authorization ?? "");
    if (basic) {
      const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon < 0) throw new TokenError("invalid_client", "malformed Basic credentials", 401);
      const id = formDecoded(decoded.slice(0, colon));
      const secret = formDecoded(decoded.slice(colon + 1));
      if (field(form, "client_id") !== undefined && field(form, "client_id") !== id)
        throw new TokenError("invalid_client", "client_id differs from the Basic credentials", 401);
      return registered(await authenticateRegistered(id, secret, "client_secret_basic"));
    }
    const id = field(form, "client_id");
    if (!id) throw new TokenError("invalid_client", "client authentication is required", 401);
    const secret = field(form, "client_secret");
    if (opts.clientMetadata.isClientId(id)) {
      if (secret !== undefined)
        throw new TokenError("invalid_client", "metadata-document clients are public", 401);
      return { id, mayRefresh: () => documentAllowsRefresh(id) };
    }
    const method = secret === undefined ? "none" : "client_secret_post";
    return registered(await authenticateRegistered(id, secret, method));
  };
  /** A registered client may refresh when its registered grant_types include refresh_token. */
  const registered = (record: ClientRecord) => ({
    id: record.clientId,
    mayRefresh: record.metadata.grant_types.includes("refresh_token"),
    record,
  });
  /**
   * Whether a metadata-document client's document, as it reads now (cached by its lifetime), lists
   * the refresh_token grant: a document that dropped it since the authorization request gets no
   * more refresh tokens. Undefined when it cannot be fetched: the code's record decides then.
   */
  const documentAllowsRefresh = (id: string): Promise<boolean | undefined> =>
    opts.clientMetadata.resolve(id).then(
      (doc) => doc.grant_types.includes("refresh_token"),
      () => undefined,
    );
  /** Authenticates a registered client (an expired registration is unknown: the client registers again). */
  const authenticateRegistered = async (
    id: string,
    secret: string | undefined,
    method: "none" | "client_secret_basic" | "client_secret_post",
  ): Promise<ClientRecord> => {
    try {
      return await clients.authenticate(id, secret, method);
    } catch (err) {
      if (err instanceof OAuthClientError)
        throw new TokenError("invalid_client", "client authentication failed", 401);
      throw err;
    }
  };

  const tokenErrors = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof TokenError)) throw err;
    metrics.oauthEvent("failure", err.error);
    if (err.status === 401) void reply.header("www-authenticate", 'Basic realm="portico"');
    return reply.code(err.status).send({ error: err.error, error_description: err.message });
  };

  app.post("/oauth/token", limited("token"), async (req, reply) => {
    void reply
      .header("cache-control", "no-store")
      .header("pragma", "no-cache")
      .header("access-control-allow-origin", "*");
    try {
      const form = formBody(req);
      const { id: clientId, mayRefresh, record } = await authenticateClient(req, form);
      // A registered client that obtains a token is in use: its registration is kept (clients.ts).
      const used = () =>
        record &&
        clients.used(record).catch((err: unknown) => req.log.warn({ err }, "client use not recorded"));
      // First-party clients skip consent, so their codes are redeemed in-process only (the
      // accounts pages' sign-in, src/accounts/sign-in.ts), never exchanged for tokens here.
      if (opts.trustedClients?.includes(clientId))
        throw new TokenError("unauthorized_client", "this client gets no tokens from the token endpoint");
      const params = Object.fromEntries(Object.keys(form).map((k) => [k, field(form, k)!]));
      const tenant = tenantOfSecret(params.code ?? params.refresh_token ?? "");
      if (tenant !== undefined && !servesTenant(registry, tenant))
        throw new TokenError("invalid_target", "this server does not issue tokens for that tenant");
      switch (params.grant_type) {
        case "authorization_code": {
          const issued = await tokens.exchangeCode(clientId, params, mayRefresh);
          await used();
          metrics.oauthEvent("token_issued");
          return reply.send(issued);
        }
        case "refresh_token": {
          const refreshed = await tokens.refresh(clientId, params, mayRefresh);
          await used();
          metrics.oauthEvent("token_refreshed");
          return reply.send(refreshed);
        }
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

  // Limited like the token endpoint: it authenticates the same client secrets.
  app.post("/oauth/revoke", limited("revoke"), async (req, reply) => {
    void reply.header("cache-control", "no-store").header("access-control-allow-origin", "*");
    try {
      const form = formBody(req);
      const { id: clientId } = await authenticateClient(req, form);
      const token = field(form, "token");
      if (!token) throw new TokenError("invalid_request", "token is required");
      await tokens.revoke(clientId, token);
      metrics.oauthEvent("revocation");
      return reply.code(200).send();
    } catch (err) {
      return tokenErrors(reply, err);
    }
  });
}
