// The connected-accounts pages (docs/upstream-auth.md): the connect link (bound to the MCP user:
// opening it needs signing in as them, another user gets 403 and is never sent to the upstream),
// the one callback of every connect flow, the sign-in returns, the user's accounts page with
// Disconnect buttons (POST, CSRF token of the session), and Portico's Client ID Metadata Document.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import { pageCsp } from "../html/page-headers.js";
import type { TenantConfig } from "../records/tenant.js";
import type { BrowserSession, BrowserSessions } from "./browser-sessions.js";
import { CALLBACK_PATH, UPSTREAM_CLIENT_PATH, upstreamClientDocument } from "./client-identity.js";
import { ConnectError, type ConnectFlows } from "./connect-flow.js";
import type { ConnectedAccounts } from "./connected-accounts.js";
import type { ConnectLink, ConnectLinks } from "./links.js";
import { ACCOUNTS_STYLE, accountsErrorPage, accountsPage, connectedPage, connectPage } from "./pages.js";
import { EXTERNAL_SIGNED_IN_PATH, SignInError, type AccountsSignIn, type SignedIn } from "./sign-in.js";
import { ACCOUNTS_SIGNED_IN_PATH } from "../oauth/connect-client.js";
import { perUserRefusal } from "../records/user-oauth.js";

/** The audit log as the accounts pages write to it (audit/audit.ts AuditLog fits). */
export interface AccountsAudit {
  record(entry: {
    actor: string;
    action: string;
    tenant: string;
    target: string;
    user: { sub: string; username?: string };
    before: Record<string, unknown>;
  }): Promise<void>;
}

export interface AccountsRoutesDeps {
  readonly publicUrl: string;
  /** A tenant's record as this replica has it. */
  readonly tenant: (id: string) => TenantConfig | undefined;
  readonly accounts: ConnectedAccounts;
  readonly flows: ConnectFlows;
  readonly links: ConnectLinks;
  readonly sessions: BrowserSessions;
  readonly signIn: AccountsSignIn;
  readonly audit?: AccountsAudit;
  /**
   * Per-address limit of the pages that may start a sign-in, each holding a pending flow in the
   * store for 10 minutes (the /oauth/authorize budget): nobody signed in can fill the store.
   */
  readonly signInLimit?: onRequestAsyncHookHandler;
}

type Form = Record<string, string | string[]>;

/** Headers of an accounts page whose forms may end up at `targets` (origins) besides Portico. */
function headers(targets: readonly string[] = []): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": pageCsp({ styles: [ACCOUNTS_STYLE], formAction: ["'self'", ...targets] }),
  };
}

export async function accountsPlugin(app: FastifyInstance, deps: AccountsRoutesDeps): Promise<void> {
  const { publicUrl, accounts, flows, links, sessions, signIn } = deps;
  const startsSignIn = deps.signInLimit ? { onRequest: deps.signInLimit } : {};
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) form[k] = form[k] === undefined ? v : [v];
    done(null, form);
  });
  const page = (reply: FastifyReply, status: number, html: string, targets: readonly string[] = []) =>
    reply.code(status).headers(headers(targets)).send(html);
  const error = (reply: FastifyReply, status: number, title: string, detail: string) =>
    page(reply, status, accountsErrorPage(title, detail));
  const field = (req: FastifyRequest, name: string) => {
    const v = ((req.body ?? {}) as Form)[name];
    return typeof v === "string" ? v : undefined;
  };
  /** Tenants with users to sign in, where accounts can be connected. */
  const accountsTenant = (id: string) => {
    const config = deps.tenant(id);
    return config !== undefined && perUserRefusal(config) === undefined;
  };
  /** Sends the browser to sign in; a sign-in that cannot start is a page saying so. */
  const startSignIn = async (reply: FastifyReply, tenant: string, next: string) => {
    try {
      return await signIn.start(reply, tenant, next);
    } catch (err) {
      if (!(err instanceof SignInError)) throw err;
      return error(reply, err.status, "Sign-in unavailable", err.shown);
    }
  };
  const expiredLink = (reply: FastifyReply) =>
    error(
      reply,
      400,
      "Link expired",
      "This connect link is not valid or has expired. Ask your application again: it gives you a new one.",
    );
  /** The link's session, or the answer to give: sign in first, or 403 for another user's link. */
  const holder = async (req: FastifyRequest, reply: FastifyReply, link: ConnectLink, raw: string) => {
    const session = await sessions.of(req, link.tenant);
    if (!session) return { reply: await startSignIn(reply, link.tenant, `/accounts/connect?link=${raw}`) };
    if (session.sub !== link.user)
      return {
        reply: await error(
          reply,
          403,
          "Not your link",
          "This link was made for another user. Open the link your own application gave you, signed in as yourself.",
        ),
      };
    return { session };
  };

  app.get(UPSTREAM_CLIENT_PATH, async (_req, reply) =>
    reply
      .header("access-control-allow-origin", "*")
      .header("cache-control", "public, max-age=3600")
      .send(upstreamClientDocument(publicUrl)),
  );

  app.get("/accounts/connect", startsSignIn, async (req, reply) => {
    const raw = (req.query as { link?: unknown }).link;
    const link = links.verify(raw);
    if (!link || !accountsTenant(link.tenant)) return expiredLink(reply);
    const held = await holder(req, reply, link, raw as string);
    if (!held.session) return held.reply;
    const config = accounts.deps.providerOf(link.tenant, link.provider);
    if (!config)
      return error(
        reply,
        404,
        "Nothing to connect",
        "This provider no longer asks you to connect an account.",
      );
    // Chromium applies form-action to the redirect after the POST: the upstream's server is a target.
    let target: string;
    try {
      const { as } = await accounts.deps.servers.discover(config.url, config.auth.issuer);
      target = new URL(as.authorization_endpoint ?? as.issuer).origin;
    } catch (err) {
      req.log.warn(
        { tenant: link.tenant, provider: link.provider, why: String(err) },
        "connect: discovery failed",
      );
      accounts.deps.onEvent?.("connect_failed");
      return error(
        reply,
        502,
        "Provider unavailable",
        "The provider's sign-in cannot be reached right now. Try again later; if it keeps failing, tell your administrator.",
      );
    }
    const connected = (await accounts.list(link.tenant, link.user)).some((a) => a.provider === link.provider);
    const html = connectPage({
      tenant: link.tenant,
      provider: link.provider,
      user: held.session.name,
      link: raw as string,
      csrf: held.session.csrf,
      connected,
    });
    return page(reply, 200, html, [target]);
  });

  app.post("/accounts/connect", async (req, reply) => {
    const raw = field(req, "link");
    const link = links.verify(raw);
    if (!link || !accountsTenant(link.tenant)) return expiredLink(reply);
    const held = await holder(req, reply, link, raw!);
    if (!held.session) return held.reply;
    if (!sessions.csrfMatches(held.session, field(req, "csrf")))
      return error(reply, 403, "Form expired", "This page is out of date. Open the connect link again.");
    try {
      const url = await flows.begin(link, sessions.binding(req)!);
      return reply.header("cache-control", "no-store").redirect(url.toString(), 303);
    } catch (err) {
      return connectFailed(req, reply, err);
    }
  });

  const connectFailed = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    if (!(err instanceof ConnectError)) throw err;
    req.log.warn({ why: err.logged }, "connect flow failed");
    accounts.deps.onEvent?.("connect_failed");
    return error(reply, err.status, "Not connected", err.shown);
  };

  app.get(CALLBACK_PATH, async (req, reply) => {
    try {
      const { tenant, provider } = await flows.complete(new URL(req.url, publicUrl), sessions.binding(req));
      return page(reply, 200, connectedPage(tenant, provider));
    } catch (err) {
      return connectFailed(req, reply, err);
    }
  });

  const signedIn =
    (finish: (req: FastifyRequest) => Promise<SignedIn>) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        const { tenant, sub, name, next } = await finish(req);
        await sessions.create(reply, { tenant, sub, name });
        // Only ever a page of ours: `next` was set by this server, but check anyway.
        return reply.redirect(next.startsWith("/accounts/") ? next : "/accounts/", 303);
      } catch (err) {
        if (!(err instanceof SignInError)) throw err;
        req.log.warn({ why: err.message }, "accounts sign-in failed");
        return error(reply, err.status, "Sign-in failed", err.shown);
      }
    };
  app.get(
    ACCOUNTS_SIGNED_IN_PATH,
    signedIn((req) => signIn.finishPortico(req)),
  );
  app.get(
    EXTERNAL_SIGNED_IN_PATH,
    signedIn((req) => signIn.finishExternal(req)),
  );

  const listPage = async (reply: FastifyReply, session: BrowserSession, notice?: string) => {
    const list = await accounts.list(session.tenant, session.sub);
    const html = accountsPage({
      tenant: session.tenant,
      user: session.name,
      csrf: session.csrf,
      accounts: list,
      ...(notice && { notice }),
    });
    return page(reply, 200, html);
  };
  const noTenant = (reply: FastifyReply) =>
    error(reply, 404, "Not found", "There are no connected accounts here.");

  app.get("/accounts/tenant/:tenant", startsSignIn, async (req, reply) => {
    const tenant = (req.params as { tenant: string }).tenant;
    if (!accountsTenant(tenant)) return noTenant(reply);
    const session = await sessions.of(req, tenant);
    if (!session) return startSignIn(reply, tenant, `/accounts/tenant/${tenant}`);
    return listPage(reply, session);
  });

  app.post("/accounts/tenant/:tenant/disconnect", async (req, reply) => {
    const tenant = (req.params as { tenant: string }).tenant;
    if (!accountsTenant(tenant)) return noTenant(reply);
    const session = await sessions.of(req, tenant);
    if (!session || !sessions.csrfMatches(session, field(req, "csrf")))
      return error(
        reply,
        403,
        "Form expired",
        "This page is out of date. Open your connected accounts again.",
      );
    const provider = field(req, "provider") ?? "";
    const removed = await accounts.disconnect(tenant, session.sub, provider);
    if (removed)
      await deps.audit?.record({
        actor: `user:${session.sub}`,
        action: "account.disconnect",
        tenant,
        // The name the pages show: a username or e-mail the sign-in gave, when it gave one.
        user:
          session.name === session.sub ? { sub: session.sub } : { sub: session.sub, username: session.name },
        target: `${provider} ${session.sub}`,
        before: { ...removed },
      });
    return listPage(reply, session, removed ? `Disconnected ${provider}.` : `${provider} was not connected.`);
  });
}
