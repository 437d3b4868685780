// What the records' hand-written checks share: complaints naming the JSON path of the offending
// value (PORTICO_ERR_CONFIG_INVALID), unknown keys told with the key a typo meant, http(s) URLs.
import { alwaysRefusedLiteral } from "../egress/policy.js";
import { excerpt, fail } from "../protocol/errors.js";

export type Obj = Record<string, unknown>;

/** Throws PORTICO_ERR_CONFIG_INVALID with the JSON path first in the message. */
export function bad(path: string, problem: string): never {
  throw fail("PORTICO_ERR_CONFIG_INVALID", `${path}: ${problem}`, { path });
}

/** The JSON path of `key` (an object key or array index) under `path`. */
export function at(path: string, key: string | number): string {
  return typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
}

/** A plain object: not null, not an array. */
export function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Levenshtein distance, to suggest the key a typo meant. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length] ?? 0;
}

/** What to say of an unknown key: the known one a typo meant, else those allowed. */
export function unknownKey(name: string, allowed: readonly string[]): string {
  const near = allowed.find((k) => distance(k.toLowerCase(), name.toLowerCase()) <= 2);
  const hint = near
    ? ` (did you mean "${near}"?)`
    : allowed.length > 0
      ? ` (allowed: ${allowed.join(", ")})`
      : "";
  return `unknown field "${excerpt(name)}"${hint}`;
}

/** A non-empty string. */
function str(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== "string" || v === "") bad(at(path, key), "must be a non-empty string");
  return v;
}

/** A required http(s) URL without userinfo; `credentials` says where credentials go instead. */
export function httpUrl(o: object, key: string, path: string, credentials = "headers"): string {
  const v = str(o as Obj, key, path);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    bad(at(path, key), "must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") bad(at(path, key), "must be an http(s) URL");
  if (url.username || url.password)
    bad(at(path, key), `must not carry credentials; put them in ${credentials}`);
  // The connect-time check is the real one (docs/security.md); a literal refused address is told now.
  const refused = alwaysRefusedLiteral(url.hostname);
  if (refused) bad(at(path, key), `is always refused by the egress policy: ${refused}`);
  return v;
}

/** Drops undefined members so records round-trip as the JSON they came from. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
