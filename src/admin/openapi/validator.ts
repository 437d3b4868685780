// Validates admin requests against the OpenAPI document's own schemas (Ajv, JSON Schema 2020-12),
// and turns Ajv's findings into problem details a person can act on: each names the offending
// member by JSON Pointer (RFC 6901). Tests reuse it to check every response against the document.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { excerpt, fail } from "../../protocol/errors.js";
import type { Operation } from "./operation-kit.js";
import { pathParameters } from "./operations.js";

type Json = Record<string, unknown>;

export interface FieldError {
  readonly pointer: string;
  readonly detail: string;
}

const DOC_ID = "portico-admin.json";
// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = (formats as unknown as { default: (ajv: Ajv2020) => Ajv2020 }).default;

/** Ajv does not take OpenAPI's discriminator mapping; the document keeps it for readers. */
function forAjv(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(forAjv);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "discriminator") out[k] = { propertyName: (v as Json).propertyName };
    else out[k] = forAjv(v);
  }
  return out;
}

function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** One Ajv error in plain words, at the member it concerns. */
function describe(e: ErrorObject, schemas: ReadonlyMap<string, Json>): FieldError {
  const parent = (e.parentSchema ?? {}) as Json;
  const params = e.params as Json;
  switch (e.keyword) {
    case "required":
      return {
        pointer: `${e.instancePath}/${escapePointer(String(params.missingProperty))}`,
        detail: "is required",
      };
    case "additionalProperties": {
      const name = String(params.additionalProperty);
      const allowed = Object.keys((parent.properties as Json | undefined) ?? {});
      return {
        pointer: `${e.instancePath}/${escapePointer(excerpt(name))}`,
        detail: `unknown field "${excerpt(name)}"${allowed.length > 0 ? ` (allowed: ${allowed.join(", ")})` : ""}`,
      };
    }
    case "discriminator":
      return {
        pointer: `${e.instancePath}/${escapePointer(String(params.tag))}`,
        detail: `must be one of ${tagValues(parent, schemas)}`,
      };
    case "const":
      return { pointer: e.instancePath, detail: `must be ${JSON.stringify(params.allowedValue)}` };
    case "enum":
      return {
        pointer: e.instancePath,
        detail: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
      };
    case "pattern":
      return {
        pointer: e.instancePath,
        detail:
          typeof parent.description === "string"
            ? `must be ${lower(parent.description)}`
            : `must match ${String(params.pattern)}`,
      };
    case "format":
      return { pointer: e.instancePath, detail: `must be a valid ${String(params.format)}` };
    case "oneOf":
    case "anyOf":
      return {
        pointer: e.instancePath,
        detail:
          typeof parent["x-message"] === "string"
            ? parent["x-message"]
            : "matches none of the allowed shapes",
      };
    default:
      return { pointer: e.instancePath, detail: e.message ?? "is invalid" };
  }
}

function lower(text: string): string {
  return (text[0]?.toLowerCase() ?? "") + text.slice(1).replace(/\.$/, "");
}

function tagValues(parent: Json, schemas: ReadonlyMap<string, Json>): string {
  const tag = (parent.discriminator as Json | undefined)?.propertyName as string;
  const values = ((parent.oneOf as Json[] | undefined) ?? []).map((branch) => {
    const name = (typeof branch.$ref === "string" ? branch.$ref : "").split("/").pop() ?? "";
    const schema = schemas.get(name);
    return JSON.stringify(((schema?.properties as Json | undefined)?.[tag] as Json | undefined)?.const);
  });
  return values.join(", ");
}

/** The findings worth showing: a oneOf's own message beats the noise of its branches. */
function findings(errors: readonly ErrorObject[], schemas: ReadonlyMap<string, Json>): FieldError[] {
  const summary = errors.find(
    (e) => (e.keyword === "oneOf" || e.keyword === "anyOf") && (e.parentSchema as Json)["x-message"],
  );
  if (summary) return [describe(summary, schemas)];
  const discriminator = errors.find((e) => e.keyword === "discriminator");
  return [describe(discriminator ?? errors[0]!, schemas)];
}

export class AdminValidator {
  readonly #ajv: Ajv2020;
  readonly #cache = new Map<string, ValidateFunction>();
  readonly #bySchema = new WeakMap<Json, ValidateFunction>();
  readonly #parameters: Record<string, Json>;
  readonly #schemas: ReadonlyMap<string, Json>;

  constructor(document: Json) {
    const components = document.components as Json;
    this.#schemas = new Map(Object.entries(components.schemas as Record<string, Json>));
    this.#parameters = components.parameters as Record<string, Json>;
    this.#ajv = new Ajv2020({ allErrors: false, verbose: true, discriminator: true, strict: true });
    addFormats(this.#ajv);
    this.#ajv.addVocabulary(["components", "x-message"]);
    this.#ajv.addSchema(forAjv({ $id: DOC_ID, components: { schemas: components.schemas } }) as Json);
  }

  /** A validator for a schema of the document (refs resolve against the document's components). */
  compile(schema: Json): ValidateFunction {
    // Routes pass the same schema objects on every request: find them without serializing.
    const known = this.#bySchema.get(schema);
    if (known) return known;
    const text = JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`);
    let fn = this.#cache.get(text);
    if (!fn) {
      fn = this.#ajv.compile(forAjv(JSON.parse(text)) as Json);
      this.#cache.set(text, fn);
    }
    this.#bySchema.set(schema, fn);
    return fn;
  }

  /** Checks a value against a schema; the findings, empty when valid. */
  check(schema: Json, value: unknown): FieldError[] {
    const fn = this.compile(schema);
    return fn(value) ? [] : findings(fn.errors ?? [], this.#schemas);
  }

  /** Throws 422 naming each invalid member of a request body. */
  body(schema: Json, value: unknown): void {
    const errors = this.check(schema, value);
    if (errors.length > 0) throw invalid(errors);
  }

  /** Path parameters of an operation; a malformed id is 400. */
  params(op: Operation, params: Record<string, string>): void {
    for (const name of pathParameters(op.path)) {
      const p = this.#parameters[name]!;
      if (this.check(p.schema as Json, params[name]).length > 0)
        throw fail(
          "PORTICO_ERR_ADMIN_MALFORMED",
          `Path parameter "${name}" ${JSON.stringify(params[name])} is not a valid ${String(p.description).replace(/\.$/, "").toLowerCase()}`,
        );
    }
  }

  /** Query parameters, typed by their schemas; unknown ones are refused (a typo must not be ignored). */
  query(op: Operation, query: Record<string, unknown>): Record<string, unknown> {
    const allowed = (op.parameters ?? []).filter((n) => this.#parameters[n]?.in === "query");
    const out: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(query)) {
      if (!allowed.includes(name))
        throw fail(
          "PORTICO_ERR_ADMIN_MALFORMED",
          `Unknown query parameter "${excerpt(name)}"${allowed.length > 0 ? ` (this route takes ${allowed.join(", ")})` : ""}`,
        );
      const schema = this.#parameters[name]!.schema as Json;
      const value = typeof raw === "string" ? typed(raw, schema.type) : raw;
      if (this.check(schema, value).length > 0)
        throw fail(
          "PORTICO_ERR_ADMIN_MALFORMED",
          `Query parameter ${name}=${excerpt(JSON.stringify(raw))}: ${this.check(schema, value)[0]!.detail}`,
        );
      out[name] = value;
    }
    return out;
  }
}

function typed(raw: string, type: unknown): unknown {
  if (type === "integer" && /^-?\d{1,15}$/.test(raw)) return Number(raw);
  if (type === "boolean" && (raw === "true" || raw === "false")) return raw === "true";
  return raw;
}

/** A 422 carrying every finding; `detail` says the first in words. */
export function invalid(errors: readonly FieldError[]): Error {
  const first = errors[0]!;
  return fail("PORTICO_ERR_ADMIN_INVALID", `${first.pointer || "The body"}: ${first.detail}`, { errors });
}
