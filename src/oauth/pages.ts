// The authorization server's HTML: login, consent and error pages. Plain accessible forms
// (labelled inputs, autocomplete hints for password managers), no scripts, every value escaped,
// served with a CSP that allows only the page's own style and forbids framing (consent pages must
// not be framed: clickjacking); the page-headers hook adds the rest (docs/security.md).
import { pageCsp } from "../html/page-headers.js";

/**
 * The headers of a login, consent or error page whose forms may end up at `formTargets` (CSP
 * source expressions) besides Portico itself.
 */
export function pageHeaders(formTargets: readonly string[] = []): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": pageCsp({ styles: [STYLE], formAction: ["'self'", ...formTargets] }),
  };
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input,select{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.55rem 1.2rem;font:inherit;cursor:pointer}
.error{color:#b3261e}.muted{color:#59636e;font-size:.9rem}code{word-break:break-all}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}.muted{color:#9198a1}}`;

/** A page in the look of the login pages (the console's sign-in uses it too); served with pageHeaders. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** Usernames have at most 64 characters (the admin API's rule): a longer one is not echoed back. */
const USERNAME_MAX = 64;

function shownUsername(username: string | undefined): string {
  return username !== undefined && username.length <= USERNAME_MAX ? username : "";
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
}

export interface LoginPage {
  readonly flow: string;
  readonly csrf: string;
  readonly clientName: string;
  /** The tenant being signed in to; absent when the user must pick one. */
  readonly tenant?: string;
  readonly tenants?: readonly string[];
  readonly username?: string;
  readonly error?: string;
  /** Label of the tenant's external identity provider, when it has one. */
  readonly federated?: string;
}

export function loginPage(p: LoginPage): string {
  const tenantField = p.tenant
    ? `<p class="muted">Tenant <strong>${escapeHtml(p.tenant)}</strong></p>`
    : `<label for="tenant">Tenant</label><select id="tenant" name="tenant" required>${(p.tenants ?? [])
        .map((t) => `<option value="${escapeHtml(t)}">${escapeHtml(t)}</option>`)
        .join("")}</select>`;
  const federated = p.federated
    ? `<form method="post" action="/oauth/login">${hidden({ flow: p.flow, csrf: p.csrf, federated: "1" })}<button type="submit">Sign in with ${escapeHtml(p.federated)}</button></form><p class="muted">or with a password:</p>`
    : "";
  return page(
    "Sign in",
    `<h1>Sign in</h1><p><strong>${escapeHtml(p.clientName)}</strong> wants to use your MCP tools.</p>${federated}
<form method="post" action="/oauth/login">${hidden({ flow: p.flow, csrf: p.csrf })}${tenantField}
${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ""}
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required value="${escapeHtml(shownUsername(p.username))}" autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

export interface ConsentPage {
  readonly flow: string;
  readonly csrf: string;
  readonly clientName: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly tenant: string;
  readonly user: string;
  readonly scopes: readonly { readonly name: string; readonly description: string }[];
}

export function consentPage(p: ConsentPage): string {
  const scopes = p.scopes
    .map((s) => `<li><code>${escapeHtml(s.name)}</code>: ${escapeHtml(s.description)}</li>`)
    .join("");
  return page(
    "Allow access?",
    `<h1>Allow access?</h1>
<p><strong>${escapeHtml(p.clientName)}</strong> wants to act for <strong>${escapeHtml(p.user)}</strong> on tenant <strong>${escapeHtml(p.tenant)}</strong>:</p>
<ul>${scopes}</ul>
<p class="muted">Client id: <code>${escapeHtml(p.clientId)}</code><br>You will be sent back to: <code>${escapeHtml(p.redirectUri)}</code></p>
<form method="post" action="/oauth/consent">${hidden({ flow: p.flow, csrf: p.csrf })}
<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}

/** An error the browser shows instead of being redirected (an unverified client or redirect URI). */
export function errorPage(title: string, detail: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p>`);
}
