// Callers the process itself vouches for (docs/admin-api.md "Try it"): the admin API calls a
// tenant's MCP endpoint in-process (inject) as the signed-in admin, without minting a token
// (Portico cannot mint an external issuer's). Each pass is a random 256-bit value, kept in this
// process's memory only, good for one request within a few seconds: nothing outside the process
// can present one, and a pass that leaked in a log would already be spent.
import { randomId } from "../crypto/secrets.js";
import type { Authenticated } from "../policy/caller.js";

/** The request header a pass travels in. */
export const INTERNAL_CALLER_HEADER = "x-portico-internal-caller";

/** How long a pass waits for its request. */
const PASS_MS = 5000;

export class InternalCallers {
  readonly #passes = new Map<string, { caller: Authenticated; until: number }>();

  /** A single-use pass naming `caller` for the next request that presents it. */
  issue(caller: Authenticated): string {
    const now = Date.now();
    for (const [pass, held] of this.#passes) if (held.until <= now) this.#passes.delete(pass);
    const pass = randomId(32);
    this.#passes.set(pass, { caller, until: now + PASS_MS });
    return pass;
  }

  /** The caller of a pass, once; undefined for anything else. */
  take(header: string | string[] | undefined): Authenticated | undefined {
    if (typeof header !== "string") return undefined;
    const held = this.#passes.get(header);
    if (!held) return undefined;
    this.#passes.delete(header);
    return held.until > Date.now() ? held.caller : undefined;
  }
}
