// The bootstrap file (docs/architecture.md §6, PORTICO_CONFIG): `{ "tenants": [...], "platformUsers": [...] }`
// seeding tenants and their providers, and the console's platform users (docs/configuration.md
// "Bootstrap file"), at boot. Every complaint names the file and the JSON path of the offending value.
import { readFile } from "node:fs/promises";
import { fail, isPorticoError } from "../protocol/errors.js";
import type { TenantConfig } from "../records/tenant.js";
import { validateTenant } from "../records/validate.js";
import { LAUNCH_FIELDS, launchKey, launchOf, type StdioLaunch } from "./stdio-launch.js";

/** Keys allowed at the top of the file; "$schema" lets editors offer completion. */
const TOP_KEYS = ["$schema", "tenants", "platformUsers"];

/** A platform user the file names: a password, or its scrypt hash as Portico stores it. */
export type PlatformUserSeed = { readonly username: string } & (
  { readonly password: string } | { readonly passwordHash: string }
);

export interface Bootstrap {
  readonly tenants: TenantConfig[];
  readonly platformUsers: PlatformUserSeed[];
  /** How this replica starts its `stdio` providers' children, by launchKey (never stored). */
  readonly stdio: Map<string, StdioLaunch>;
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** A scrypt hash as oauth/users.ts hashPassword writes it. */
const PASSWORD_HASH = /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]{16,}\$[A-Za-z0-9_-]{32,}$/;

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
  if (unknown !== undefined)
    throw invalid(file, `${unknown}: unknown key (the file holds "tenants" and "platformUsers")`);
  const tenants = (doc as Record<string, unknown>).tenants;
  if (!Array.isArray(tenants)) throw invalid(file, "tenants: must be an array of tenant records");
  return tenants;
}

/** The platform users of the file (none when it names none). */
function platformUsersOf(file: string, doc: unknown): PlatformUserSeed[] {
  const list = (doc as Record<string, unknown>).platformUsers;
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw invalid(file, "platformUsers: must be an array of platform users");
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const at = `platformUsers[${i}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      throw invalid(file, `${at}: must be an object { "username", "password" or "passwordHash" }`);
    const { username, password, passwordHash, ...extra } = entry as Record<string, unknown>;
    const other = Object.keys(extra)[0];
    if (other !== undefined) throw invalid(file, `${at}.${other}: unknown key`);
    if (typeof username !== "string" || !USERNAME.test(username))
      throw invalid(
        file,
        `${at}.username: 1–64 characters of A–Z, a–z, 0–9, '.', '_', '@' and '-', starting with a letter or digit`,
      );
    if (seen.has(username)) throw invalid(file, `${at}.username: duplicate platform user "${username}"`);
    seen.add(username);
    if ((password === undefined) === (passwordHash === undefined))
      throw invalid(file, `${at}: give exactly one of "password" and "passwordHash"`);
    if (password !== undefined) {
      if (typeof password !== "string" || password.length < 8 || password.length > 1024)
        throw invalid(file, `${at}.password: 8 to 1024 characters`);
      return { username, password };
    }
    if (typeof passwordHash !== "string" || !PASSWORD_HASH.test(passwordHash))
      throw invalid(
        file,
        `${at}.passwordHash: a scrypt hash as Portico writes it (scrypt$N$r$p$<salt>$<hash>)`,
      );
    return { username, passwordHash };
  });
}

/**
 * Reads and validates a bootstrap file. Throws PORTICO_ERR_CONFIG_INVALID whose message starts
 * with the file path, then the JSON path, e.g. `portico.json: tenants[0].providers[2].url: ...`.
 */
export async function loadBootstrapFile(file: string): Promise<TenantConfig[]> {
  return (await loadBootstrap(file)).tenants;
}

/** The whole bootstrap file: its tenants and its platform users. */
export async function loadBootstrap(file: string): Promise<Bootstrap> {
  const doc = await readJson(file);
  const stdio = new Map<string, StdioLaunch>();
  return { tenants: tenantsOf(file, doc, stdio), platformUsers: platformUsersOf(file, doc), stdio };
}

/**
 * A tenant entry without the launches of its `stdio` providers, which go to `stdio` (the record is
 * stored; the command, arguments, directory and environment are this file's alone).
 */
function withoutLaunches(entry: unknown, i: number, stdio: Map<string, StdioLaunch>): unknown {
  const providers = (entry as { providers?: unknown } | null)?.providers;
  if (!Array.isArray(providers)) return entry;
  const tenant = (entry as { id?: unknown }).id;
  const stripped = providers.map((p: unknown, j) => {
    if (typeof p !== "object" || p === null || Array.isArray(p)) return p;
    const record = { ...(p as Record<string, unknown>) };
    const at = `tenants[${i}].providers[${j}]`;
    const given = LAUNCH_FIELDS.filter((f) => record[f] !== undefined);
    if (record.transport !== "stdio") {
      if (given.length > 0)
        throw fail(
          "PORTICO_ERR_CONFIG_INVALID",
          `${at}.${given[0]}: only a stdio provider ("transport": "stdio") takes it`,
        );
      return p;
    }
    try {
      const launch = launchOf(record, at, process.env.PATH);
      if (typeof tenant === "string" && typeof record.id === "string")
        stdio.set(launchKey(tenant, record.id), launch);
    } catch (err) {
      throw fail("PORTICO_ERR_CONFIG_INVALID", (err as Error).message);
    }
    for (const f of LAUNCH_FIELDS) delete record[f];
    return record;
  });
  return { ...(entry as object), providers: stripped };
}

function tenantsOf(file: string, doc: unknown, stdio: Map<string, StdioLaunch>): TenantConfig[] {
  const entries = tenantList(file, doc);
  const seen = new Map<string, number>();
  return entries.map((entry, i) => {
    let tenant: TenantConfig;
    try {
      tenant = validateTenant(withoutLaunches(entry, i, stdio), `tenants[${i}]`);
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
