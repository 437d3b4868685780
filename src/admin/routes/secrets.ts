// /secrets/reseal: after a PORTICO_SECRET_KEY rotation, every stored secret sealed under a previous
// key is sealed again under the current one (docs/operations.md "Rotating PORTICO_SECRET_KEY").
import { emptyTally } from "../../tenants/sealed.js";
import type { Handler } from "../plugin.js";
import type { AdminDeps } from "./deps.js";

export function secretHandlers(deps: AdminDeps): Record<string, Handler> {
  return {
    resealSecrets: async ({ principal }) => {
      const tally = emptyTally();
      for (const id of await deps.records.ids()) {
        await deps.records.reseal(id, tally);
        // Connected accounts: each user's tokens and Portico's registrations at the upstreams.
        if (deps.accounts)
          for (const provider of await deps.records.providerIds(id))
            await deps.accounts.reseal(id, provider, tally);
      }
      await deps.oauth.signingKeys.reseal(tally);
      // Counts and places only: what was sealed is never in the log.
      await deps.audit.record({
        actor: principal.actor,
        action: "secrets.reseal",
        tenant: null,
        target: "secrets",
        after: tally,
      });
      return { status: 200, body: tally };
    },
  };
}
