// Checks records against their JSON Schemas (schemas.ts, Ajv, JSON Schema 2020-12) and says what is
// wrong in words a person can act on: the member by JSON Pointer (RFC 6901) and the fix. The admin
// API reports the same findings as problem details (admin/openapi/validator.ts).
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type { Static, TSchema } from "@sinclair/typebox";
import { excerpt } from "../protocol/errors.js";
import { bad, unknownKey } from "./fields.js";

type Json = Record<string, unknown>;

/** One invalid member: where (a JSON Pointer into the checked value) and what to do about it. */
export interface FieldError {
  readonly pointer: string;
  readonly detail: string;
}

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = (formats as unknown as { default: (ajv: Ajv2020) => Ajv2020 }).default;

/** An Ajv set up as both the records and the admin API check with it. */
export function schemaAjv(options: { allErrors?: boolean } = {}): Ajv2020 {
  // A discriminator checks the one branch its tag names: findings from that branch alone.
  const ajv = new Ajv2020({ allErrors: false, verbose: true, strict: true, discriminator: true, ...options });
  addFormats(ajv);
  // The document's own wording of a finding, of a missing member and of a refused one (see describe()).
  ajv.addVocabulary(["x-message", "x-missing", "x-unknown"]);
  return ajv;
}

export function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function lower(text: string): string {
  return (text[0]?.toLowerCase() ?? "") + text.slice(1).replace(/\.$/, "");
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `must be …` for a value of the wrong JSON type; a range when the schema has one. */
function wrongType(type: unknown, parent: Json): string {
  const types = Array.isArray(type) ? type : [type];
  if (types.includes("integer") && typeof parent.minimum === "number" && typeof parent.maximum === "number")
    return `must be a whole number from ${parent.minimum} to ${parent.maximum}`;
  const words: Record<string, string> = {
    object: "an object",
    array: "an array",
    string: "a string",
    boolean: "true or false",
    integer: "a whole number",
    number: "a number",
    null: "null",
  };
  return `must be ${types.map((t) => words[String(t)] ?? String(t)).join(" or ")}`;
}

/** A schema as written, following a reference to a named component (the admin document's). */
export type Resolve = (schema: Json) => Json;

function tagValues(parent: Json, resolve: Resolve): string {
  const tag = (parent.discriminator as Json | undefined)?.propertyName as string;
  const values = ((parent.oneOf as Json[] | undefined) ?? []).map((branch) =>
    JSON.stringify(((resolve(branch).properties as Json | undefined)?.[tag] as Json | undefined)?.const),
  );
  return values.join(", ");
}

/** One Ajv error in plain words, at the member it concerns. */
function describe(e: ErrorObject, resolve: Resolve): FieldError {
  const parent = (e.parentSchema ?? {}) as Json;
  const params = e.params as Json;
  const own = typeof parent["x-message"] === "string" ? parent["x-message"] : undefined;
  const at = e.instancePath;
  // A key of an object checked by propertyNames (a header name).
  if (e.propertyName !== undefined)
    return { pointer: `${at}/${escapePointer(e.propertyName)}`, detail: own ?? "is not an allowed name" };
  switch (e.keyword) {
    case "required": {
      const name = String(params.missingProperty);
      const hint = (parent["x-missing"] as Json | undefined)?.[name];
      return {
        pointer: `${at}/${escapePointer(name)}`,
        detail: typeof hint === "string" ? `is required: ${hint}` : "is required",
      };
    }
    case "additionalProperties": {
      const name = String(params.additionalProperty);
      const allowed = Object.keys((parent.properties as Json | undefined) ?? {});
      // A member other shapes of the record take, said of this one (a static provider's `tasks`).
      const refused = (parent["x-unknown"] as Json | undefined)?.[name];
      const detail = typeof refused === "string" ? `is not allowed: ${refused}` : unknownKey(name, allowed);
      return { pointer: `${at}/${escapePointer(excerpt(name))}`, detail };
    }
    case "discriminator":
      return {
        pointer: `${at}/${escapePointer(String(params.tag))}`,
        detail: `must be one of ${tagValues(parent, resolve)}`,
      };
    case "type":
      return { pointer: at, detail: wrongType(params.type, parent) };
    case "const":
      return { pointer: at, detail: `must be ${JSON.stringify(params.allowedValue)}` };
    case "enum":
      return {
        pointer: at,
        detail: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
      };
    case "pattern": {
      // The schema's own words, else its description says what the value must be ("A lowercase slug: …").
      const rule =
        own ??
        (typeof parent.description === "string"
          ? `must be ${lower(parent.description)}`
          : `must match ${String(params.pattern)}`);
      return { pointer: at, detail: `${excerpt(JSON.stringify(e.data))} ${rule}` };
    }
    case "format":
      return { pointer: at, detail: own ?? `must be a valid ${String(params.format)}` };
    case "minLength":
      return {
        pointer: at,
        detail:
          own ??
          (params.limit === 1
            ? "must be a non-empty string"
            : `must be at least ${plural(Number(params.limit), "character", "characters")}`),
      };
    case "maxLength":
      return {
        pointer: at,
        detail: own ?? `must be at most ${plural(Number(params.limit), "character", "characters")}`,
      };
    case "minimum":
    case "maximum":
      return { pointer: at, detail: wrongType(parent.type, parent) };
    case "minItems":
      return {
        pointer: at,
        detail: own ?? `must hold at least ${plural(Number(params.limit), "entry", "entries")}`,
      };
    case "maxItems":
      return { pointer: at, detail: `must hold at most ${plural(Number(params.limit), "entry", "entries")}` };
    case "uniqueItems": {
      const i = Math.max(Number(params.i), Number(params.j));
      const item = Array.isArray(e.data) ? (e.data as unknown[])[i] : undefined;
      return { pointer: `${at}/${i}`, detail: `${excerpt(JSON.stringify(item))} is listed twice` };
    }
    case "not":
      return { pointer: at, detail: `${excerpt(JSON.stringify(e.data))} ${own ?? "is not allowed here"}` };
    case "oneOf":
    case "anyOf": {
      const branches = (parent[e.keyword] as Json[] | undefined) ?? [];
      // A union of constants (TypeBox's enum) lists them.
      const values = branches.every((b) => "const" in b)
        ? `must be one of ${branches.map((b) => JSON.stringify(b.const)).join(", ")}`
        : undefined;
      return { pointer: at, detail: own ?? values ?? "matches none of the allowed shapes" };
    }
    default:
      return { pointer: at, detail: own ?? e.message ?? "is invalid" };
  }
}

/** Keywords that only say a branch of a oneOf/anyOf was the wrong shape, not what is wrong in it. */
const SHAPE = new Set(["type", "const", "enum", "oneOf", "anyOf", "not", "required", "additionalProperties"]);

/**
 * The finding worth showing. Under a oneOf/anyOf, a finer complaint from the branch whose shape
 * fits (a duplicate in the list, an empty name) beats the summary; else the summary's own words.
 */
export function findings(errors: readonly ErrorObject[], resolve: Resolve = (s) => s): FieldError[] {
  const summary = errors.find((e) => e.keyword === "oneOf" || e.keyword === "anyOf");
  if (summary) {
    const finer = errors.find(
      (e) => !SHAPE.has(e.keyword) && e.instancePath.startsWith(summary.instancePath),
    );
    return [describe(finer ?? summary, resolve)];
  }
  const discriminator = errors.find((e) => e.keyword === "discriminator");
  const first = discriminator ?? errors[0]!;
  // Checking every member (allErrors), a mistyped key is told before the key it misses.
  const typo = errors.find(
    (e) => e.keyword === "additionalProperties" && `${first.instancePath}/`.startsWith(`${e.instancePath}/`),
  );
  return [describe(typo ?? first, resolve)];
}

const ajv = schemaAjv({ allErrors: true });
const compiled = new WeakMap<TSchema, ValidateFunction>();

/** "/providers/0/provider" under "server" as "server.providers[0].provider", the records' own paths. */
function pathOf(where: string, pointer: string): string {
  let path = where;
  for (const token of pointer.split("/").slice(1)) {
    const key = token.replaceAll("~1", "/").replaceAll("~0", "~");
    path = /^\d+$/.test(key) ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
  }
  return path;
}

/**
 * Asserts `input` is a `schema` record (compiled once); else throws PORTICO_ERR_CONFIG_INVALID
 * naming the member by its path under `where` and the fix.
 */
export function checkSchema<T extends TSchema>(
  schema: T,
  input: unknown,
  where: string,
): asserts input is Static<T> {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  if (fn(input)) return;
  const [first] = findings(fn.errors ?? []);
  bad(pathOf(where, first!.pointer), first!.detail);
}
