// src/providers/user-tokens.ts
// Where per-user upstream credentials come from (docs/upstream-auth.md): a connected account (the
// user's own OAuth grant at the upstream) or a token exchange. Providers import this; it imports
// nothing from src/mcp/.

/** One user's credential for one provider's upstream. */
export interface UserTokenSource {
  /**
   * A usable access token for `user` (the MCP caller's `sub`) at `provider`'s upstream, refreshed
   * ahead of expiry (one refresh at a time across replicas); undefined when the user has none.
   */
  tokenFor(tenant: string, user: string, provider: string): Promise<string | undefined>;
  /** The upstream refused the token (401 even after a refresh): dropped, the user is asked again. */
  refused(tenant: string, user: string, provider: string): Promise<void>;
  /**
   * A link that connects `user`'s account for `provider`, bound to that user (opening it needs
   * signing in as them), short-lived; `elicitationId` is echoed in the change when it completes.
   * Undefined for sources that need no user action (token exchange).
   */
  connectUrl?(tenant: string, user: string, provider: string, elicitationId?: string): Promise<string>;
  /** Changes of any user's accounts, seen on every replica (connected, disconnected, revoked). */
  onChange(listener: (change: AccountChange) => void): () => void;
}

export interface AccountChange {
  readonly tenant: string;
  readonly user: string;
  readonly provider: string;
  readonly connected: boolean;
  /** The elicitation ids of the connect links that completed (URL-mode elicitation, 2025-11-25). */
  readonly elicitationIds?: readonly string[];
}
