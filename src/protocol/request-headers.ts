// The request metadata headers of 2026-07-28 (basic/transports/streamable-http §Request Metadata):
// Mcp-Method on every request, Mcp-Name on tools/call, prompts/get and resources/read (and on the
// tasks extension's tasks/get, tasks/update and tasks/cancel, its task id), and Mcp-Param-{Name} for tool parameters annotated with `x-mcp-header`. Intermediaries may route on
// them, so each must equal the body it mirrors: anything missing, different, malformed or badly
// encoded is 400 + -32020 (HeaderMismatch). Names are case-insensitive, values case-sensitive,
// surrounding whitespace is not part of a value.
import type { IncomingHttpHeaders } from "node:http";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { excerpt, fail } from "./errors.js";

/** Which body field Mcp-Name mirrors, per method. */
export const NAMED: ReadonlyMap<string, "name" | "uri" | "taskId"> = new Map([
  ["tools/call", "name"],
  ["prompts/get", "name"],
  ["resources/read", "uri"],
  // The tasks extension's "Streamable HTTP: Routing Headers".
  ["tasks/get", "taskId"],
  ["tasks/update", "taskId"],
  ["tasks/cancel", "taskId"],
]);

/** Visible ASCII, space and tab (RFC 9110 §5.5); anything else needs the Base64 sentinel. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
/** Visible ASCII with inner spaces: sent as is. Anything else goes in the Base64 sentinel. */
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

/** One `x-mcp-header` annotation: the header's name part and the property path it mirrors. */
export interface ParamHeader {
  readonly header: string;
  readonly path: readonly string[];
  readonly type: "string" | "integer" | "boolean";
}

function mismatch(message: string): never {
  throw fail("PORTICO_ERR_MCP_HEADER_MISMATCH", `Header mismatch: ${message}`);
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) {
    if (value.length > 1) mismatch(`${name} was sent more than once`);
    return value[0];
  }
  return value;
}

/** A header's value with surrounding whitespace removed and the Base64 sentinel decoded. */
/** A header value per §Value Encoding: plain when safe and not sentinel-shaped, else `=?base64?…?=`. */
export function encodeHeaderValue(value: string): string {
  if (PLAIN_VALUE.test(value) && !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)))
    return value;
  return `${SENTINEL_PREFIX}${Buffer.from(value, "utf8").toString("base64")}${SENTINEL_SUFFIX}`;
}

export function decodeHeaderValue(name: string, raw: string): string {
  const value = raw.trim();
  if (!FIELD_VALUE.test(value)) mismatch(`${name} contains characters not allowed in a header value`);
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(encoded)) mismatch(`${name} is not valid Base64 inside =?base64?…?=`);
  const bytes = Buffer.from(encoded, "base64");
  const text = new TextDecoder("utf-8", { fatal: true });
  try {
    return text.decode(bytes);
  } catch {
    return mismatch(`${name} does not decode to UTF-8 text`);
  }
}

/** Checks Mcp-Method, Mcp-Name and, for tools/call, the tool's Mcp-Param-* headers. */
export function checkRequestHeaders(
  headers: IncomingHttpHeaders,
  method: string,
  params: Record<string, unknown>,
  tool?: Tool,
): void {
  const mcpMethod = single(headers, "mcp-method");
  if (mcpMethod === undefined) mismatch("the Mcp-Method header is required");
  // Only Mcp-Name and Mcp-Param-* may use the Base64 sentinel: a method is compared as sent.
  const sentMethod = mcpMethod.trim();
  if (sentMethod !== method)
    mismatch(
      `Mcp-Method header value '${excerpt(sentMethod)}' does not match body value '${excerpt(method)}'`,
    );
  const field = NAMED.get(method);
  if (field !== undefined) {
    const raw = single(headers, "mcp-name");
    const body = params[field];
    if (raw === undefined) mismatch(`the Mcp-Name header is required for ${excerpt(method)}`);
    const name = decodeHeaderValue("Mcp-Name", raw);
    if (typeof body !== "string" || name !== body)
      mismatch(`Mcp-Name header value '${excerpt(name)}' does not match body ${field} '${excerpt(body)}'`);
  }
  if (tool !== undefined) checkParamHeaders(headers, tool, params.arguments);
}

function checkParamHeaders(headers: IncomingHttpHeaders, tool: Tool, args: unknown): void {
  for (const annotation of paramHeadersOf(tool)) {
    const headerName = `mcp-param-${annotation.header.toLowerCase()}`;
    const raw = single(headers, headerName);
    const value = valueAt(args, annotation.path);
    const label = `Mcp-Param-${annotation.header}`;
    if (value === undefined || value === null) {
      if (raw !== undefined) mismatch(`${label} was sent but the argument it mirrors is absent`);
      continue;
    }
    if (raw === undefined) mismatch(`${label} is required: the argument it mirrors is in the body`);
    const sent = decodeHeaderValue(label, raw);
    if (!sameValue(sent, value, annotation.type))
      mismatch(`${label} header value '${excerpt(sent)}' does not match the argument in the body`);
  }
}

function sameValue(sent: string, value: unknown, type: ParamHeader["type"]): boolean {
  switch (type) {
    case "string":
      return typeof value === "string" && sent === value;
    case "boolean":
      return typeof value === "boolean" && sent === String(value);
    case "integer":
      // Compared as numbers: "42.0" and 42 are the same value.
      return typeof value === "number" && sent !== "" && Number(sent) === value;
  }
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let at = args;
  for (const key of path) {
    if (typeof at !== "object" || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

const annotations = new WeakMap<Tool, readonly ParamHeader[]>();

/**
 * The `x-mcp-header` annotations of a tool, found along chains of `properties` only (the spec's
 * "statically reachable"); annotations elsewhere or on other types are not headers a client
 * mirrors, so they are not expected.
 */
export function paramHeadersOf(tool: Tool): readonly ParamHeader[] {
  let found = annotations.get(tool);
  if (found === undefined) {
    const out: ParamHeader[] = [];
    collect(tool.inputSchema, [], out);
    found = out;
    annotations.set(tool, found);
  }
  return found;
}

function collect(schema: unknown, path: string[], out: ParamHeader[]): void {
  if (typeof schema !== "object" || schema === null) return;
  const properties = (schema as { properties?: unknown }).properties;
  if (typeof properties !== "object" || properties === null) return;
  for (const [key, sub] of Object.entries(properties as Record<string, unknown>)) {
    if (typeof sub !== "object" || sub === null) continue;
    const header = (sub as Record<string, unknown>)["x-mcp-header"];
    const type = (sub as { type?: unknown }).type;
    if (
      typeof header === "string" &&
      /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(header) &&
      (type === "string" || type === "integer" || type === "boolean")
    )
      out.push({ header, path: [...path, key], type });
    collect(sub, [...path, key], out);
  }
}
