// An OpenAPI document as an admin gives it (docs/openapi.md): JSON or YAML text or an object,
// OpenAPI 3.0/3.1 or Swagger 2.0, read into one OpenAPI 3.1 object with its internal `$ref`s
// resolved. Parsing, upgrading and dereferencing are @scalar/openapi-parser's (and `yaml`'s); what
// is Portico's is the bounds: a size cap, an operation cap, `$ref` chains no deeper than a cap,
// YAML aliases counted, and external `$ref`s fetched only through the egress policy
// (external-refs.ts, handed in), never from a file and never by the parser itself. What a document gets
// wrong that a call can live with is a warning, not a refusal.
import { dereference, upgrade } from "@scalar/openapi-parser";
import { parse as parseYaml } from "yaml";

export const DEFAULT_MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MAX_OPERATIONS = 1000;
/** How many `$ref`s may lead to one another before a schema is reached. */
export const MAX_REF_CHAIN = 32;
/** YAML aliases a document may use: real ones use a few; an alias bomb uses them to multiply. */
const MAX_YAML_ALIASES = 1000;

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export interface DocumentLimits {
  readonly maxBytes?: number;
  readonly maxOperations?: number;
}

/** A document Portico will not serve, and why (shown to the admin as the field's problem). */
export class DocumentError extends Error {}

export type Json = Record<string, unknown>;

export interface LoadedDocument {
  /** OpenAPI 3.1, internal references resolved (shared and cyclic schemas are shared objects). */
  readonly document: Json;
  /** The version the admin gave: "2.0", "3.0.x", "3.1.x". */
  readonly version: string;
  /** What the document gets wrong that Portico tolerates. */
  readonly warnings: readonly string[];
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** JSON or YAML text into a value; YAML aliases are bounded. */
export function parseText(text: string): unknown {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{")) {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new DocumentError(`is not valid JSON: ${(err as Error).message}`);
    }
  }
  try {
    return parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES, prettyErrors: false });
  } catch (err) {
    throw new DocumentError(`is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** How deep a document may nest: real ones stay well within; deeper would overflow the stack of the parsers and copies after. */
export const MAX_DEPTH = 200;

/**
 * Every `$ref` value in `value`, once each (the parsed document is a tree: no cycles yet);
 * refuses one nested deeper than MAX_DEPTH. Iterative, so the depth itself cannot overflow it.
 */
function collectRefs(value: unknown, refs: Set<string>): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_DEPTH) throw new DocumentError(`is nested more than ${MAX_DEPTH} levels deep`);
    if (Array.isArray(node)) for (const item of node) stack.push([item, depth + 1]);
    else if (isObject(node)) {
      for (const [key, child] of Object.entries(node)) {
        if (key === "$ref" && typeof child === "string") refs.add(child);
        else if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
      }
    }
  }
}

/** The value at a JSON Pointer fragment (`#/components/schemas/Pet`), or undefined. */
function pointee(document: unknown, ref: string): unknown {
  let node: unknown = document;
  for (const raw of ref.slice(2).split("/")) {
    if (ref === "#") break;
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined; // a malformed escape points at nothing
    }
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/** Refuses external references and over-long chains of references to references. */
function checkRefs(document: Json): string[] {
  const refs = new Set<string>();
  collectRefs(document, refs);
  const warnings: string[] = [];
  for (const ref of refs) {
    if (!ref.startsWith("#"))
      throw new DocumentError(
        `has an external $ref ${JSON.stringify(ref.slice(0, 200))}, and no way to fetch it here: bundle it into one document`,
      );
    let depth = 0;
    let target = ref;
    for (;;) {
      const value = pointee(document, target);
      if (value === undefined) {
        warnings.push(`$ref ${JSON.stringify(target.slice(0, 200))} points at nothing: left as any value`);
        break;
      }
      if (!isObject(value) || typeof value.$ref !== "string") break;
      if (++depth > MAX_REF_CHAIN)
        throw new DocumentError(
          `has a chain of more than ${MAX_REF_CHAIN} $refs leading to one another (from ${JSON.stringify(ref.slice(0, 200))})`,
        );
      target = value.$ref;
      if (!target.startsWith("#")) break;
    }
  }
  return warnings;
}

function countOperations(document: Json): number {
  let count = 0;
  for (const entry of Object.values(isObject(document.paths) ? document.paths : {})) {
    // A path item may be a reference (to one in another document, once bundled).
    const item = isObject(entry) && typeof entry.$ref === "string" ? pointee(document, entry.$ref) : entry;
    if (isObject(item)) for (const method of HTTP_METHODS) if (isObject(item[method])) count++;
  }
  return count;
}

/**
 * Reads, bounds and resolves a document; `bundle` makes its external references internal
 * (external-refs.ts: without it they are refused). Throws DocumentError when it cannot be served.
 */
export async function loadDocument(
  source: unknown,
  limits: DocumentLimits = {},
  bundle?: (document: Json) => Promise<Json>,
): Promise<LoadedDocument> {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const maxOperations = limits.maxOperations ?? DEFAULT_MAX_OPERATIONS;
  let parsed: unknown;
  if (typeof source === "string") {
    if (Buffer.byteLength(source) > maxBytes)
      throw new DocumentError(`is larger than ${maxBytes} bytes (PORTICO_OPENAPI_MAX_DOCUMENT_BYTES)`);
    parsed = parseText(source);
  } else {
    parsed = source;
    let text: string;
    try {
      text = JSON.stringify(parsed) ?? "";
    } catch {
      throw new DocumentError(`is nested more than ${MAX_DEPTH} levels deep`);
    }
    if (Buffer.byteLength(text) > maxBytes)
      throw new DocumentError(`is larger than ${maxBytes} bytes (PORTICO_OPENAPI_MAX_DOCUMENT_BYTES)`);
  }
  if (!isObject(parsed)) throw new DocumentError("is not an object");
  const version =
    typeof parsed.openapi === "string"
      ? parsed.openapi
      : typeof parsed.swagger === "string"
        ? parsed.swagger
        : "";
  if (!/^(?:2\.0|3\.[01]\.\d+)$/.test(version))
    throw new DocumentError(
      `is not an OpenAPI 3.0/3.1 or Swagger 2.0 document (its "openapi" or "swagger" field says ${JSON.stringify(version || null)})`,
    );
  if (!isObject(parsed.paths)) throw new DocumentError('has no "paths" object');
  // Bounded before anything walks it: a YAML alias inside its own anchor is a cycle.
  collectRefs(parsed, new Set());
  const bundled = bundle ? await bundle(parsed) : parsed;
  const warnings = checkRefs(bundled);
  // Counted once bundled: a path item may come from another document.
  const operations = countOperations(bundled);
  if (operations > maxOperations)
    throw new DocumentError(
      `has ${operations} operations, more than ${maxOperations} (PORTICO_OPENAPI_MAX_OPERATIONS): split the document, or raise the cap`,
    );
  // The upgrade and the dereference work on copies: the admin's record stays as given.
  let resolved: ReturnType<typeof dereference>;
  try {
    const upgraded = upgrade(structuredClone(bundled)).specification as unknown as Json;
    resolved = dereference(upgraded);
  } catch (err) {
    // What the parser cannot walk (references linked thousands deep) is refused, not a crash.
    throw new DocumentError(
      `could not be read: ${err instanceof RangeError ? "its references nest too deeply" : (err as Error).message}`,
    );
  }
  for (const error of resolved.errors ?? []) warnings.push(`${error.message}`);
  const document: unknown = resolved.schema;
  if (!isObject(document)) throw new DocumentError("could not be read as an OpenAPI document");
  return { document, version, warnings };
}
