// /tenants/{t}/catalog: every entry exactly as the tenant's MCP clients of one capability profile
// see it (every capability by default, docs/architecture.md §3), with its provider and that
// provider's health, as this replica serves them.
import { fail } from "../../protocol/errors.js";
import { FULL_PROFILE } from "../../protocol/profile.js";
import { profileFromLabel, profileLabel } from "../../protocol/profile-names.js";
import type { Provider } from "../../providers/types.js";
import type { Handler } from "../plugin.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

function entry(provider: Provider | undefined, value: object) {
  return { provider: provider?.id ?? "", health: provider?.healthy ? "healthy" : "unhealthy", entry: value };
}

export function catalogHandlers(deps: AdminDeps): Record<string, Handler> {
  return {
    getCatalog: async ({ params, query }) => {
      const label = query.profile;
      const profile = typeof label === "string" ? profileFromLabel(label) : FULL_PROFILE;
      // The parameter's pattern already refused anything else; kept for a caller that skips it.
      if (!profile)
        throw fail("PORTICO_ERR_ADMIN_MALFORMED", `Query parameter profile: unknown capability name`);
      const { config } = await readTenant(deps, params.tenant!);
      const catalog = await deps.registry.get(config.id)?.catalogFor(profile);
      if (!catalog)
        return {
          status: 200,
          body: {
            tools: [],
            prompts: [],
            resources: [],
            resourceTemplates: [],
            profile: profileLabel(profile),
          },
        };
      return {
        status: 200,
        body: {
          tools: catalog.tools.map((t) => entry(catalog.tool(t.name)?.provider, t)),
          prompts: catalog.prompts.map((p) => entry(catalog.prompt(p.name)?.provider, p)),
          resources: catalog.resources.map((r) => entry(catalog.resourceOwner(r.uri), r)),
          resourceTemplates: catalog.templates.map((t) => entry(catalog.templateOwner(t.uriTemplate), t)),
          profile: profileLabel(profile),
        },
      };
    },
  };
}
