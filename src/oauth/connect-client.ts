// The Client ID Metadata Document of `portico connect` (docs/connect.md), served by every Portico at
// a fixed path so the bridge needs no registration: a public native client with a loopback redirect
// URI (any port, RFC 8252 §7.3). Portico resolves its own document without fetching it, so this
// works behind private addresses and on plain-http test deployments too.
import type { ClientIdMetadata } from "./client-metadata.js";
import { validateRegistration } from "./clients.js";

/** Where the document lives under the issuer. */
export const CONNECT_CLIENT_PATH = "/oauth/clients/portico-connect.json";

/** The bridge's document as this issuer serves it: its client_id is its own URL. */
export function connectClientDocument(issuer: string): ClientIdMetadata {
  const metadata = validateRegistration({
    client_name: "portico connect",
    redirect_uris: ["http://127.0.0.1/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: "native",
  });
  return { ...metadata, client_id: `${issuer}${CONNECT_CLIENT_PATH}`, client_name: "portico connect" };
}

/** Where the connected-accounts pages' document lives under the issuer (docs/upstream-auth.md). */
export const ACCOUNTS_CLIENT_PATH = "/oauth/clients/portico-accounts.json";
/** Where Portico's sign-in sends the browser back to the accounts pages. */
export const ACCOUNTS_SIGNED_IN_PATH = "/accounts/signed-in";

/**
 * The connected-accounts pages as a client of this issuer: they sign users in through Portico's own
 * login (local password or the tenant's OpenID provider). First-party: no consent page, and the
 * code is redeemed in-process for the user's `sub` alone (no token is issued).
 */
export function accountsClientDocument(issuer: string): ClientIdMetadata {
  // Written out, not validated as a registration: the issuer may be a test's port-0 placeholder.
  return {
    client_id: `${issuer}${ACCOUNTS_CLIENT_PATH}`,
    client_name: "Portico connected accounts",
    redirect_uris: [`${issuer}${ACCOUNTS_SIGNED_IN_PATH}`],
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: issuer.startsWith("https:") ? "web" : "native",
  };
}

/** Where the console's document lives under the issuer (docs/admin-api.md "Console sessions"). */
export const CONSOLE_CLIENT_PATH = "/oauth/clients/portico-console.json";
/** Where Portico's sign-in sends a tenant admin back to the console. */
export const CONSOLE_SIGNED_IN_PATH = "/admin/console/sign-in/done";

/**
 * The console's sign-in of tenant admins as a client of this issuer, first-party as the accounts
 * pages are: no consent page, the code redeemed in-process for the user's `sub` alone.
 */
export function consoleClientDocument(issuer: string): ClientIdMetadata {
  return {
    client_id: `${issuer}${CONSOLE_CLIENT_PATH}`,
    client_name: "Portico console",
    redirect_uris: [`${issuer}${CONSOLE_SIGNED_IN_PATH}`],
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: issuer.startsWith("https:") ? "web" : "native",
  };
}
