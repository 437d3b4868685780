// One user's credentials at one provider's upstream (docs/upstream-auth.md): every upstream request
// of that user's upstream sessions asks the user's token source, so a refreshed or revoked token
// takes effect at once. A 401 gets one more try with what the source gives then; a second 401
// tells the source the token is refused, and the user is asked to connect again.
import type { UserTokenSource } from "../user-tokens.js";
import { type Authorizer, UpstreamAuthError } from "../upstream-auth.js";

/** Tokens remembered for redaction: the current one and the one it replaced. */
const REMEMBERED_TOKENS = 2;

/** The user has no token for the provider (never connected, revoked, or refused). */
export class NotConnectedError extends UpstreamAuthError {
  constructor(provider: string) {
    super(`the user has not connected their account for provider '${provider}'`);
  }
}

export interface UserKey {
  readonly tenant: string;
  readonly user: string;
  readonly provider: string;
}

export class UserCredentials implements Authorizer {
  readonly configured = true;
  readonly refreshable = true;
  readonly #issued: string[] = [];
  /** Whether the source had a token at the last look (undefined: not asked yet). */
  #connected: boolean | undefined;

  /** `absent` runs when the source turns out to have no token for the user any more. */
  constructor(
    private readonly source: UserTokenSource,
    private readonly key: UserKey,
    private readonly absent: () => void,
  ) {}

  get connected(): boolean | undefined {
    return this.#connected;
  }

  /** Asks the source whether the user has a token now (true when they do). */
  async check(): Promise<boolean> {
    const { tenant, user, provider } = this.key;
    const token = await this.source.tokenFor(tenant, user, provider);
    this.#connected = token !== undefined;
    return this.#connected;
  }

  async authorization(): Promise<string> {
    const { tenant, user, provider } = this.key;
    const token = await this.source.tokenFor(tenant, user, provider);
    if (token === undefined) {
      this.#lost();
      throw new NotConnectedError(provider);
    }
    this.#connected = true;
    if (this.#issued[0] !== token) {
      this.#issued.unshift(token);
      this.#issued.length = Math.min(this.#issued.length, REMEMBERED_TOKENS);
    }
    return `Bearer ${token}`;
  }

  /**
   * The next request asks the source again: a connected account's source may have refreshed the
   * token meanwhile; a source with nothing to connect (token exchange) drops it and issues anew.
   */
  invalidate(): void {
    if (this.source.connectUrl) return;
    const { tenant, user, provider } = this.key;
    void this.source.refused(tenant, user, provider).catch(() => undefined);
  }

  /** The upstream refused the user's token twice: the source drops it. */
  refusedAgain(): void {
    const { tenant, user, provider } = this.key;
    void this.source.refused(tenant, user, provider).catch(() => undefined);
    // A source the user cannot connect again (token exchange) exchanges anew on the next request.
    if (this.source.connectUrl) this.#lost();
  }

  secrets(): string[] {
    return [...this.#issued];
  }

  #lost(): void {
    const was = this.#connected;
    this.#connected = false;
    if (was !== false) this.absent();
  }
}
