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
