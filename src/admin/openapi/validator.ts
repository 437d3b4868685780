// Validates admin requests against the OpenAPI document's own schemas (Ajv, JSON Schema 2020-12),
// and turns Ajv's findings into problem details a person can act on: each names the offending
// member by JSON Pointer (RFC 6901). Tests reuse it to check every response against the document.
import type { Ajv2020, ValidateFunction } from "ajv/dist/2020.js";
import { excerpt, fail } from "../../protocol/errors.js";
import { findings, schemaAjv, type FieldError, type Resolve } from "../../records/schema-check.js";
import type { Operation } from "./operation-kit.js";
import { pathParameters } from "./operations.js";

type Json = Record<string, unknown>;

const DOC_ID = "portico-admin.json";

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

export class AdminValidator {
  readonly #ajv: Ajv2020;
  readonly #cache = new Map<string, ValidateFunction>();
  readonly #bySchema = new WeakMap<Json, ValidateFunction>();
  readonly #parameters: Record<string, Json>;
  readonly #resolve: Resolve;

  constructor(document: Json) {
    const components = document.components as Json;
    const schemas = components.schemas as Record<string, Json>;
    this.#resolve = (s) => (typeof s.$ref === "string" ? (schemas[s.$ref.split("/").pop() ?? ""] ?? s) : s);
    this.#parameters = components.parameters as Record<string, Json>;
    this.#ajv = schemaAjv();
    this.#ajv.addVocabulary(["components"]);
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
    return fn(value) ? [] : findings(fn.errors ?? [], this.#resolve);
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
    // By the name on the wire: a component's key may differ from it (`trafficTenant` is `tenant`).
    const byName = new Map(
      (op.parameters ?? [])
        .map((n) => this.#parameters[n])
        .filter((p) => p?.in === "query")
        .map((p) => [String(p!.name), p!] as const),
    );
    const allowed = [...byName.keys()];
    const out: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(query)) {
      const parameter = byName.get(name);
      if (!parameter)
        throw fail(
          "PORTICO_ERR_ADMIN_MALFORMED",
          `Unknown query parameter "${excerpt(name)}"${allowed.length > 0 ? ` (this route takes ${allowed.join(", ")})` : ""}`,
        );
      const schema = parameter.schema as Json;
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
