// Signing in to the accounts pages (docs/upstream-auth.md "Signing in"). Tenants whose users sign in
// to Portico (local users, or the tenant's OpenID provider) go through Portico's own login page as
// the first-party client of oauth/connect-client.ts: the code comes back here and is redeemed
// in-process for the user's `sub` (PKCE checked, no token issued, the grant revoked at once).
// Tenants that trust an external authorization server sign the user in at that issuer with OpenID
// Connect (`identity.login`), and the session holds that issuer's `sub`, as its tokens do.
import { createHash } from "node:crypto";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import * as oauth from "oauth4webapi";
import { SCOPES } from "../auth/resource-server.js";
import { ACCOUNTS_CLIENT_PATH, ACCOUNTS_SIGNED_IN_PATH } from "../oauth/connect-client.js";
import type { Federation, OidcIdentity, PendingFederation } from "../oauth/federation.js";
import type { GrantStore } from "../oauth/grants.js";
import type { TenantConfig } from "../records/tenant.js";
import type { BrowserSessions } from "./browser-sessions.js";
import type { FlowRecords } from "./connect-flow.js";

export const EXTERNAL_SIGNED_IN_PATH = "/accounts/signed-in/oidc";

interface PendingSignIn {
  readonly kind: "signin";
  readonly tenant: string;
  /** Where to go once signed in: a path under /accounts/. */
  readonly next: string;
  readonly codeVerifier?: string;
  readonly federation?: PendingFederation;
}

/** Why a sign-in did not finish; the page says `shown`. */
export class SignInError extends Error {
  override readonly name = "SignInError";
  constructor(
    readonly shown: string,
    why: string,
    readonly status = 400,
  ) {
    super(why);
  }
}

const AGAIN = "Signing in did not work. Open the link again from your application.";

export interface AccountsSignInDeps {
  readonly publicUrl: string;
  /** A tenant's record as this replica has it. */
  readonly tenant: (id: string) => TenantConfig | undefined;
  readonly grants: GrantStore;
  readonly flows: FlowRecords;
  readonly sessions: BrowserSessions;
  /** Federation whose redirect URI is EXTERNAL_SIGNED_IN_PATH (external tenants). */
  readonly federation: Federation;
  readonly log: FastifyBaseLogger;
}

export class AccountsSignIn {
  constructor(private readonly deps: AccountsSignInDeps) {}

  /** The external issuer as an OpenID provider Portico signs users in at, when configured. */
  externalLogin(tenant: string): OidcIdentity | undefined {
    const identity = this.deps.tenant(tenant)?.identity;
    if (identity?.type !== "external" || !identity.login) return undefined;
    return { type: "oidc", issuer: identity.issuer, ...identity.login };
  }

  /** Sends the browser to sign in for `tenant`, then back to `next`. */
  async start(reply: FastifyReply, tenant: string, next: string): Promise<FastifyReply> {
    const { publicUrl, flows, sessions } = this.deps;
    const external = this.externalLogin(tenant);
    if (external) {
      let started: Awaited<ReturnType<Federation["begin"]>>;
      try {
        started = await this.deps.federation.begin(external);
      } catch (err) {
        this.deps.log.warn({ err, tenant }, "accounts sign-in at the external issuer could not start");
        throw new SignInError(
          "Signing in is unavailable right now. Try again later.",
          "the issuer's discovery failed",
          502,
        );
      }
      const { url, pending } = started;
      await flows.put(pending.state, {
        kind: "signin",
        tenant,
        next,
        federation: pending,
      } satisfies PendingSignIn);
      sessions.startSignIn(reply, pending.state);
      return reply.header("cache-control", "no-store").redirect(url.toString(), 303);
    }
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    await flows.put(state, { kind: "signin", tenant, next, codeVerifier } satisfies PendingSignIn);
    sessions.startSignIn(reply, state);
    const url = new URL(`${publicUrl}/oauth/authorize`);
    const params = {
      response_type: "code",
      client_id: `${publicUrl}${ACCOUNTS_CLIENT_PATH}`,
      redirect_uri: `${publicUrl}${ACCOUNTS_SIGNED_IN_PATH}`,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      resource: `${publicUrl}/mcp/${tenant}`,
      scope: SCOPES.read,
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return reply.header("cache-control", "no-store").redirect(url.toString(), 303);
  }

  /** Portico's login sent the browser back with a code: the session is created, the next page named. */
  async finishPortico(req: FastifyRequest, reply: FastifyReply): Promise<string> {
    const { publicUrl, grants } = this.deps;
    const callback = new URL(req.url, publicUrl);
    const pending = await this.#take(req, callback.searchParams.get("state"));
    const code = callback.searchParams.get("code");
    if (!code || !pending.codeVerifier) throw new SignInError(AGAIN, "no code, or not a Portico sign-in");
    const redeemed = await grants.redeemCode(code);
    if (!redeemed.ok) throw new SignInError(AGAIN, "the code was not valid");
    const r = redeemed.record;
    const challenge = createHash("sha256").update(pending.codeVerifier).digest("base64url");
    const ok =
      r.client_id === `${publicUrl}${ACCOUNTS_CLIENT_PATH}` &&
      r.redirect_uri === `${publicUrl}${ACCOUNTS_SIGNED_IN_PATH}` &&
      r.resource === `${publicUrl}/mcp/${pending.tenant}` &&
      r.code_challenge === challenge;
    const grant = await grants.grant(pending.tenant, r.grantId);
    // Nothing but this sign-in uses the grant: revoked at once, so no token can come of it.
    await grants.revokeGrant(pending.tenant, r.grantId);
    if (!ok || !grant) throw new SignInError(AGAIN, "the code was not issued for this sign-in");
    await this.deps.sessions.create(reply, {
      tenant: pending.tenant,
      sub: grant.sub,
      name: grant.username ?? grant.sub,
    });
    return pending.next;
  }

  /** The external issuer sent the browser back: the session holds that issuer's `sub`. */
  async finishExternal(req: FastifyRequest, reply: FastifyReply): Promise<string> {
    const callback = new URL(req.url, this.deps.publicUrl);
    const pending = await this.#take(req, callback.searchParams.get("state"));
    const identity = this.externalLogin(pending.tenant);
    if (!pending.federation || identity?.issuer !== pending.federation.issuer)
      throw new SignInError(AGAIN, "not an external sign-in, or the tenant's issuer changed");
    let user;
    try {
      user = await this.deps.federation.complete(identity, pending.federation, callback);
    } catch (err) {
      this.deps.log.warn({ err, tenant: pending.tenant }, "accounts sign-in at the external issuer failed");
      throw new SignInError(AGAIN, "the external sign-in failed", 502);
    }
    const sub = user.providerSub!;
    await this.deps.sessions.create(reply, { tenant: pending.tenant, sub, name: user.username });
    return pending.next;
  }

  async #take(req: FastifyRequest, state: string | null): Promise<PendingSignIn> {
    // The state must be the one this browser started with (no login CSRF), and is single-use.
    if (!this.deps.sessions.signInMatches(req, state))
      throw new SignInError(AGAIN, "the sign-in cookie does not match");
    const pending = await this.deps.flows.take<PendingSignIn>(state);
    if (pending?.kind !== "signin") throw new SignInError(AGAIN, "unknown, used or expired sign-in");
    return pending;
  }
}
