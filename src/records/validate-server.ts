// Checks virtual server records (server.ts) against their tenant's providers; throws
// PORTICO_ERR_CONFIG_INVALID naming the field and the fix.
import { at, bad, compact, isObject, list, matching, record, str } from "./fields.js";
import {
  RESERVED_SERVER_IDS,
  type EntryOverride,
  type Selection,
  type ServerProviderSelection,
  type VirtualServerConfig,
} from "./server.js";
import { EXPOSED_NAME, SLUG, type ProviderConfig } from "./tenant.js";

/** RFC 6749 §3.3 scope-token, and short. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;
const MAX_SERVERS = 100;
const MAX_SELECTED = 1000;
const MAX_TEXT = 4096;
const SLUG_RULE = "a lowercase slug: a–z, 0–9 and -, starting with a letter or digit, at most 63 characters";
const KINDS = ["tools", "prompts", "resources"] as const;

function selection(o: Record<string, unknown>, key: string, where: string): Selection | undefined {
  const v = o[key];
  if (v === undefined || v === "*") return v;
  const items = list(o, key, where);
  if (items.length > MAX_SELECTED) bad(at(where, key), `lists at most ${MAX_SELECTED} entries`);
  const seen = new Set<string>();
  return items.map((item, i) => {
    if (typeof item !== "string" || item === "" || item.length > 2048)
      bad(at(at(where, key), i), 'must be a non-empty string (or the whole list "*")');
    if (seen.has(item)) bad(at(at(where, key), i), `"${item}" is listed twice`);
    seen.add(item);
    return item;
  });
}

function override(input: unknown, where: string, kind: (typeof KINDS)[number]): EntryOverride {
  const keys =
    kind === "tools"
      ? ["name", "title", "description", "annotations"]
      : kind === "prompts"
        ? ["name", "title", "description"]
        : ["title", "description"];
  const o = record(input, where, keys);
  const name =
    o.name === undefined
      ? undefined
      : matching(o, "name", where, EXPOSED_NAME, "1–64 characters of A–Z a–z 0–9 _ . -");
  for (const key of ["title", "description"])
    if (typeof o[key] === "string" && o[key].length > MAX_TEXT)
      bad(at(where, key), `must be at most ${MAX_TEXT} characters`);
  if (o.annotations !== undefined && !isObject(o.annotations))
    bad(at(where, "annotations"), "must be an object");
  return compact({
    name,
    title: str(o, "title", where),
    description: str(o, "description", where),
    annotations: o.annotations,
  });
}

function overrides(input: unknown, where: string, chosen: ServerProviderSelection) {
  const o = record(input, where, KINDS);
  const out: Record<string, Record<string, EntryOverride>> = {};
  for (const kind of KINDS) {
    if (o[kind] === undefined) continue;
    if (!isObject(o[kind])) bad(at(where, kind), "must be an object keyed by entry name (or URI)");
    const byName: Record<string, EntryOverride> = {};
    const renamed = new Set<string>();
    for (const [name, value] of Object.entries(o[kind])) {
      const path = at(at(where, kind), name);
      const picked = chosen[kind];
      if (picked !== undefined && picked !== "*" && !picked.includes(name))
        bad(path, `overrides an entry the selection leaves out: add "${name}" to "${kind}"`);
      const entry = override(value, path, kind);
      if (entry.name !== undefined && renamed.has(entry.name))
        bad(at(path, "name"), `another entry of this provider is already renamed "${entry.name}"`);
      if (entry.name !== undefined) renamed.add(entry.name);
      Object.defineProperty(byName, name, {
        value: entry,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    out[kind] = byName;
  }
  return out;
}

function providerSelection(input: unknown, where: string, providers: readonly ProviderConfig[]) {
  const o = record(input, where, ["provider", ...KINDS, "overrides"]);
  const provider = str(o, "provider", where, true);
  if (!providers.some((p) => p.id === provider))
    bad(at(where, "provider"), `the tenant has no provider "${provider}"`);
  const chosen: ServerProviderSelection = compact({
    provider,
    tools: selection(o, "tools", where),
    prompts: selection(o, "prompts", where),
    resources: selection(o, "resources", where),
  });
  if (o.overrides === undefined) return chosen;
  return { ...chosen, overrides: overrides(o.overrides, at(where, "overrides"), chosen) };
}

/** Validates one virtual server against the tenant's providers. Throws PORTICO_ERR_CONFIG_INVALID. */
export function validateServer(
  input: unknown,
  where: string,
  providers: readonly ProviderConfig[],
): VirtualServerConfig {
  const o = record(input, where, ["id", "name", "scopes", "providers"]);
  const id = matching(o, "id", where, SLUG, SLUG_RULE);
  if (RESERVED_SERVER_IDS.includes(id))
    bad(at(where, "id"), `"${id}" is reserved (the HTTP+SSE transport's path under every tenant)`);
  const scopes = o.scopes === undefined ? undefined : list(o, "scopes", where);
  scopes?.forEach((s, i) => {
    if (typeof s !== "string" || !SCOPE_TOKEN.test(s) || s.startsWith("mcp:") || s === "offline_access")
      bad(at(at(where, "scopes"), i), "must be an RFC 6749 scope token other than mcp:* and offline_access");
  });
  const chosen = list(o, "providers", where, true);
  if (chosen.length === 0) bad(at(where, "providers"), "must select at least one provider");
  const selections = chosen.map((p, i) => providerSelection(p, at(at(where, "providers"), i), providers));
  const ids = selections.map((s) => s.provider);
  const twice = ids.find((p, i) => ids.indexOf(p) !== i);
  if (twice !== undefined)
    bad(at(where, "providers"), `selects provider "${twice}" twice: merge its entries`);
  return compact({
    id,
    name: str(o, "name", where),
    scopes: scopes && scopes.length > 0 ? [...new Set(scopes as string[])] : undefined,
    providers: selections,
  });
}

/** Validates a tenant's servers: each one, unique ids, and at most MAX_SERVERS. */
export function validateServers(
  input: unknown,
  where: string,
  providers: readonly ProviderConfig[],
): VirtualServerConfig[] {
  if (!Array.isArray(input)) bad(where, "must be an array");
  if (input.length > MAX_SERVERS) bad(where, `holds at most ${MAX_SERVERS} servers`);
  const servers: VirtualServerConfig[] = [];
  for (const [i, s] of input.entries()) {
    const server = validateServer(s, at(where, i), providers);
    if (servers.some((other) => other.id === server.id))
      bad(at(at(where, i), "id"), `another server of this tenant already has id "${server.id}"`);
    servers.push(server);
  }
  return servers;
}
