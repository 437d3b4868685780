// The bootstrap file (docs/architecture.md §6, PORTICO_CONFIG): `{ "tenants": [...] }` seeding tenants and their
// providers at boot. Every complaint names the file and the JSON path of the offending value.
import { readFile } from "node:fs/promises";
import { fail, isPorticoError } from "../protocol/errors.js";
import type { TenantConfig } from "../records/tenant.js";
import { validateTenant } from "../records/validate.js";

/** Keys allowed at the top of the file; "$schema" lets editors offer completion. */
const TOP_KEYS = ["$schema", "tenants"];

function invalid(file: string, problem: string): Error {
  return fail("PORTICO_ERR_CONFIG_INVALID", `${file}: ${problem}`, { file });
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw invalid(
      file,
      `cannot read the bootstrap file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(file, `not valid JSON: ${(err as Error).message}`);
  }
}

function tenantList(file: string, doc: unknown): unknown[] {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw invalid(file, 'must hold a JSON object: { "tenants": [...] }');
  const unknown = Object.keys(doc).find((k) => !TOP_KEYS.includes(k));
  if (unknown !== undefined) throw invalid(file, `${unknown}: unknown key (the file holds "tenants")`);
  const tenants = (doc as Record<string, unknown>).tenants;
  if (!Array.isArray(tenants)) throw invalid(file, "tenants: must be an array of tenant records");
  return tenants;
}

/**
 * Reads and validates a bootstrap file. Throws PORTICO_ERR_CONFIG_INVALID whose message starts
 * with the file path, then the JSON path, e.g. `portico.json: tenants[0].providers[2].url: ...`.
 */
export async function loadBootstrapFile(file: string): Promise<TenantConfig[]> {
  const entries = tenantList(file, await readJson(file));
  const seen = new Map<string, number>();
  return entries.map((entry, i) => {
    let tenant: TenantConfig;
    try {
      tenant = validateTenant(entry, `tenants[${i}]`);
    } catch (err) {
      throw isPorticoError(err) ? invalid(file, err.message) : err;
    }
    const first = seen.get(tenant.id);
    if (first !== undefined)
      throw invalid(file, `tenants[${i}].id: duplicate tenant id "${tenant.id}" (also tenants[${first}])`);
    seen.set(tenant.id, i);
    return tenant;
  });
}
