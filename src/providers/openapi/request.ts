// A tool call's arguments as the HTTP request of its operation (operations.ts plans it): each
// parameter serialized as OpenAPI's `style` and `explode` say ("Style Values": simple, label,
// matrix, form, spaceDelimited, pipeDelimited, deepObject), the body as its media type (JSON,
// urlencoded or multipart forms, else the text or base64 bytes given). A path value is
// percent-encoded whole, `/`, `.`, `?` and `#` included, so no value leaves its operation's path.
import type { BodyPlan, OperationPlan, ParameterPlan } from "./operations.js";

export interface PlannedRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body?: string | Uint8Array | FormData;
}

/** An argument a call cannot be made with; shown to the model as the tool's error. */
export class ArgumentError extends Error {}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function scalar(v: unknown): string {
  if (v === null) return "null";
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** RFC 3986 unreserved characters only: everything else percent-encoded (`.` too, for paths). */
function strict(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*.~]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

const query = (value: string) => encodeURIComponent(value);

/** Key/value pairs of an object, or the items of an array, as strings. */
function entries(value: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(value).map(([k, v]) => [k, scalar(v)]);
}

/** A path parameter's text (simple, label, matrix), encoded. */
function pathValue(p: ParameterPlan, value: unknown): string {
  const e = strict;
  const list = Array.isArray(value) ? value.map((v) => e(scalar(v))) : undefined;
  const pairs = isObject(value) ? entries(value).map(([k, v]) => [e(k), e(v)] as const) : undefined;
  switch (p.style) {
    case "label": {
      const sep = p.explode ? "." : ",";
      if (list) return `.${list.join(sep)}`;
      if (pairs) return `.${pairs.map(([k, v]) => (p.explode ? `${k}=${v}` : `${k},${v}`)).join(sep)}`;
      return `.${e(scalar(value))}`;
    }
    case "matrix": {
      const n = e(p.name);
      if (list) return p.explode ? list.map((v) => `;${n}=${v}`).join("") : `;${n}=${list.join(",")}`;
      if (pairs)
        return p.explode
          ? pairs.map(([k, v]) => `;${k}=${v}`).join("")
          : `;${n}=${pairs.map(([k, v]) => `${k},${v}`).join(",")}`;
      return `;${n}=${e(scalar(value))}`;
    }
    default: {
      if (list) return list.join(",");
      if (pairs) return pairs.map(([k, v]) => (p.explode ? `${k}=${v}` : `${k},${v}`)).join(",");
      return e(scalar(value));
    }
  }
}

/** The delimiter of a non-exploded array or object in a query: literal, as the specification writes it. */
function delimiter(style: string): string {
  return style === "spaceDelimited" ? "%20" : style === "pipeDelimited" ? "|" : ",";
}

/** A query parameter's `name=value` pairs: values encoded, delimiters not. */
function queryPairs(p: ParameterPlan, value: unknown): string[] {
  const n = query(p.name);
  if (p.mediaType !== undefined) return [`${n}=${query(JSON.stringify(value))}`];
  const sep = delimiter(p.style);
  if (Array.isArray(value)) {
    const items = value.map((v) => query(scalar(v)));
    if (p.explode && p.style !== "deepObject") return items.map((v) => `${n}=${v}`);
    return [`${n}=${items.join(sep)}`];
  }
  if (isObject(value)) {
    const pairs = entries(value);
    if (p.style === "deepObject") return pairs.map(([k, v]) => `${n}%5B${query(k)}%5D=${query(v)}`);
    if (p.explode) return pairs.map(([k, v]) => `${query(k)}=${query(v)}`);
    return [`${n}=${pairs.map(([k, v]) => `${query(k)}${sep}${query(v)}`).join(sep)}`];
  }
  return [`${n}=${query(scalar(value))}`];
}

/** A header's value (simple style); no line breaks can get in. */
function headerValue(p: ParameterPlan, value: unknown): string {
  let text: string;
  if (p.mediaType !== undefined) text = JSON.stringify(value);
  else if (Array.isArray(value)) text = value.map(scalar).join(",");
  else if (isObject(value))
    text = entries(value)
      .map(([k, v]) => (p.explode ? `${k}=${v}` : `${k},${v}`))
      .join(",");
  else text = scalar(value);
  if (/[\r\n\0]/.test(text)) throw new ArgumentError(`header ${p.argument} must not contain line breaks`);
  return text;
}

/** A cookie's `name=value` pairs (form style). */
function cookiePairs(p: ParameterPlan, value: unknown): string[] {
  const n = query(p.name);
  if (Array.isArray(value))
    return p.explode
      ? value.map((v) => `${n}=${query(scalar(v))}`)
      : [`${n}=${value.map((v) => query(scalar(v))).join(",")}`];
  if (isObject(value))
    return p.explode
      ? entries(value).map(([k, v]) => `${query(k)}=${query(v)}`)
      : [
          `${n}=${entries(value)
            .map(([k, v]) => `${query(k)},${query(v)}`)
            .join(",")}`,
        ];
  return [`${n}=${query(scalar(value))}`];
}

function base64(value: unknown, what: string): Uint8Array {
  if (typeof value !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value.replace(/\s+/g, "")))
    throw new ArgumentError(`${what} must be base64`);
  return Buffer.from(value, "base64");
}

function requestBody(plan: BodyPlan, value: unknown, headers: Headers): string | Uint8Array | FormData {
  const type = plan.mediaType.toLowerCase();
  if (type === "application/json" || type.endsWith("+json") || type === "*/*") {
    headers.set("content-type", type === "*/*" ? "application/json" : plan.mediaType);
    return JSON.stringify(value);
  }
  if (type === "application/x-www-form-urlencoded") {
    if (!isObject(value)) throw new ArgumentError(`${plan.argument} must be an object of form fields`);
    headers.set("content-type", plan.mediaType);
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(value))
      for (const item of Array.isArray(v) ? v : [v]) form.append(k, scalar(item));
    return form.toString();
  }
  if (type.startsWith("multipart/")) {
    if (!isObject(value)) throw new ArgumentError(`${plan.argument} must be an object of form fields`);
    // fetch writes the content type with its boundary.
    const form = new FormData();
    for (const [k, v] of Object.entries(value))
      if (plan.binaryFields.includes(k)) form.append(k, new Blob([base64(v, `${plan.argument}.${k}`)]), k);
      else for (const item of Array.isArray(v) ? v : [v]) form.append(k, scalar(item));
    return form;
  }
  headers.set("content-type", plan.mediaType);
  if (/octet-stream|^image\/|^audio\/|^video\//.test(type)) return base64(value, plan.argument);
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A path value that is a dot segment: URL parsers resolve it, encoded or not, out of its path. */
function dotSegment(value: unknown): boolean {
  const items = Array.isArray(value) ? value : [value];
  return items.some((v) => typeof v === "string" && (v === "." || v === ".."));
}

/**
 * The request a call makes. The configured headers win over parameters of the same name (they
 * carry the admin's credentials); a configured cookie comes first. The URL is checked to stay
 * under the operation's server, whatever the document's path or the values say.
 */
export function buildRequest(
  plan: OperationPlan,
  args: Record<string, unknown>,
  configured: Readonly<Record<string, string>> = {},
): PlannedRequest {
  const headers = new Headers();
  let path = plan.path;
  const queryParts: string[] = [];
  const cookies: string[] = [];
  for (const p of plan.parameters) {
    const value = args[p.argument];
    if (value === undefined) {
      if (p.in === "path") throw new ArgumentError(`${p.argument} is required`);
      continue;
    }
    if (p.in === "path") {
      if (dotSegment(value)) throw new ArgumentError(`${p.argument} must not be "." or ".."`);
      path = path.split(`{${p.name}}`).join(pathValue(p, value));
    } else if (p.in === "query") queryParts.push(...queryPairs(p, value));
    else if (p.in === "header") headers.set(p.name, headerValue(p, value));
    else cookies.push(...cookiePairs(p, value));
  }
  for (const [name, value] of Object.entries(configured)) headers.set(name, value);
  if (cookies.length > 0) {
    const own = headers.get("cookie");
    headers.set("cookie", [...(own ? [own] : []), ...cookies].join("; "));
  }
  const base = plan.server.replace(/\/+$/, "");
  const url = `${base}${path}${queryParts.length > 0 ? `?${queryParts.join("&")}` : ""}`;
  const target = new URL(url);
  const server = new URL(`${base}/`);
  if (target.origin !== server.origin || !`${target.pathname}/`.startsWith(server.pathname))
    throw new ArgumentError(`the request would leave ${server.origin}${server.pathname}`);
  const value = plan.body ? args[plan.body.argument] : undefined;
  const body = plan.body && value !== undefined ? requestBody(plan.body, value, headers) : undefined;
  return { url, method: plan.method.toUpperCase(), headers, ...(body !== undefined && { body }) };
}
