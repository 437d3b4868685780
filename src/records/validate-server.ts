// Checks virtual server records against their schema (server.ts), then what a schema cannot say:
// the providers they select exist, each once, overrides name selected entries and rename no two
// alike, ids are unique in the tenant. Throws PORTICO_ERR_CONFIG_INVALID naming the field and the fix.
import { at, bad } from "./fields.js";
import { checkSchema } from "./schema-check.js";
import { VirtualServer, VirtualServers, type EntryOverride, type VirtualServerConfig } from "./server.js";
import type { ProviderConfig } from "./tenant.js";

const KINDS = ["tools", "prompts", "resources"] as const;

/** Overrides name entries the selection keeps, and give no two of one kind the same new name. */
function checkOverrides(chosen: VirtualServerConfig["providers"][number], where: string): void {
  for (const kind of KINDS) {
    const renamed = new Set<string>();
    for (const [name, entry] of Object.entries(chosen.overrides?.[kind] ?? {})) {
      const path = at(at(at(where, "overrides"), kind), name);
      const picked = chosen[kind];
      if (picked !== undefined && picked !== "*" && !picked.includes(name))
        bad(path, `overrides an entry the selection leaves out: add "${name}" to "${kind}"`);
      const rename = (entry as EntryOverride).name;
      if (rename !== undefined && renamed.has(rename))
        bad(at(path, "name"), `another entry of this provider is already renamed "${rename}"`);
      if (rename !== undefined) renamed.add(rename);
    }
  }
}

/** The rules between a server and its tenant's providers, on a record the schema accepted. */
function checkSelections(server: VirtualServerConfig, where: string, providers: readonly ProviderConfig[]) {
  const seen = new Set<string>();
  server.providers.forEach((chosen, i) => {
    const path = at(at(where, "providers"), i);
    if (!providers.some((p) => p.id === chosen.provider))
      bad(at(path, "provider"), `the tenant has no provider "${chosen.provider}"`);
    if (seen.has(chosen.provider))
      bad(at(where, "providers"), `selects provider "${chosen.provider}" twice: merge its entries`);
    seen.add(chosen.provider);
    checkOverrides(chosen, path);
  });
}

/** A copy of the server with its scopes listed once each; none at all is no `scopes`. */
function canonical(server: VirtualServerConfig): VirtualServerConfig {
  const { scopes, ...rest } = structuredClone(server);
  return scopes && scopes.length > 0 ? { ...rest, scopes: [...new Set(scopes)] } : rest;
}

/** Validates one virtual server against the tenant's providers. Throws PORTICO_ERR_CONFIG_INVALID. */
export function validateServer(
  input: unknown,
  where: string,
  providers: readonly ProviderConfig[],
): VirtualServerConfig {
  checkSchema(VirtualServer, input, where);
  checkSelections(input, where, providers);
  return canonical(input);
}

/** Validates a tenant's servers: each one, and unique ids. */
export function validateServers(
  input: unknown,
  where: string,
  providers: readonly ProviderConfig[],
): VirtualServerConfig[] {
  checkSchema(VirtualServers, input, where);
  const ids = new Set<string>();
  return input.map((server, i) => {
    checkSelections(server, at(where, i), providers);
    if (ids.has(server.id))
      bad(at(at(where, i), "id"), `another server of this tenant already has id "${server.id}"`);
    ids.add(server.id);
    return canonical(server);
  });
}
