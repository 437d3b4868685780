// Signing a tenant's user in on Portico's own pages (docs/upstream-auth.md "Signing in"): the
// accounts pages, and the console's tenant admins (docs/admin-api.md "Console sessions"), each as
// its own first-party client. Tenants whose users sign in to Portico (local users, or the tenant's
// OpenID provider) go through Portico's own login page as that client (oauth/connect-client.ts):
// the code comes back and is redeemed in-process for the user's `sub` (PKCE checked, no token
// issued, the grant revoked at once). Tenants that trust an external authorization server sign the
// user in at that issuer with OpenID Connect (`identity.login`), giving that issuer's `sub`, as its
// tokens do. The caller makes the session of the person signed in.
import { createHash } from "node:crypto";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import * as oauth from "oauth4webapi";
import { SCOPES } from "../auth/resource-server.js";
import type { Federation, OidcIdentity, PendingFederation } from "../oauth/federation.js";
import type { GrantStore } from "../oauth/grants.js";
import type { TenantConfig } from "../records/tenant.js";
import type { FlowRecords } from "./connect-flow.js";

export const EXTERNAL_SIGNED_IN_PATH = "/accounts/signed-in/oidc";

interface PendingSignIn {
  readonly kind: "signin";
  readonly tenant: string;
  /** Where to go once signed in: a page of the client's own. */
  readonly next: string;
  /** The client that started it: a flow of one client is not finished at another's return. */
  readonly client?: string;
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

/** What binds a sign-in to the browser that started it (a cookie of the client's pages). */
export interface SignInBinding {
  startSignIn(reply: FastifyReply, state: string): void;
  signInMatches(req: FastifyRequest, state: string | null): boolean;
}

/** Who signed in, and where to send them. */
export interface SignedIn {
  readonly tenant: string;
  readonly sub: string;
  /** A local user's username, when the sign-in names one. */
  readonly username?: string;
  /** What pages show: a username or e-mail, else the sub. */
  readonly name: string;
  readonly next: string;
}

export interface AccountsSignInDeps {
  readonly publicUrl: string;
  /** A tenant's record as this replica has it. */
  readonly tenant: (id: string) => TenantConfig | undefined;
  readonly grants: GrantStore;
  readonly flows: FlowRecords;
  /** Portico's own first-party client the pages sign in as: its id and redirect URI. */
  readonly client: { readonly id: string; readonly redirectUri: string };
  readonly binding: SignInBinding;
  /** Federation whose redirect URI is the pages' external return (external tenants). */
  readonly federation: Federation;
  readonly log: FastifyBaseLogger;
  /** What a failed sign-in page tells the user to do. */
  readonly again?: string;
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
    const { publicUrl, flows, binding, client } = this.deps;
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
        client: client.id,
        federation: pending,
      } satisfies PendingSignIn);
      binding.startSignIn(reply, pending.state);
      return reply.header("cache-control", "no-store").redirect(url.toString(), 303);
    }
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    await flows.put(state, {
      kind: "signin",
      tenant,
      next,
      client: client.id,
      codeVerifier,
    } satisfies PendingSignIn);
    binding.startSignIn(reply, state);
    const url = new URL(`${publicUrl}/oauth/authorize`);
    const params = {
      response_type: "code",
      client_id: client.id,
      redirect_uri: client.redirectUri,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      resource: `${publicUrl}/mcp/${tenant}`,
      scope: SCOPES.read,
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return reply.header("cache-control", "no-store").redirect(url.toString(), 303);
  }

  /** Portico's login sent the browser back with a code: who signed in, and the next page. */
  async finishPortico(req: FastifyRequest): Promise<SignedIn> {
    const { publicUrl, grants, client } = this.deps;
    const again = this.#again;
    const callback = new URL(req.url, publicUrl);
    const pending = await this.#take(req, callback.searchParams.get("state"));
    const code = callback.searchParams.get("code");
    if (!code || !pending.codeVerifier) throw new SignInError(again, "no code, or not a Portico sign-in");
    const redeemed = await grants.redeemCode(code);
    if (!redeemed.ok) throw new SignInError(again, "the code was not valid");
    const r = redeemed.record;
    const challenge = createHash("sha256").update(pending.codeVerifier).digest("base64url");
    const ok =
      r.client_id === client.id &&
      r.redirect_uri === client.redirectUri &&
      r.resource === `${publicUrl}/mcp/${pending.tenant}` &&
      r.code_challenge === challenge;
    const grant = await grants.grant(pending.tenant, r.grantId);
    // Nothing but this sign-in uses the grant: revoked at once, so no token can come of it.
    await grants.revokeGrant(pending.tenant, r.grantId);
    if (!ok || !grant) throw new SignInError(again, "the code was not issued for this sign-in");
    return {
      tenant: pending.tenant,
      sub: grant.sub,
      ...(grant.username !== undefined && { username: grant.username }),
      name: grant.username ?? grant.sub,
      next: pending.next,
    };
  }

  /** The external issuer sent the browser back: that issuer's `sub`, and the next page. */
  async finishExternal(req: FastifyRequest): Promise<SignedIn> {
    const again = this.#again;
    const callback = new URL(req.url, this.deps.publicUrl);
    const pending = await this.#take(req, callback.searchParams.get("state"));
    const identity = this.externalLogin(pending.tenant);
    if (!pending.federation || identity?.issuer !== pending.federation.issuer)
      throw new SignInError(again, "not an external sign-in, or the tenant's issuer changed");
    let user;
    try {
      user = await this.deps.federation.complete(identity, pending.federation, callback);
    } catch (err) {
      this.deps.log.warn({ err, tenant: pending.tenant }, "accounts sign-in at the external issuer failed");
      throw new SignInError(again, "the external sign-in failed", 502);
    }
    return { tenant: pending.tenant, sub: user.providerSub!, name: user.username, next: pending.next };
  }

  get #again(): string {
    return this.deps.again ?? AGAIN;
  }

  async #take(req: FastifyRequest, state: string | null): Promise<PendingSignIn> {
    // The state must be the one this browser started with (no login CSRF), and is single-use.
    if (!this.deps.binding.signInMatches(req, state))
      throw new SignInError(this.#again, "the sign-in cookie does not match");
    const pending = await this.deps.flows.take<PendingSignIn>(state);
    if (pending?.kind !== "signin") throw new SignInError(this.#again, "unknown, used or expired sign-in");
    // A flow started by one client's pages finishes only at that client's return.
    if ((pending.client ?? this.deps.client.id) !== this.deps.client.id)
      throw new SignInError(this.#again, "the sign-in was started by other pages");
    return pending;
  }
}
