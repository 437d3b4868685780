// Validation of `auth: {"type": "token_exchange"}` (RFC 8693, docs/upstream-auth.md "Token exchange"):
// the STS's token endpoint, the client Portico authenticates as, and what the token is asked for.
import type { TokenExchangeAuth } from "./tenant.js";
import { at, bad, compact, httpUrl, optional, resourceIndicator, SCOPE, str, type Obj } from "./fields.js";

export const TOKEN_EXCHANGE_KEYS = [
  "type",
  "tokenUrl",
  "audience",
  "resource",
  "scope",
  "clientId",
  "clientSecret",
  "authMethod",
] as const;

/** The token exchange credentials of a provider; the client secret never appears in messages. */
export function tokenExchange(o: Obj, path: string): TokenExchangeAuth {
  const tokenUrl = httpUrl(o, "tokenUrl", path, "clientId and clientSecret");
  // RFC 6749 §3.2: the endpoint URI MUST NOT include a fragment component.
  if (tokenUrl.includes("#")) bad(at(path, "tokenUrl"), "must not include a fragment (RFC 6749 §3.2)");
  const authMethod = o.authMethod;
  if (authMethod !== undefined && authMethod !== "client_secret_basic" && authMethod !== "client_secret_post")
    bad(at(path, "authMethod"), 'must be "client_secret_basic" or "client_secret_post"');
  // RFC 8693 §2.1: audience is a logical name (any string); resource an absolute URI.
  const audience = str(o, "audience", path);
  if (audience !== undefined && audience.length > 2048)
    bad(at(path, "audience"), "must be at most 2048 characters");
  return compact({
    type: "token_exchange" as const,
    tokenUrl,
    audience,
    resource: resourceIndicator(o, path),
    scope: optional(o, "scope", path, SCOPE, "space-separated scope tokens (RFC 6749 §3.3)"),
    clientId: str(o, "clientId", path, true),
    clientSecret: str(o, "clientSecret", path, true),
    authMethod,
  });
}
