// Field readers for config validation, hand-written so every message names the JSON path of the
// offending value. Each reader checks one key of a plain object and throws PORTICO_ERR_CONFIG_INVALID.
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

/** A plain object whose keys are all known; typos get a suggestion. */
export function record(v: unknown, path: string, keys: readonly string[]): Obj {
  if (!isObject(v)) bad(path, "must be an object");
  for (const key of Object.keys(v)) if (!keys.includes(key)) bad(at(path, key), unknownKey(key, keys));
  return v;
}

/** A string; when required, also non-empty. */
export function str(o: Obj, key: string, path: string, required: true): string;
export function str(o: Obj, key: string, path: string, required?: false): string | undefined;
export function str(o: Obj, key: string, path: string, required = false): string | undefined {
  const v = o[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string" || (required && v === "")) bad(at(path, key), "must be a non-empty string");
  return v;
}

/** A string matching `pattern`; `rule` says in words what it must be. */
export function matching(o: Obj, key: string, path: string, pattern: RegExp, rule: string): string {
  const v = o[key];
  if (typeof v !== "string") bad(at(path, key), `must be a string: ${rule}`);
  if (!pattern.test(v)) bad(at(path, key), `${JSON.stringify(v)} must be ${rule}`);
  return v;
}

/** Like matching(), but the key may be absent. */
export function optional(
  o: Obj,
  key: string,
  path: string,
  pattern: RegExp,
  rule: string,
): string | undefined {
  return o[key] === undefined ? undefined : matching(o, key, path, pattern, rule);
}

/** An optional whole number within [min, max]. */
export function int(o: Obj, key: string, path: string, min: number, max: number): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    bad(at(path, key), `must be a whole number from ${min} to ${max}`);
  return v;
}

/** An array; an absent key reads as [] unless required. */
export function list(o: Obj, key: string, path: string, required = false): unknown[] {
  const v = o[key];
  if (v === undefined && !required) return [];
  if (!Array.isArray(v)) bad(at(path, key), "must be an array");
  return v;
}

/** A required http(s) URL without userinfo; `credentials` says where credentials go instead. */
export function httpUrl(o: object, key: string, path: string, credentials = "headers"): string {
  const v = str(o as Obj, key, path, true);
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
