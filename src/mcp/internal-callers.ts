// Callers the process itself vouches for (docs/admin-api.md "Try it"): the admin API calls a
// tenant's MCP endpoint in-process (inject) as the signed-in admin, without minting a token
// (Portico cannot mint an external issuer's). Each pass is a random 256-bit value, kept in this
// process's memory only, good for one request within a few seconds at the one URL it was issued
// for (tenant and virtual server): nothing outside the process can present one, and a pass that
// leaked would already be spent, or good nowhere else.
import { randomId } from "../crypto/secrets.js";
import type { Authenticated } from "../policy/caller.js";

/** The request header a pass travels in. */
export const INTERNAL_CALLER_HEADER = "x-portico-internal-caller";

/** How long a pass waits for its request. */
const PASS_MS = 5000;

/** Where a pass may be presented: a tenant's own URL, or one of its virtual servers. */
export interface PassTarget {
  readonly tenant: string;
  readonly server?: string | undefined;
}

const targetOf = ({ tenant, server }: PassTarget) => `${tenant}/${server ?? ""}`;

export class InternalCallers {
  readonly #passes = new Map<string, { caller: Authenticated; target: string; until: number }>();

  /** A single-use pass naming `caller` for the next request that presents it at `target`. */
  issue(caller: Authenticated, target: PassTarget): string {
    const now = Date.now();
    for (const [pass, held] of this.#passes) if (held.until <= now) this.#passes.delete(pass);
    const pass = randomId(32);
    this.#passes.set(pass, { caller, target: targetOf(target), until: now + PASS_MS });
    return pass;
  }

  /** The caller of a pass presented at `target`, once; undefined for anything else (the pass is spent either way). */
  take(header: string | string[] | undefined, target: PassTarget): Authenticated | undefined {
    if (typeof header !== "string") return undefined;
    const held = this.#passes.get(header);
    if (!held) return undefined;
    this.#passes.delete(header);
    return held.until > Date.now() && held.target === targetOf(target) ? held.caller : undefined;
  }
}
