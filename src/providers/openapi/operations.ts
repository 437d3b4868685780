// A loaded OpenAPI document (document.ts) as tools, one per operation (docs/openapi.md): names
// from `operationId` (else method and path), made valid and kept unique; the parameters and the
// request body as one input schema; the JSON answer as the output schema; annotations from the
// method; and for each tool the plan of the HTTP request a call makes (request.ts). Schemas are
// copied out of the document with cycles cut and a size bound, so a tool's schema is plain JSON.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { globMatch } from "../../records/glob.js";
import { HTTP_METHODS, type Json } from "./document.js";
import {
  requirementsOf,
  schemesOf,
  type Requirements,
  type Scheme,
  type SuppliedParameters,
} from "./security.js";

export type Location = "path" | "query" | "header" | "cookie";

/** How one parameter is written into the request (OpenAPI "Parameter Object", style and explode). */
export interface ParameterPlan {
  readonly name: string;
  readonly in: Location;
  /** Its key in the tool's arguments: its name, unless another location uses that name too. */
  readonly argument: string;
  readonly style: string;
  readonly explode: boolean;
  /** With `content` instead of `schema`: the value is sent as this media type (JSON). */
  readonly mediaType?: string;
}

export interface BodyPlan {
  readonly mediaType: string;
  /** Its key in the tool's arguments. */
  readonly argument: string;
  /** Form fields sent as files (multipart): their argument is base64. */
  readonly binaryFields: readonly string[];
}

export interface OperationPlan {
  readonly method: string;
  /** The path template, e.g. `/pets/{petId}`. */
  readonly path: string;
  /** Where it is called: the admin's baseUrl, else the document's server (useDocumentServers). */
  readonly server: string;
  readonly parameters: readonly ParameterPlan[];
  readonly body?: BodyPlan;
  /** The answer's structuredContent is the JSON value wrapped as {"result": …} (not an object). */
  readonly wrapOutput: boolean;
  readonly hasOutputSchema: boolean;
  /** The operation's security requirements: which credentials it carries (security.ts). */
  readonly security: Requirements;
}

export interface CompiledTool {
  readonly tool: Tool;
  readonly plan: OperationPlan;
}

export interface CompileOptions {
  readonly baseUrl?: string;
  /** Where the document was fetched from: its relative server URLs are relative to it. */
  readonly documentUrl?: string;
  readonly useDocumentServers?: boolean;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  /** The parameters an operation of these requirements gets from the provider, not the model. */
  readonly supplied?: (security: Requirements) => SuppliedParameters;
  /** The longest tool name that fits once prefixed. */
  readonly maxNameLength: number;
}

export interface Compiled {
  readonly tools: readonly CompiledTool[];
  readonly warnings: readonly string[];
  /** The document's security schemes, by name (security.ts). */
  readonly schemes: ReadonlyMap<string, Scheme>;
}

/** Headers a parameter may not set: Portico's own, the credentials', and hop-by-hop ones. */
const FORBIDDEN_HEADER =
  /^(?:host|cookie|authorization|proxy-authorization|content-length|content-type|accept|connection|keep-alive|transfer-encoding|te|trailer|upgrade|expect)$/i;
/** Nodes a tool's schema may hold; past it, the rest is cut with a marker. */
const MAX_SCHEMA_NODES = 5000;
/** Nodes all the tools of one document may hold together (a thousand tools of 5,000 would not fit in memory). */
const MAX_DOCUMENT_SCHEMA_NODES = 500_000;
/** A header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A server URL longer than this is not one. */
const MAX_SERVER_URL = 2048;
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
const LOCATIONS: readonly Location[] = ["path", "query", "header", "cookie"];
const DEFAULT_STYLE: Record<Location, string> = {
  path: "simple",
  query: "form",
  header: "simple",
  cookie: "form",
};

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

/**
 * A plain-JSON copy of a schema: a schema met again inside itself (a cycle) becomes a marker
 * saying so, and past `budget.nodes` nodes the rest is cut too, so a deep or self-referencing
 * document gives a finite schema, never a stack overflow.
 */
export function plainSchema(schema: unknown, budget = { nodes: MAX_SCHEMA_NODES }): Json {
  const ancestors = new Set<object>();
  // Only schemas are compared: a map of them (`properties`) or an array may be shared between a
  // schema and its copy without being a cycle.
  const copy = (node: unknown, depth: number, container: boolean): unknown => {
    if (typeof node !== "object" || node === null) return node;
    const schema = !container && !Array.isArray(node);
    if (schema && ancestors.has(node))
      return { description: "(recursive: the same schema as an enclosing one; cut here)" };
    // Every member counts, so a large enum shared by many schemas is bounded too.
    budget.nodes -= 1 + (Array.isArray(node) ? node.length : Object.keys(node).length);
    if (budget.nodes < 0 || depth > 64) return { description: "(schema cut: too large or too deep)" };
    if (schema) ancestors.add(node);
    try {
      if (Array.isArray(node)) return node.map((item) => copy(item, depth + 1, false));
      const out: Json = {};
      for (const [key, value] of Object.entries(node)) {
        if (container) {
          // A map's values are schemas; `true` and `false` are schemas too (JSON Schema 2020-12),
          // written out as objects, which every client's validator accepts.
          out[key] = value === true ? {} : value === false ? { not: {} } : copy(value, depth + 1, false);
          continue;
        }
        // Vendor extensions and examples are for documentation tools, not for a model's schema.
        if (key.startsWith("x-") || key === "example" || key === "examples" || key === "xml") continue;
        // `required: true` (an OpenAPI 3.0 property's habit) is not JSON Schema: clients refuse it.
        if (key === "required" && !(Array.isArray(value) && value.every((v) => typeof v === "string")))
          continue;
        out[key] = copy(value, depth + 1, schema && SCHEMA_MAPS.has(key));
      }
      return out;
    } finally {
      if (schema) ancestors.delete(node);
    }
  };
  const result = copy(schema, 0, false);
  return isObject(result) ? result : {};
}

function selected(op: Json, method: string, path: string, options: CompileOptions): boolean {
  const keys = [
    `${method.toUpperCase()} ${path}`,
    ...(str(op.operationId) ? [op.operationId as string] : []),
    ...(Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === "string") : []),
  ];
  const matches = (patterns: readonly string[]) =>
    patterns.some((p) => keys.some((k) => globMatch(p, k, true)));
  if (options.include && !matches(options.include)) return false;
  return !(options.exclude && matches(options.exclude));
}

/** A valid tool name from an operationId, or from the method and path when there is none. */
function baseName(op: Json, method: string, path: string): string {
  const raw = str(op.operationId) ?? `${method}_${path.replace(/[{}]/g, "")}`;
  const name = raw
    .replace(/[^A-Za-z0-9_.-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .replace(/_{2,}/g, "_");
  return name || method;
}

/** Cut to `max` characters, keeping it apart from others cut the same way by a short hash. */
function fit(name: string, max: number): string {
  if (name.length <= max) return name;
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  const tag = `_${hash.toString(36).slice(0, 6)}`;
  return `${name.slice(0, Math.max(1, max - tag.length))}${tag}`;
}

/** A server URL with its variables at their defaults. */
function serverUrl(server: unknown): string | undefined {
  if (!isObject(server) || typeof server.url !== "string") return undefined;
  const variables = isObject(server.variables) ? server.variables : {};
  if (server.url.length > MAX_SERVER_URL) return undefined;
  return server.url.replace(/\{([^{}]*)\}/g, (whole, name: string) => {
    const v = variables[name];
    return isObject(v) && typeof v.default === "string" ? v.default : whole;
  });
}

/** A server URL relative to the document's own URL, as OpenAPI says; `named` when it cannot be. */
function resolved(named: string, documentUrl: string): string {
  try {
    return new URL(named, documentUrl).href;
  } catch {
    return named;
  }
}

/** OpenAPI's precedence: the operation's servers, then the path's, then the document's. */
function documentServer(document: Json, item: Json, op: Json): string | undefined {
  for (const servers of [op.servers, item.servers, document.servers])
    if (Array.isArray(servers) && servers.length > 0) return serverUrl(servers[0]);
  return undefined;
}

/** The parameters of an operation: the path's, overridden by the operation's of the same name and place. */
function parametersOf(item: Json, op: Json): Json[] {
  const all = new Map<string, Json>();
  for (const list of [item.parameters, op.parameters])
    if (Array.isArray(list))
      for (const p of list)
        if (isObject(p) && typeof p.name === "string" && LOCATIONS.includes(p.in as Location))
          all.set(`${p.in as string}\n${p.name}`, p);
  return [...all.values()];
}

const isJson = (type: string) => type === "application/json" || /\+json$/.test(type) || type === "*/*";

/** The media type a request body is sent as: JSON first, then forms, then anything else. */
function bodyMediaType(content: Json): string | undefined {
  const types = Object.keys(content);
  return (
    types.find((t) => isJson(t.toLowerCase())) ??
    types.find((t) => t.toLowerCase() === "application/x-www-form-urlencoded") ??
    types.find((t) => t.toLowerCase() === "multipart/form-data") ??
    types[0]
  );
}

/** The JSON answer's schema: the first 2xx response's, when every 2xx response has JSON content. */
function outputOf(op: Json): Json | undefined {
  const responses = isObject(op.responses) ? op.responses : {};
  const codes = Object.keys(responses)
    .filter((c) => /^2(?:\d\d|XX)$/i.test(c))
    .sort();
  const schemas = codes.map((code) => {
    const response = responses[code];
    const content = isObject(response) && isObject(response.content) ? response.content : undefined;
    const type = content && Object.keys(content).find((t) => isJson(t.toLowerCase()) && t !== "*/*");
    const media = type === undefined ? undefined : content![type];
    return isObject(media) && isObject(media.schema) ? media.schema : undefined;
  });
  // A schema is promised only when every success answers JSON: a 204 beside a 200 would
  // otherwise be a success that breaks the promise (clients refuse a result without it).
  return schemas.length > 0 && schemas.every((s) => s !== undefined) ? schemas[0] : undefined;
}

function isBinary(schema: unknown): boolean {
  return (
    isObject(schema) &&
    (schema.format === "binary" || (typeof schema.contentMediaType === "string" && schema.type !== "string"))
  );
}

/** Compiles the operations of a document into tools. */
export function compileOperations(document: Json, options: CompileOptions): Compiled {
  const warnings: string[] = [];
  const tools: CompiledTool[] = [];
  const used = new Set<string>();
  const total = { nodes: MAX_DOCUMENT_SCHEMA_NODES };
  const paths = isObject(document.paths) ? document.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    // OpenAPI: a path begins with "/". Anything else appended to a server could name another host.
    if (!path.startsWith("/")) {
      warnings.push(`${JSON.stringify(path.slice(0, 200))}: left out: a path must begin with "/"`);
      continue;
    }
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isObject(op) || !selected(op, method, path, options)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const named = options.useDocumentServers ? documentServer(document, item, op) : undefined;
      const server =
        options.baseUrl ??
        (named !== undefined && options.documentUrl !== undefined
          ? resolved(named, options.documentUrl)
          : named);
      if (server === undefined || !/^https?:\/\//i.test(server)) {
        warnings.push(
          `${where}: left out: no server to call it at (${server === undefined ? 'set "baseUrl", or "useDocumentServers" for a document that names its servers' : `the document's server ${JSON.stringify(server)} is not an absolute http(s) URL`})`,
        );
        continue;
      }
      let name = fit(baseName(op, method, path), options.maxNameLength);
      for (let n = 2; used.has(name); n++)
        name = fit(`${baseName(op, method, path)}_${n}`, options.maxNameLength);
      used.add(name);
      if (!str(op.operationId))
        warnings.push(`${where}: no operationId; the tool is named ${JSON.stringify(name)}`);
      const security = requirementsOf(document, op);
      tools.push(
        compileOne(
          name,
          method,
          path,
          server,
          op,
          security,
          parametersOf(item, op),
          warnings,
          total,
          options.supplied?.(security),
        ),
      );
    }
  }
  return { tools, warnings, schemes: schemesOf(document) };
}

function compileOne(
  name: string,
  method: string,
  path: string,
  server: string,
  op: Json,
  security: Requirements,
  parameters: Json[],
  warnings: string[],
  /** What every tool's schemas of the document may hold together. */
  total: { nodes: number },
  supplied?: SuppliedParameters,
): CompiledTool {
  const where = `${method.toUpperCase()} ${path}`;
  const budget = { nodes: Math.max(0, Math.min(MAX_SCHEMA_NODES, total.nodes)) };
  const granted = budget.nodes;
  const properties: Json = {};
  const required: string[] = [];
  const plans: ParameterPlan[] = [];
  // A name used in more than one place keeps its bare name in the first (path, query, header,
  // cookie) and is `{in}_{name}` in the others.
  const byName = new Map<string, Location[]>();
  for (const p of parameters)
    byName.set(p.name as string, [...(byName.get(p.name as string) ?? []), p.in as Location]);
  for (const location of LOCATIONS)
    for (const p of parameters.filter((q) => q.in === location)) {
      const pname = p.name as string;
      if (location === "header" && !HEADER_NAME.test(pname)) {
        warnings.push(
          `${where}: header parameter ${JSON.stringify(pname.slice(0, 100))} left out: not a valid header name`,
        );
        continue;
      }
      if (location === "header" && FORBIDDEN_HEADER.test(pname)) {
        warnings.push(
          `${where}: header parameter ${JSON.stringify(pname)} left out: Portico sets that header itself`,
        );
        continue;
      }
      // The provider's own headers and credentials carry it: the model is not asked for it.
      if (
        location !== "path" &&
        supplied?.[location].has(location === "header" ? pname.toLowerCase() : pname)
      )
        continue;
      const first = LOCATIONS.find((l) => byName.get(pname)!.includes(l));
      const argument = first === location ? pname : `${location}_${pname}`;
      let schema: Json;
      let mediaType: string | undefined;
      if (isObject(p.schema)) schema = plainSchema(p.schema, budget);
      else if (isObject(p.content) && Object.keys(p.content).length > 0) {
        mediaType = Object.keys(p.content)[0]!;
        const media = p.content[mediaType];
        schema = isObject(media) && isObject(media.schema) ? plainSchema(media.schema, budget) : {};
      } else schema = {};
      const description = str(p.description);
      properties[argument] =
        description && schema.description === undefined ? { ...schema, description } : schema;
      if (location === "path" || p.required === true) required.push(argument);
      const style = str(p.style) ?? DEFAULT_STYLE[location];
      const explode = typeof p.explode === "boolean" ? p.explode : style === "form";
      plans.push({ name: pname, in: location, argument, style, explode, ...(mediaType && { mediaType }) });
    }
  let body: BodyPlan | undefined;
  const requestBody = isObject(op.requestBody) ? op.requestBody : undefined;
  const content = requestBody && isObject(requestBody.content) ? requestBody.content : undefined;
  const mediaType = content ? bodyMediaType(content) : undefined;
  if (content && mediaType !== undefined) {
    const argument = properties.body === undefined ? "body" : "request_body";
    const media = content[mediaType];
    let schema = isObject(media) && isObject(media.schema) ? plainSchema(media.schema, budget) : {};
    const binaryFields: string[] = [];
    if (/^multipart\//i.test(mediaType) && isObject(schema.properties)) {
      const props: Json = { ...schema.properties };
      for (const [field, fieldSchema] of Object.entries(props))
        if (isBinary(fieldSchema)) {
          binaryFields.push(field);
          props[field] = {
            type: "string",
            contentEncoding: "base64",
            description: "The file's bytes, base64.",
          };
        }
      schema = { ...schema, properties: props };
    } else if (!isJson(mediaType.toLowerCase()) && !/^application\/x-www-form-urlencoded$/i.test(mediaType)) {
      schema = {
        type: "string",
        description:
          isBinary(media && isObject(media) ? media.schema : undefined) ||
          /octet-stream|^image\/|^audio\/|^video\//i.test(mediaType)
            ? `The body's bytes (${mediaType}), base64.`
            : `The body (${mediaType}).`,
      };
    }
    const description = str(requestBody!.description);
    properties[argument] =
      description && schema.description === undefined ? { ...schema, description } : schema;
    if (requestBody!.required === true) required.push(argument);
    body = { mediaType, argument, binaryFields };
  }
  const inputSchema = {
    type: "object",
    properties,
    ...(required.length > 0 && { required }),
  } as Tool["inputSchema"];
  const output = outputOf(op);
  let outputSchema: Tool["outputSchema"] | undefined;
  let wrapOutput = true;
  if (output) {
    const plain = plainSchema(output, budget);
    wrapOutput = plain.type !== "object";
    outputSchema = (
      wrapOutput ? { type: "object", properties: { result: plain }, required: ["result"] } : plain
    ) as Tool["outputSchema"];
  }
  const annotations: Tool["annotations"] =
    method === "get" || method === "head"
      ? { readOnlyHint: true }
      : method === "put" || method === "delete"
        ? { idempotentHint: true }
        : undefined;
  const summary = str(op.summary);
  const detail = str(op.description);
  // The operation's tags, which tool search filters by (docs/tool-search.md).
  const tags = Array.isArray(op.tags)
    ? op.tags.filter((t): t is string => typeof t === "string" && t.length <= 100).slice(0, 20)
    : [];
  const tool: Tool = {
    name,
    ...(summary && { title: summary }),
    ...((detail ?? summary) && { description: detail ?? summary }),
    inputSchema,
    ...(outputSchema && { outputSchema }),
    ...(annotations && { annotations }),
    ...(tags.length > 0 && { _meta: { tags } }),
  };
  if (budget.nodes < 0) warnings.push(`${where}: its schemas are too large and were cut`);
  total.nodes -= granted - Math.max(0, budget.nodes);
  return {
    tool,
    plan: {
      method,
      path,
      server,
      parameters: plans,
      ...(body && { body }),
      wrapOutput,
      hasOutputSchema: outputSchema !== undefined,
      security,
    },
  };
}
