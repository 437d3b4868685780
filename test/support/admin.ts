// An admin API client for tests that checks every response it receives against the OpenAPI
// document: the status must be documented for the operation, the media type right, the body valid.
import assert from "node:assert/strict";
import { openApiDocument } from "../../src/admin/openapi/document.js";
import { OPERATIONS } from "../../src/admin/openapi/operations.js";
import type { Operation } from "../../src/admin/openapi/operation-kit.js";
import { AdminValidator } from "../../src/admin/openapi/validator.js";

export const ADMIN_TOKEN = "portico-test-admin-token-0123456789";

const document = openApiDocument() as {
  paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
  components: { responses: Record<string, { content: Record<string, { schema: Record<string, unknown> }> }> };
};
const validator = new AdminValidator(document);

export interface AdminResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export interface CallOptions {
  readonly body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  readonly raw?: string;
  /** A key to use instead of the client's; null sends none. */
  readonly token?: string | null;
  readonly headers?: Record<string, string>;
}

/** The operation a concrete path and method belong to, if any. */
export function operationFor(method: string, path: string): Operation | undefined {
  const bare = path.split("?")[0]!;
  return OPERATIONS.find((op) => {
    if (op.method !== method.toLowerCase()) return false;
    const pattern = new RegExp(`^${op.path.replace(/\{\w+\}/g, "[^/]+")}$`);
    return pattern.test(bare);
  });
}

/** Asserts that a response is one the document describes for this operation. */
export function assertDocumented(method: string, path: string, res: AdminResponse): void {
  const op = operationFor(method, path);
  const contentType = res.headers.get("content-type") ?? "";
  const where = `${method} ${path} → ${res.status}`;
  if (res.status >= 400)
    assert.match(contentType, /^application\/problem\+json/, `${where}: errors are problem+json`);
  if (!op) {
    // Unknown routes and methods: still problem details.
    assert.ok(res.status === 404 || res.status === 405 || res.status === 401, `${where}: undocumented route`);
    assert.deepEqual(validator.check({ $ref: "#/components/schemas/Problem" }, res.body), [], where);
    return;
  }
  let spec = document.paths[op.path]![op.method]!.responses[String(res.status)];
  assert.ok(spec, `${where}: status not documented for ${op.id}`);
  if (typeof spec.$ref === "string") spec = document.components.responses[spec.$ref.split("/").pop()!]!;
  const content = spec.content as Record<string, { schema: Record<string, unknown> }> | undefined;
  if (!content) {
    assert.equal(res.body, undefined, `${where}: no body documented`);
    return;
  }
  const [mediaType, media] = Object.entries(content)[0]!;
  assert.ok(
    contentType.startsWith(mediaType),
    `${where}: content-type ${contentType}, documented ${mediaType}`,
  );
  assert.deepEqual(validator.check(media.schema, res.body), [], `${where}: body does not match the document`);
  const headers = (spec.headers ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(headers))
    assert.ok(res.headers.has(name), `${where}: header ${name} missing`);
}

export class AdminClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string = ADMIN_TOKEN,
  ) {}

  /** Calls /admin/v1{path} and validates the response against the document. */
  async call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<AdminResponse<T>> {
    const token = opts.token === undefined ? this.token : opts.token;
    const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const hasBody = opts.body !== undefined || opts.raw !== undefined;
    if (hasBody) headers["content-type"] = "application/json";
    const res = await fetch(`${this.baseUrl}/admin/v1${path}`, {
      method,
      headers: { ...headers, ...opts.headers },
      body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    const text = await res.text();
    // JSON lines (an audit export) stay text; everything else is JSON.
    const lines = (res.headers.get("content-type") ?? "").startsWith("application/x-ndjson");
    const response: AdminResponse<T> = {
      status: res.status,
      headers: res.headers,
      body: text === "" ? (undefined as T) : lines ? (text as T) : (JSON.parse(text) as T),
    };
    assertDocumented(method, path, response);
    return response;
  }

  get<T = any>(path: string, opts?: CallOptions) {
    return this.call<T>("GET", path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: CallOptions) {
    return this.call<T>("POST", path, { ...opts, body });
  }
  put<T = any>(path: string, body: unknown, opts?: CallOptions) {
    return this.call<T>("PUT", path, { ...opts, body });
  }
  patch<T = any>(path: string, body: unknown, opts?: CallOptions) {
    return this.call<T>("PATCH", path, { ...opts, body });
  }
  delete<T = any>(path: string, opts?: CallOptions) {
    return this.call<T>("DELETE", path, opts);
  }
}

/** Every concrete instance of an operation's path, with the given ids. */
export function concretePath(op: Operation, ids: Record<string, string>): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? `missing-${name}`);
}
