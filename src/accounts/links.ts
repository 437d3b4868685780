// Connect links (docs/upstream-auth.md "The connect link"): bound to the MCP principal that asked
// (tenant and user `sub`), the provider, and the elicitation that waits for it; signed with a key
// of their own (HKDF purpose "accounts-link") and short-lived, so any replica checks one without a
// store read and nobody can forge or stretch one. Opening one still needs signing in as that user.
import type { Secrets } from "../crypto/secrets.js";

export const LINK_TTL_SECONDS = 15 * 60;
const MAX_LINK = 2048;

/** What a link says, once its signature and lifetime are checked. */
export interface ConnectLink {
  readonly tenant: string;
  readonly user: string;
  readonly provider: string;
  readonly elicitationId?: string;
  /** Epoch seconds after which it is refused. */
  readonly expiresAt: number;
}

export class ConnectLinks {
  constructor(
    private readonly secrets: Secrets,
    private readonly now: () => number = Date.now,
  ) {}

  /** The `link` parameter of a connect URL. */
  sign(tenant: string, user: string, provider: string, elicitationId?: string): string {
    const expiresAt = Math.floor(this.now() / 1000) + LINK_TTL_SECONDS;
    const payload = Buffer.from(
      JSON.stringify({
        t: tenant,
        u: user,
        p: provider,
        ...(elicitationId && { e: elicitationId }),
        x: expiresAt,
      }),
    ).toString("base64url");
    return `${payload}.${this.secrets.mac("accounts-link", payload)}`;
  }

  /** The link's claims; undefined when it is malformed, altered or expired. */
  verify(link: unknown): ConnectLink | undefined {
    if (typeof link !== "string" || link.length > MAX_LINK) return undefined;
    const [payload, mac, extra] = link.split(".");
    if (!payload || !mac || extra !== undefined) return undefined;
    if (!this.secrets.verify("accounts-link", payload, mac)) return undefined;
    let o: { t?: unknown; u?: unknown; p?: unknown; e?: unknown; x?: unknown };
    try {
      o = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as typeof o;
    } catch {
      return undefined;
    }
    const { t, u, p, e, x } = o;
    if (typeof t !== "string" || typeof u !== "string" || typeof p !== "string" || typeof x !== "number")
      return undefined;
    if (e !== undefined && typeof e !== "string") return undefined;
    if (x < this.now() / 1000) return undefined;
    return { tenant: t, user: u, provider: p, ...(e !== undefined && { elicitationId: e }), expiresAt: x };
  }
}
