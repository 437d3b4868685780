// The connected-accounts pages' HTML: the connect confirmation, the accounts list with its
// Disconnect buttons, and the error pages. Plain forms, no scripts, every value escaped; served
// with the OAuth pages' headers (oauth/pages.ts pageHeaders, and the page-headers hook).
import { escapeHtml } from "../oauth/pages.js";
import type { AccountView } from "./account-store.js";

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}button{margin:1rem .5rem 0 0;padding:.55rem 1.2rem;font:inherit;cursor:pointer}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.4rem;border-bottom:1px solid #d0d7de}
td button{margin:0}.muted{color:#59636e;font-size:.9rem}code{word-break:break-all}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}.muted{color:#9198a1}}`;

/** The style element's content, for the CSP's style-src hash. */
export const ACCOUNTS_STYLE = STYLE;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
}

export interface ConnectPage {
  readonly tenant: string;
  readonly provider: string;
  readonly user: string;
  readonly link: string;
  readonly csrf: string;
  readonly connected: boolean;
}

/** "Connect your <provider> account": one button, a POST, before the browser leaves for the upstream. */
export function connectPage(p: ConnectPage): string {
  const again = p.connected
    ? `<p class="muted">Your account is already connected; connecting again replaces it.</p>`
    : "";
  return page(
    `Connect ${p.provider}`,
    `<h1>Connect your ${escapeHtml(p.provider)} account</h1>
<p>Signed in as <strong>${escapeHtml(p.user)}</strong> on tenant <strong>${escapeHtml(p.tenant)}</strong>.</p>
<p>You will sign in at <strong>${escapeHtml(p.provider)}</strong>'s own sign-in page; Portico then calls its tools with your account, for you only.</p>${again}
<form method="post" action="/accounts/connect">${hidden({ link: p.link, csrf: p.csrf })}<button type="submit">Connect ${escapeHtml(p.provider)}</button></form>
<p class="muted"><a href="/accounts/tenant/${encodeURIComponent(p.tenant)}">Your connected accounts</a></p>`,
  );
}

/** After the callback: the user goes back to their application, which retries. */
export function connectedPage(tenant: string, provider: string): string {
  return page(
    "Connected",
    `<h1>Connected</h1><p>Your <strong>${escapeHtml(provider)}</strong> account is connected. You can close this page and go back to your application.</p>
<p class="muted"><a href="/accounts/tenant/${encodeURIComponent(tenant)}">Your connected accounts</a></p>`,
  );
}

export interface AccountsPage {
  readonly tenant: string;
  readonly user: string;
  readonly csrf: string;
  readonly accounts: readonly AccountView[];
  readonly notice?: string;
}

/** The user's connected accounts (never a token), each with a Disconnect button. */
export function accountsPage(p: AccountsPage): string {
  const rows = p.accounts
    .map(
      (a) =>
        `<tr><td><strong>${escapeHtml(a.provider)}</strong></td><td class="muted">since ${escapeHtml(a.connectedAt.slice(0, 10))}</td><td><form method="post" action="/accounts/tenant/${encodeURIComponent(p.tenant)}/disconnect">${hidden({ provider: a.provider, csrf: p.csrf })}<button type="submit">Disconnect</button></form></td></tr>`,
    )
    .join("");
  const list = rows
    ? `<table><thead><tr><th>Provider</th><th>Connected</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p>No connected accounts.</p>`;
  const notice = p.notice ? `<p role="status">${escapeHtml(p.notice)}</p>` : "";
  return page(
    "Connected accounts",
    `<h1>Connected accounts</h1><p>Signed in as <strong>${escapeHtml(p.user)}</strong> on tenant <strong>${escapeHtml(p.tenant)}</strong>.</p>${notice}${list}
<p class="muted">Disconnecting removes Portico's copy of your tokens and asks the provider to revoke them.</p>`,
  );
}

export function accountsErrorPage(title: string, detail: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p>`);
}
