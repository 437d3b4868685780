// /tenants/{t}/catalog: every entry exactly as the tenant's MCP clients see it, with its provider
// and that provider's health, as this replica serves them.
import type { Provider } from "../../providers/types.js";
import type { Handler } from "../plugin.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

function entry(provider: Provider | undefined, value: object) {
  return { provider: provider?.id ?? "", health: provider?.healthy ? "healthy" : "unhealthy", entry: value };
}

export function catalogHandlers(deps: AdminDeps): Record<string, Handler> {
  return {
    getCatalog: async ({ params }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const catalog = deps.registry.get(config.id)?.catalog;
      if (!catalog)
        return { status: 200, body: { tools: [], prompts: [], resources: [], resourceTemplates: [] } };
      return {
        status: 200,
        body: {
          tools: catalog.tools.map((t) => entry(catalog.tool(t.name)?.provider, t)),
          prompts: catalog.prompts.map((p) => entry(catalog.prompt(p.name)?.provider, p)),
          resources: catalog.resources.map((r) => entry(catalog.resourceOwner(r.uri), r)),
          resourceTemplates: catalog.templates.map((t) => entry(catalog.templateOwner(t.uriTemplate), t)),
        },
      };
    },
  };
}
