// The console's sign-in page (docs/admin-api.md "Console sessions"): a platform admin's username and
// password, or the tenant a tenant admin signs in to (then that tenant's usual sign-in). Plain
// labelled forms, no scripts, every value escaped, in the look of the login pages (oauth/pages.ts).
import { escapeHtml, page } from "../oauth/pages.js";

export interface SignInPage {
  /** The form token, also in the form cookie. */
  readonly csrf: string;
  /** Under the platform form. */
  readonly platformError?: string;
  /** Under the tenant form. */
  readonly tenantError?: string;
  readonly username?: string;
  readonly tenant?: string;
  /** Said above the forms: the browser has just signed out. */
  readonly signedOut?: boolean;
}

/** Usernames and tenant ids are short: a longer value is not echoed back. */
const shown = (value: string | undefined, max: number) =>
  value !== undefined && value.length <= max ? escapeHtml(value) : "";

const alert = (text: string | undefined) =>
  text ? `<p class="error" role="alert">${escapeHtml(text)}</p>` : "";

export function signInPage(p: SignInPage): string {
  const csrf = `<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">`;
  return page(
    "Sign in to the Portico console",
    `<h1>Sign in to the console</h1>${p.signedOut ? `<p role="status">You have signed out.</p>` : ""}
<section aria-labelledby="platform-heading"><h2 id="platform-heading">Platform admin</h2>
<form method="post" action="/admin/console/sign-in/platform">${csrf}${alert(p.platformError)}
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required maxlength="64" value="${shown(p.username, 64)}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form></section>
<section aria-labelledby="tenant-heading"><h2 id="tenant-heading">Tenant admin</h2>
<p class="muted">You sign in the way your tenant's users do; the console then checks that you are one of its admins.</p>
<form method="post" action="/admin/console/sign-in/tenant">${csrf}${alert(p.tenantError)}
<label for="tenant">Tenant</label><input id="tenant" name="tenant" required maxlength="63" autocapitalize="none" spellcheck="false" value="${shown(p.tenant, 63)}">
<button type="submit">Continue</button></form></section>
<p class="muted"><a href="/">Portico</a> · <a href="/admin/docs">Admin API reference</a></p>`,
  );
}

/** An external tenant's step before its issuer: names where the admin is about to sign in. */
export function issuerPage(p: {
  readonly csrf: string;
  readonly tenant: string;
  readonly issuer: string;
}): string {
  return page(
    "Sign in to the Portico console",
    `<h1>Sign in to the console</h1>
<p>Tenant <code>${escapeHtml(p.tenant)}</code> signs its admins in at <code>${escapeHtml(p.issuer)}</code>.</p>
<form method="post" action="/admin/console/sign-in/tenant"><input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<input type="hidden" name="tenant" value="${escapeHtml(p.tenant)}"><input type="hidden" name="issuer" value="${escapeHtml(p.issuer)}">
<button type="submit">Continue to ${escapeHtml(p.issuer)}</button></form>
<p><a href="/admin/console/sign-in">Back to sign-in</a></p>`,
  );
}

/** A page that says what went wrong and offers to start again. */
export function consoleErrorPage(title: string, detail: string): string {
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p><p><a href="/admin/console/sign-in">Back to sign-in</a></p>`,
  );
}
