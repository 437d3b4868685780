// The console's sign-in pages under /admin/console/sign-in (docs/admin-api.md "Console sessions"):
// a platform admin's password, checked behind the login back-off (oauth/login-throttle.ts); a
// tenant admin through their tenant's usual sign-in (accounts/sign-in.ts, as the console's own
// first-party client), admitted only when an admin of that tenant. Forms carry a token that must
// match the form cookie (no login CSRF). Success sets the console session cookie (sessions.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import type { FastifyBaseLogger } from "fastify";
import { cookieOf } from "../admin/auth.js";
import type { PlatformUsers } from "../admin/platform-users.js";
import type { TenantAdmins } from "../admin/tenant-admins.js";
import { AccountsSignIn, SignInError, type SignedIn, type SignInBinding } from "../accounts/sign-in.js";
import type { FlowRecords } from "../accounts/connect-flow.js";
import { macEquals, randomId } from "../crypto/secrets.js";
import { CONSOLE_CLIENT_PATH, CONSOLE_SIGNED_IN_PATH } from "../oauth/connect-client.js";
import { Federation } from "../oauth/federation.js";
import type { GrantStore } from "../oauth/grants.js";
import type { LoginThrottle } from "../oauth/login-throttle.js";
import { pageHeaders } from "../oauth/pages.js";
import { formActionSource, LOGIN_FAILED } from "../oauth/sign-in.js";
import type { Fetch } from "../egress/fetch.js";
import type { TenantConfig } from "../records/tenant.js";
import { consoleErrorPage, issuerPage, signInPage } from "./pages.js";
import type { ConsoleSessions } from "./sessions.js";

export const SIGN_IN_PATH = "/admin/console/sign-in";
/** Where an external tenant's issuer sends a tenant admin back. */
export const EXTERNAL_RETURN_PATH = "/admin/console/sign-in/oidc";
/** Where a signed-in admin lands: the console app. */
const CONSOLE_HOME = "/admin/console/";
/** The login back-off's "tenant" for platform users: not a tenant id (those are slugs). */
export const PLATFORM_THROTTLE = "_platform";
const TENANT_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
const AGAIN = "Signing in did not work. Start again from the console's sign-in page.";

export interface ConsoleSignInDeps {
  readonly publicUrl: string;
  readonly sessions: ConsoleSessions;
  readonly platformUsers: PlatformUsers;
  readonly tenantAdmins: TenantAdmins;
  /** A tenant's record as this replica has it. */
  readonly tenant: (id: string) => TenantConfig | undefined;
  readonly grants: GrantStore;
  readonly flows: FlowRecords;
  readonly loginThrottle: LoginThrottle;
  /** Identity providers are operator-configured: the provider egress fetch. */
  readonly fetch: Fetch;
  readonly log: FastifyBaseLogger;
  /** Per-address limits: the login form's, and the one of pages that start a sign-in. */
  readonly loginLimit?: onRequestAsyncHookHandler;
  readonly startLimit?: onRequestAsyncHookHandler;
}

type Form = Record<string, string | string[]>;

/** The cookies of the sign-in pages: the form token, and the binding of a tenant sign-in to its browser. */
class SignInCookies implements SignInBinding {
  readonly form: string;
  readonly binding: string;
  readonly #secure: boolean;

  constructor(publicUrl: string) {
    this.#secure = publicUrl.startsWith("https:");
    this.form = this.#secure ? "__Host-portico-console-form" : "portico-console-form";
    this.binding = this.#secure ? "__Host-portico-console-signin" : "portico-console-signin";
  }

  /** SameSite=Lax for the binding: the return from an external issuer is a cross-site navigation. */
  set(reply: FastifyReply, name: string, value: string, sameSite: "Strict" | "Lax", maxAge: number): void {
    const path = this.#secure ? "/" : SIGN_IN_PATH;
    const cookie = `${name}=${value}; Path=${path}; HttpOnly; SameSite=${sameSite}; Max-Age=${maxAge}${this.#secure ? "; Secure" : ""}`;
    const previous = reply.getHeader("set-cookie");
    const list = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
    void reply.header("set-cookie", [...list, cookie]);
  }

  startSignIn(reply: FastifyReply, state: string): void {
    this.set(reply, this.binding, state, "Lax", 600);
  }

  signInMatches(req: FastifyRequest, state: string | null): boolean {
    const cookie = cookieOf(req.headers.cookie, this.binding);
    return state !== null && cookie !== undefined && cookie === state;
  }
}

export async function consoleSignInPlugin(app: FastifyInstance, deps: ConsoleSignInDeps): Promise<void> {
  const { publicUrl, sessions, platformUsers, tenantAdmins, loginThrottle } = deps;
  const cookies = new SignInCookies(publicUrl);
  const federation = new Federation({
    redirectUri: `${publicUrl}${EXTERNAL_RETURN_PATH}`,
    fetch: deps.fetch,
  });
  const signIn = new AccountsSignIn({
    publicUrl,
    tenant: deps.tenant,
    grants: deps.grants,
    flows: deps.flows,
    client: {
      id: `${publicUrl}${CONSOLE_CLIENT_PATH}`,
      redirectUri: `${publicUrl}${CONSOLE_SIGNED_IN_PATH}`,
    },
    binding: cookies,
    federation,
    log: deps.log,
    again: AGAIN,
  });

  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) form[k] = form[k] === undefined ? v : [v];
    done(null, form);
  });
  const field = (req: FastifyRequest, name: string) => {
    const v = ((req.body ?? {}) as Form)[name];
    return typeof v === "string" ? v : undefined;
  };
  const html = (reply: FastifyReply, status: number, body: string, formTargets: readonly string[] = []) =>
    reply.code(status).headers(pageHeaders(formTargets)).send(body);
  const error = (reply: FastifyReply, status: number, title: string, detail: string) =>
    html(reply, status, consoleErrorPage(title, detail));
  /** The sign-in page with a fresh form token (and its cookie). */
  const form = (
    reply: FastifyReply,
    status: number,
    shown: Omit<Parameters<typeof signInPage>[0], "csrf">,
  ) => {
    const csrf = randomId(24);
    cookies.set(reply, cookies.form, csrf, "Strict", 3600);
    return html(reply, status, signInPage({ csrf, ...shown }));
  };
  /** True when the form's token is the form cookie's: the form was this browser's, from this page. */
  const formMatches = (req: FastifyRequest) => {
    const cookie = cookieOf(req.headers.cookie, cookies.form);
    const token = field(req, "csrf");
    return cookie !== undefined && token !== undefined && macEquals(token, cookie);
  };
  const expired = (reply: FastifyReply) =>
    error(reply, 403, "Form expired", "This page is out of date. Open the console's sign-in page again.");
  const onRequest = (hook: onRequestAsyncHookHandler | undefined) => (hook ? { onRequest: hook } : {});

  // Someone still signed in has nothing to do here: the console. Signing in as someone else
  // starts with signing out (the console's button), which ends the session on the server.
  app.get<{ Querystring: { "signed-out"?: string } }>(SIGN_IN_PATH, async (req, reply) => {
    const cookie = cookieOf(req.headers.cookie, sessions.cookieName);
    if (cookie !== undefined && (await sessions.principal(cookie)))
      return reply.header("cache-control", "no-store").redirect(CONSOLE_HOME, 303);
    return form(reply, 200, { signedOut: req.query["signed-out"] !== undefined });
  });

  app.post(`${SIGN_IN_PATH}/platform`, onRequest(deps.loginLimit), async (req, reply) => {
    if (!formMatches(req)) return expired(reply);
    const username = field(req, "username") ?? "";
    const password = field(req, "password") ?? "";
    const ticket = await loginThrottle.begin({ tenant: PLATFORM_THROTTLE, username, ip: req.ip });
    if (!ticket.allowed) {
      await loginThrottle.paced();
      return form(reply, 401, { platformError: LOGIN_FAILED, username });
    }
    const started = performance.now();
    const user = await platformUsers.verify(username, password);
    loginThrottle.timed(performance.now() - started);
    if (!user) {
      await loginThrottle.failed(ticket);
      req.log.info({ username: username.slice(0, 64) }, "console: platform sign-in failed");
      return form(reply, 401, { platformError: LOGIN_FAILED, username });
    }
    await loginThrottle.succeeded(ticket);
    await sessions.create(reply, { kind: "platform", username: user.username, createdAt: user.createdAt });
    return reply.header("cache-control", "no-store").redirect(CONSOLE_HOME, 303);
  });

  app.post(`${SIGN_IN_PATH}/tenant`, onRequest(deps.startLimit), async (req, reply) => {
    if (!formMatches(req)) return expired(reply);
    const tenant = (field(req, "tenant") ?? "").trim().toLowerCase();
    if (!TENANT_ID.test(tenant) || !signsIn(deps.tenant(tenant), signIn, tenant))
      return form(reply, 404, {
        tenantError: `No tenant "${tenant.slice(0, 63)}" whose admins sign in here. Check the name; a tenant without OAuth sign-in is administered by platform admins.`,
        tenant,
      });
    // Chromium applies CSP form-action to each redirect that follows a form submission, so the
    // sign-in page (form-action 'self') cannot lead to an external tenant's issuer: a page naming
    // the issuer, whose form may end up there, comes first (as the login page's for an oidc tenant).
    const external = signIn.externalLogin(tenant);
    if (external && field(req, "issuer") === undefined) {
      const endpoint = (await federation.authorizationEndpoint(external)) ?? external.issuer;
      const target = formActionSource(endpoint);
      return html(
        reply,
        200,
        issuerPage({ csrf: field(req, "csrf")!, tenant, issuer: new URL(external.issuer).host }),
        target === undefined ? [] : [target],
      );
    }
    try {
      return await signIn.start(reply, tenant, CONSOLE_HOME);
    } catch (err) {
      if (!(err instanceof SignInError)) throw err;
      return error(reply, err.status, "Sign-in unavailable", err.shown);
    }
  });

  /** A tenant sign-in came back: admitted only as an admin of the tenant. */
  const returned =
    (finish: (req: FastifyRequest) => Promise<SignedIn>) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      let who: SignedIn;
      try {
        who = await finish(req);
      } catch (err) {
        if (!(err instanceof SignInError)) throw err;
        req.log.warn({ why: err.message }, "console: tenant sign-in failed");
        return error(reply, err.status, "Sign-in failed", err.shown);
      }
      const standing = await tenantAdmins.standing(who.tenant, who);
      if (!standing) {
        req.log.info(
          { tenant: who.tenant, sub: who.sub },
          "console: signed in, but not an admin of the tenant",
        );
        return error(
          reply,
          403,
          "Not an admin",
          `You signed in as ${who.name}, who is not an admin of tenant "${who.tenant}". Ask a platform admin to give you the tenant-admin role (local users) or to name you an admin of the tenant.`,
        );
      }
      await sessions.create(reply, {
        kind: "tenant",
        tenant: who.tenant,
        sub: who.sub,
        ...(standing.username !== undefined && { username: standing.username }),
        name: who.name,
      });
      return reply.header("cache-control", "no-store").redirect(CONSOLE_HOME, 303);
    };
  app.get(
    CONSOLE_SIGNED_IN_PATH,
    returned((req) => signIn.finishPortico(req)),
  );
  app.get(
    EXTERNAL_RETURN_PATH,
    returned((req) => signIn.finishExternal(req)),
  );
}

/** Tenants whose people sign in: Portico's own OAuth (local users or their OpenID provider), or an external issuer with `login`. */
function signsIn(config: TenantConfig | undefined, signIn: AccountsSignIn, id: string): boolean {
  if (config?.auth !== "oauth") return false;
  return config.identity?.type !== "external" || signIn.externalLogin(id) !== undefined;
}
