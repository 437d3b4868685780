// Field readers for config validation, hand-written so every message names the JSON path of the
// offending value. Each reader checks one key of a plain object and throws PORTICO_ERR_CONFIG_INVALID.
import { alwaysRefusedLiteral } from "../egress/policy.js";
import { fail } from "../protocol/errors.js";

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

/** A plain object whose keys are all known; typos get a suggestion. */
export function record(v: unknown, path: string, keys: readonly string[]): Obj {
  if (!isObject(v)) bad(path, "must be an object");
  for (const key of Object.keys(v)) {
    if (keys.includes(key)) continue;
    const near = keys.find((k) => distance(k.toLowerCase(), key.toLowerCase()) <= 2);
    const hint = near ? `did you mean "${near}"?` : `known keys: ${keys.join(", ")}`;
    bad(at(path, key), `unknown key (${hint})`);
  }
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

/** An optional boolean. */
export function bool(o: Obj, key: string, path: string): boolean | undefined {
  const v = o[key];
  if (v !== undefined && typeof v !== "boolean") bad(at(path, key), "must be true or false");
  return v;
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

/** An optional array of strings. */
export function strings(o: Obj, key: string, path: string): string[] | undefined {
  if (o[key] === undefined) return undefined;
  return list(o, key, path).map((v, i) =>
    typeof v === "string" ? v : bad(at(at(path, key), i), "must be a string"),
  );
}

/** A required http(s) URL without userinfo; `credentials` says where credentials go instead. */
export function httpUrl(o: Obj, key: string, path: string, credentials = "headers"): string {
  const v = str(o, key, path, true);
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

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HOP_HEADER = /^(?:host|content-length|connection|transfer-encoding|keep-alive|upgrade|te)$/i;

/** Header values never appear in messages: they are often secrets. */
export function headers(o: Obj, key: string, path: string): Record<string, string> | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!isObject(v)) bad(at(path, key), "must be an object of header name → string value");
  for (const [name, value] of Object.entries(v)) {
    const where = at(at(path, key), name);
    if (!HEADER_NAME.test(name)) bad(where, "is not a valid header name");
    if (HOP_HEADER.test(name)) bad(where, "is set by Portico and cannot be configured");
    if (typeof value !== "string" || /[\r\n\0]/.test(value))
      bad(where, "value must be a string without line breaks");
  }
  return { ...(v as Record<string, string>) };
}

/** An optional object, deep-copied; with `schema`, a JSON Schema of type object. */
export function jsonObject(
  o: Obj,
  key: string,
  path: string,
  schema = false,
): Record<string, unknown> | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!isObject(v) || (schema && v.type !== "object"))
    bad(at(path, key), schema ? 'must be a JSON Schema object with "type": "object"' : "must be an object");
  return structuredClone(v);
}

/** Drops undefined members so records round-trip as the JSON they came from. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Rejects a second entry with the same key; `label` says what the key is. */
export function unique(seen: Map<string, string>, value: string, path: string, label: string): void {
  const first = seen.get(value);
  if (first !== undefined) bad(path, `duplicate ${label} ${JSON.stringify(value)} (also ${first})`);
  seen.set(value, path);
}

/** RFC 6749 §3.3: space-delimited scope-tokens of %x21 / %x23-5B / %x5D-7E. */
export const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;

/** An absolute URI without a fragment, as RFC 8707 §2 asks of a resource indicator. */
export function resourceIndicator(o: Obj, path: string): string | undefined {
  const v = str(o, "resource", path);
  if (v === undefined) return undefined;
  if (!URL.canParse(v) || v.includes("#"))
    bad(
      at(path, "resource"),
      `${JSON.stringify(v)} must be an absolute URI without a fragment (RFC 8707 §2)`,
    );
  return v;
}
