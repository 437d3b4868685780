// Who is calling (docs/policy.md, "Groups and roles"): what the resource server found in a request's
// access token, as the policy, the per-user caps and the MCP endpoint read it.

export interface Authenticated {
  readonly principal: string;
  /** The user (`sub`) whatever the client: per-user caps (sessions, request limits). */
  readonly user: string;
  /** A local user's username, when the token names it (the audit log shows it beside `user`). */
  readonly username?: string;
  /** The OAuth client the token was issued to. */
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** Groups and roles as the token says them at issuance (policy subjects, docs/policy.md). */
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  /** Set when the client wrote the MCP URL with a trailing slash: its challenges name that resource. */
  readonly trailingSlash?: true;
}
