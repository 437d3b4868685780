// Environment variables of the authorization server's limits (docs/oauth.md): requests per minute
// on /oauth per client address, what dynamic registration may store and for how long, and the
// login back-off.
import type { VarSpec } from "./types.js";

export const OAUTH_VARS: readonly VarSpec[] = [
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_REQUESTS_PER_MINUTE",
    key: "oauthRequestsPerMinute",
    type: "int",
    default: "60",
    min: 0,
    max: 100000000,
    description:
      'Limit per client IP on each of `/oauth/token`, `/oauth/revoke` (both authenticate client secrets) and `/oauth/register`, per minute. `0`: no limit. Over it: 429, `Retry-After` and `{"error":"temporarily_unavailable"}`.',
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_AUTHORIZE_REQUESTS_PER_MINUTE",
    key: "oauthAuthorizeRequestsPerMinute",
    type: "int",
    default: "300",
    min: 0,
    max: 100000000,
    description:
      "Limit per client IP on `GET /oauth/authorize` and the connected-accounts pages that start a sign-in (`GET /accounts/connect`, `GET /accounts/tenant/{t}`), one budget, per minute, counted across all replicas: each request holds a pending sign-in in the store for 10 minutes, so this bounds what one address can make the store hold. High enough for an office behind one NAT signing in at once. `0`: no limit. Over it: 429 with `Retry-After` and an HTML page.",
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_LOGIN_REQUESTS_PER_MINUTE",
    key: "oauthLoginRequestsPerMinute",
    type: "int",
    default: "30",
    min: 0,
    max: 100000000,
    description:
      "Limit per client IP on `POST /oauth/login` (password submissions), per minute, counted across all replicas. `0`: no limit. Over it: 429 with `Retry-After` and an HTML page.",
  },
  {
    name: "PORTICO_RATE_LIMIT_OAUTH_CONSENT_REQUESTS_PER_MINUTE",
    key: "oauthConsentRequestsPerMinute",
    type: "int",
    default: "30",
    min: 0,
    max: 100000000,
    description:
      "Limit per client IP on `POST /oauth/consent`, per minute, counted across all replicas. `0`: no limit. Over it: 429 with `Retry-After` and an HTML page.",
  },
  {
    name: "PORTICO_OAUTH_REGISTRATIONS_PER_HOUR",
    key: "oauthRegistrationsPerHour",
    type: "int",
    default: "30",
    min: 0,
    max: 1000000,
    description:
      'Clients one client address (IPv6 by /64) may register through `/oauth/register` per hour, counted across all replicas (an MCP client registers once per install, or again when its registration expired). `0`: no budget. Over it: 429, `Retry-After` and `{"error":"temporarily_unavailable"}`.',
  },
  {
    name: "PORTICO_OAUTH_REGISTRATION_MAX_BYTES",
    key: "oauthRegistrationMaxBytes",
    type: "int",
    default: "4096",
    min: 512,
    max: 1048576,
    description:
      'Largest `/oauth/register` request body, in bytes. MCP clients (VS Code, Claude, Cursor, mcp-remote) send a few hundred. Over it: 400 `{"error":"invalid_client_metadata"}`.',
  },
  {
    name: "PORTICO_OAUTH_UNUSED_CLIENT_TTL_SECONDS",
    key: "oauthUnusedClientTtlSeconds",
    type: "int",
    default: "86400",
    min: 1,
    max: 31536000,
    description:
      "A client registered through `/oauth/register` that never obtains a token is deleted after this many seconds; a confidential client's `client_secret_expires_at` says when. Pre-registered clients (admin API) and Client ID Metadata Documents are not affected.",
  },
  {
    name: "PORTICO_OAUTH_IDLE_CLIENT_TTL_SECONDS",
    key: "oauthIdleClientTtlSeconds",
    type: "int",
    default: "2592000",
    min: 1,
    max: 315360000,
    description:
      "A client registered through `/oauth/register` is deleted this many seconds after the last refresh token issued to it expires (30 days after its last token, by default): each token it obtains pushes its deletion back. Coming back later, it registers again.",
  },
  {
    name: "PORTICO_LOGIN_THROTTLE_FAILURES",
    key: "loginThrottleFailures",
    type: "int",
    default: "5",
    min: 0,
    max: 1000,
    description:
      "Failed logins to one username from one client address (IPv6 by /64) within an hour before that address must wait before its next try on it: 1 s, then 2 s, 4 s … up to `PORTICO_LOGIN_THROTTLE_MAX_SECONDS`, checked before the password is hashed (docs/security.md). A success from the address resets its count. `0`: no per-address back-off.",
  },
  {
    name: "PORTICO_LOGIN_THROTTLE_ACCOUNT_FAILURES",
    key: "loginThrottleAccountFailures",
    type: "int",
    default: "50",
    min: 0,
    max: 100000,
    description:
      "Failed logins to one username from all addresses within an hour before the account-wide back-off (1 s, 2 s … up to 60 s): it slows every address that has failed on the username, never one that has not, so a stranger cannot lock the user out. `0`: no account-wide back-off.",
  },
  {
    name: "PORTICO_LOGIN_THROTTLE_MAX_SECONDS",
    key: "loginThrottleMaxSeconds",
    type: "int",
    default: "900",
    min: 1,
    max: 86400,
    description: "Longest per-address login back-off, in seconds.",
  },
];
