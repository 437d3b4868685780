// An OAuth client for tests, strict as oauth4webapi is: discovery, dynamic registration, and the
// authorization code flow through Portico's login and consent forms, driven as a browser would.
import assert from "node:assert/strict";
import * as oauth from "oauth4webapi";

export const insecure = { [oauth.allowInsecureRequests]: true };
export const REDIRECT_URI = "http://127.0.0.1:9999/callback";

export interface User {
  readonly username: string;
  readonly password: string;
}

export class TestOAuthClient {
  private constructor(
    readonly issuer: string,
    readonly as: oauth.AuthorizationServer,
    readonly client: oauth.Client,
  ) {}

  /**
   * Discovers the authorization server and registers a public client (RFC 7591), with the
   * refresh_token grant as the MCP SDK's clients register, unless `grantTypes` says otherwise.
   */
  static async register(
    issuer: string,
    name = "Test Client",
    grantTypes: readonly string[] = ["authorization_code", "refresh_token"],
  ): Promise<TestOAuthClient> {
    const as = await discover(issuer);
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: "none",
          client_name: name,
          grant_types: [...grantTypes],
        },
        insecure,
      ),
    );
    return new TestOAuthClient(issuer, as, { client_id: registered.client_id });
  }

  /** A public client registered some other way (pre-registered through the admin API). */
  static async forClient(issuer: string, clientId: string): Promise<TestOAuthClient> {
    return new TestOAuthClient(issuer, await discover(issuer), { client_id: clientId });
  }

  /** An authorization request for a tenant, with its PKCE verifier and state. */
  async authorizationUrl(tenant: string, scope = "mcp:read mcp:tools") {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(this.as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: this.client.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: "code",
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      resource: `${this.issuer}/mcp/${tenant}`,
    }).toString();
    return { url, verifier, state };
  }

  /** Signs `user` in at the tenant and consents; returns the redirect back with its code. */
  async authorize(tenant: string, user: User, scope?: string) {
    const { url, verifier, state } = await this.authorizationUrl(tenant, scope);
    const page = await fetch(url, { redirect: "manual" });
    assert.equal(page.status, 200, "the login page");
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const post = (path: string, fields: Record<string, string>) =>
      fetch(`${this.issuer}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams(fields),
      });
    const loginHtml = await page.text();
    let back = await post("/oauth/login", { ...formOf(loginHtml), ...user });
    if (back.status === 200)
      back = await post("/oauth/consent", { ...formOf(await back.text()), decision: "allow" });
    assert.equal(back.status, 303, "redirected back to the client");
    return { location: new URL(back.headers.get("location")!), verifier, state };
  }

  /** Redeems the code of a redirect back (its `iss` and `state` checked) for tokens. */
  async exchange(location: URL, verifier: string, state: string) {
    const params = oauth.validateAuthResponse(this.as, this.client, location, state);
    const response = await oauth.authorizationCodeGrantRequest(
      this.as,
      this.client,
      oauth.None(),
      params,
      REDIRECT_URI,
      verifier,
      insecure,
    );
    return oauth.processAuthorizationCodeResponse(this.as, this.client, response);
  }

  /** Redeems a refresh token (rotation: the response carries a new one). */
  async refresh(refreshToken: string) {
    const response = await oauth.refreshTokenGrantRequest(
      this.as,
      this.client,
      oauth.None(),
      refreshToken,
      insecure,
    );
    return oauth.processRefreshTokenResponse(this.as, this.client, response);
  }

  /** The whole flow: a token response for `user` on the tenant. */
  async tokens(tenant: string, user: User, scope?: string) {
    const { location, verifier, state } = await this.authorize(tenant, user, scope);
    return this.exchange(location, verifier, state);
  }
}

async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, insecure));
}

/** The hidden flow and csrf fields of a Portico login or consent page. */
export function formOf(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/name="(flow|csrf)" value="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]),
  );
}

/** POSTs a form to a page of `issuer` as the browser holding `cookie` would, redirects not followed. */
export function formPoster(issuer: string, cookie: string) {
  return (path: string, fields: Record<string, string>) =>
    fetch(`${issuer}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie },
      body: new URLSearchParams(fields),
    });
}
