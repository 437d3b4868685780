// The bridge's OAuth client (MCP basic/authorization), on oauth4webapi: on a 401 it finds the
// Protected Resource Metadata (RFC 9728) and the authorization server (RFC 8414), identifies
// itself by the Client ID Metadata Document Portico serves for it (oauth/connect-client.ts), else
// registers dynamically (RFC 7591), and runs the authorization code flow with PKCE S256 and a
// loopback redirect (RFC 8252), the resource named (RFC 8707). Tokens are cached and refreshed.
import * as oauth from "oauth4webapi";
import type { ConnectEnv } from "../config/connect.js";
import { ConnectError, describe } from "./connect-error.js";
import { openBrowser, startLoopback } from "./loopback.js";
import type { SignInWait } from "./sign-in-wait.js";
import type { CachedLogin, TokenCache } from "./token-cache.js";

/** Where Portico serves the bridge's metadata document, under its issuer. */
const CONNECT_CLIENT_PATH = "/oauth/clients/portico-connect.json";
/** A token this close to expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 30_000;

export interface OAuthClientOptions {
  readonly server: URL;
  readonly env: ConnectEnv;
  readonly cache: TokenCache;
  /** A client id registered out of band, for servers with neither metadata documents nor registration. */
  readonly clientId?: string;
  readonly loginTimeoutMs: number;
  readonly log: (line: string) => void;
  /** What is shown while the user signs in (the time left, that Ctrl-C cancels). */
  readonly waiting?: SignInWait;
  /** Aborted by SIGINT or SIGTERM: a sign-in still waiting for the browser is cancelled. */
  readonly signal?: AbortSignal;
}

export class BridgeOAuth {
  readonly #o: OAuthClientOptions;
  readonly #options: { [oauth.allowInsecureRequests]?: boolean };
  #login: CachedLogin | undefined;
  #loaded = false;
  #as: oauth.AuthorizationServer | undefined;
  #pending: Promise<string> | undefined;

  constructor(options: OAuthClientOptions) {
    this.#o = options;
    // A plain-http server URL is the user's choice (a local Portico): its OAuth endpoints are too.
    this.#options = options.server.protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {};
  }

  /** The access token to send, refreshed first when it is about to expire; undefined before a login. */
  async accessToken(): Promise<string | undefined> {
    if (!this.#loaded) {
      this.#login = await this.#o.cache.load(this.#o.server.href);
      this.#loaded = true;
    }
    const login = this.#login;
    if (!login) return undefined;
    if (expiring(login)) return this.#once(() => this.#renew(null, login.accessToken));
    return login.accessToken;
  }

  /**
   * After a 401 for `refused` (the token sent, if any): a newer token when there is one, else a
   * refresh, else a new sign-in; resolves to the access token to send again.
   */
  unauthorized(challenge: string | null, refused: string | undefined): Promise<string> {
    return this.#once(() => this.#renew(challenge, refused));
  }

  /**
   * Another request, or another bridge process sharing the cache file, may have renewed the token
   * already: that one is used, and only the newest refresh token is ever sent (a rotated one sent
   * again is refused, and servers may revoke the whole grant for it).
   */
  async #renew(challenge: string | null, refused: string | undefined): Promise<string> {
    const current = this.#login;
    if (current && current.accessToken !== refused && !expiring(current)) return current.accessToken;
    const onDisk = await this.#o.cache.load(this.#o.server.href);
    if (onDisk && onDisk.accessToken !== refused && !expiring(onDisk)) {
      this.#login = onDisk;
      return onDisk.accessToken;
    }
    if (onDisk) this.#login = onDisk;
    return this.#refreshOrLogin(challenge);
  }

  /** One refresh or sign-in at a time, shared by every request that needs it. */
  #once(run: () => Promise<string>): Promise<string> {
    this.#pending ??= run().finally(() => (this.#pending = undefined));
    return this.#pending;
  }

  async #refreshOrLogin(challenge: string | null): Promise<string> {
    const login = this.#login;
    if (login?.refreshToken) {
      try {
        return await this.#refresh(login);
      } catch (err) {
        this.#o.log(`the saved sign-in could not be refreshed (${describe(err)}); signing in again`);
      }
    }
    return this.#signIn(challenge);
  }

  async #refresh(login: CachedLogin): Promise<string> {
    const as = await this.#authorizationServer(new URL(login.issuer));
    const client = { client_id: login.clientId };
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuth(login.clientSecret),
      login.refreshToken!,
      { ...this.#options, additionalParameters: { resource: this.#o.server.href } },
    );
    const tokens = await oauth.processRefreshTokenResponse(as, client, response);
    return this.#save({ ...login, refreshToken: tokens.refresh_token ?? login.refreshToken }, tokens);
  }

  async #signIn(challenge: string | null): Promise<string> {
    const resource = await this.#resourceMetadata(challenge);
    const issuer = resource.authorization_servers?.[0];
    if (!issuer) throw new ConnectError(`${this.#o.server.href} names no authorization server`);
    const as = await this.#authorizationServer(new URL(issuer));
    const deadlineMs = Date.now() + this.#o.loginTimeoutMs;
    const loopback = await startLoopback(this.#o.loginTimeoutMs, this.#o.signal);
    let stopNotice = () => {};
    try {
      const { clientId, clientSecret } = await this.#client(as, loopback.redirectUri);
      const client = { client_id: clientId };
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const scope = challengeParam(challenge, "scope") ?? resource.scopes_supported?.join(" ");
      const url = new URL(as.authorization_endpoint ?? "");
      url.search = new URLSearchParams({
        client_id: clientId,
        redirect_uri: loopback.redirectUri,
        response_type: "code",
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        resource: resource.resource,
        ...(scope && { scope }),
      }).toString();
      this.#o.log(`sign in to ${this.#o.server.href} in your browser: ${url.href}`);
      openBrowser(url.href, this.#o.env);
      stopNotice = this.#o.waiting?.(url.href, deadlineMs) ?? stopNotice;
      const back = await loopback.response;
      const params = oauth.validateAuthResponse(as, client, back, state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        clientAuth(clientSecret),
        params,
        loopback.redirectUri,
        verifier,
        { ...this.#options, additionalParameters: { resource: resource.resource } },
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      const entry = { server: this.#o.server.href, issuer: as.issuer, clientId, clientSecret };
      return await this.#save({ ...entry, accessToken: "", refreshToken: tokens.refresh_token }, tokens);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError)
        throw new ConnectError(`sign-in refused: ${describe(err)}`);
      if (err instanceof ConnectError) throw err;
      throw new ConnectError(`sign-in failed: ${describe(err)}`);
    } finally {
      stopNotice();
      loopback.close();
    }
  }

  async #save(login: CachedLogin, tokens: oauth.TokenEndpointResponse): Promise<string> {
    const expiresAtMs = tokens.expires_in === undefined ? undefined : Date.now() + tokens.expires_in * 1000;
    const next: CachedLogin = { ...login, accessToken: tokens.access_token, expiresAtMs };
    this.#login = next;
    await this.#o.cache.save(next);
    return next.accessToken;
  }

  /** RFC 9728: the URL the challenge names, else the well-known URL of the server's path. */
  async #resourceMetadata(challenge: string | null): Promise<oauth.ResourceServer> {
    const named = challengeParam(challenge, "resource_metadata");
    try {
      const response =
        named !== undefined && URL.canParse(named)
          ? await fetch(named, { headers: { accept: "application/json" } })
          : await oauth.resourceDiscoveryRequest(this.#o.server, this.#options);
      return await oauth.processResourceDiscoveryResponse(this.#o.server, response);
    } catch (err) {
      throw new ConnectError(
        `${this.#o.server.href} asks for a sign-in but its metadata failed: ${describe(err)}`,
      );
    }
  }

  /** RFC 8414 metadata, else OpenID discovery (MCP basic/authorization §Server Metadata Discovery). */
  async #authorizationServer(issuer: URL): Promise<oauth.AuthorizationServer> {
    if (this.#as?.issuer === issuer.href || this.#as?.issuer === issuer.href.replace(/\/$/, ""))
      return this.#as;
    let last: unknown;
    for (const algorithm of ["oauth2", "oidc"] as const) {
      try {
        const response = await oauth.discoveryRequest(issuer, { ...this.#options, algorithm });
        this.#as = await oauth.processDiscoveryResponse(issuer, response);
        return this.#as;
      } catch (err) {
        last = err;
      }
    }
    throw new ConnectError(
      `the authorization server ${issuer.href} could not be discovered: ${describe(last)}`,
    );
  }

  /**
   * Who the bridge is at this server: the id given on the command line, Portico's metadata
   * document for the bridge when the server supports documents and serves it, else a dynamic
   * registration for this redirect URI.
   */
  async #client(
    as: oauth.AuthorizationServer,
    redirectUri: string,
  ): Promise<{ clientId: string; clientSecret?: string }> {
    if (this.#o.clientId) return { clientId: this.#o.clientId };
    if (as.client_id_metadata_document_supported === true) {
      const documentUrl = `${as.issuer.replace(/\/$/, "")}${CONNECT_CLIENT_PATH}`;
      if (await servesDocument(documentUrl)) return { clientId: documentUrl };
    }
    if (!as.registration_endpoint)
      throw new ConnectError(
        `${as.issuer} offers no client registration: pass --client-id with a client registered there`,
      );
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: "portico connect",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        application_type: "native",
      },
      this.#options,
    );
    const registered = await oauth.processDynamicClientRegistrationResponse(response);
    const secret = registered.client_secret;
    return { clientId: registered.client_id, ...(typeof secret === "string" && { clientSecret: secret }) };
  }
}

function expiring(login: CachedLogin): boolean {
  return login.expiresAtMs !== undefined && login.expiresAtMs - EXPIRY_MARGIN_MS < Date.now();
}

function clientAuth(secret: string | undefined): oauth.ClientAuth {
  return secret === undefined ? oauth.None() : oauth.ClientSecretPost(secret);
}

/** Whether the server publishes the bridge's document at `url` (its client_id is that URL). */
async function servesDocument(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { headers: { accept: "application/json" }, redirect: "manual" });
    if (response.status !== 200) return false;
    const doc = (await response.json()) as { client_id?: unknown };
    return doc.client_id === url;
  } catch {
    return false;
  }
}

/** One auth-param of a Bearer challenge (RFC 6750 §3), quoted or not. */
export function challengeParam(challenge: string | null, name: string): string | undefined {
  if (!challenge) return undefined;
  const m = new RegExp(`(?:^|[\\s,])${name}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s,]+))`, "i").exec(challenge);
  if (!m) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2];
}
