// The admin REST API (/admin/v1): every route comes from the operation table, so the OpenAPI
// document and the routes cannot drift. Each request is authenticated, its path, query and body
// validated against the document's schemas, and every error leaves as problem+json. Answers that
// are records with a schema are serialized from it by Fastify.
import { refuseOperatorOnly } from "./operator-only.js";
import type { TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { User } from "../oauth/users.js";
import { excerpt, fail } from "../protocol/errors.js";
import { ApiKey } from "./api-keys.js";
import type { AdminPrincipal, AdminAuth } from "./auth.js";
import { DOCS_PAGE_CSP, renderDocsPage, type OpenApiDocument } from "./docs-page.js";
import { ADMIN_PREFIX } from "./openapi/document.js";
import { OPERATIONS } from "./openapi/operations.js";
import type { Operation } from "./openapi/operation-kit.js";
import type { Method } from "./openapi/operation-kit.js";
import type { AdminValidator } from "./openapi/validator.js";
import { OAuthClient, OAuthClientCreated } from "./openapi/oauth-schemas.js";
import { ApiKeyCreated, pageOf, TenantView } from "./openapi/schemas.js";
import { sendProblem } from "./problem.js";

export interface AdminCall {
  readonly principal: AdminPrincipal;
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  /** The If-Match header, when sent. */
  readonly ifMatch: string | undefined;
  /** The console session cookie's value, when the request authenticated with it. */
  readonly sessionCookie?: string;
}

export interface AdminReply {
  readonly status: number;
  readonly body?: unknown;
  readonly etag?: string;
  /** Path below /admin/v1 of a created resource. */
  readonly location?: string;
  /** The body's media type when it is not JSON (the body is then its text). */
  readonly type?: string;
  /** A Set-Cookie header to send (signing out clears the console's cookie). */
  readonly setCookie?: string;
}

export type Handler = (call: AdminCall) => Promise<AdminReply>;

export interface AdminPluginOptions {
  readonly auth: AdminAuth;
  readonly validator: AdminValidator;
  readonly document: Record<string, unknown>;
  /** A handler per operation id; every operation must have one. */
  readonly handlers: Readonly<Record<string, Handler>>;
  /**
   * Runs after a write succeeded, before it is answered: waits for the store's replicas, so that
   * what an admin was told is saved survives a failover (docs/storage.md "Replication").
   */
  readonly afterWrite?: () => Promise<unknown>;
}

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown> }>;

const PUBLIC: { readonly principal: AdminPrincipal } = { principal: { tenant: null, actor: "anonymous" } };

/** RFC 9110 §13.1.1: If-Match is `*` or a list of entity tags. */
function ifMatchOf(req: FastifyRequest): string | undefined {
  const value = req.headers["if-match"];
  return typeof value === "string" ? value.trim() : undefined;
}

/**
 * Who may call: a tenant key (or tenant admin) on another tenant's path gets 404 (its existence is
 * not revealed); on a platform route 403.
 */
function authorize(op: Operation, principal: AdminPrincipal, params: Record<string, string>): void {
  if (principal.tenant === null) return;
  const tenant = params.tenant;
  if (tenant !== undefined && tenant !== principal.tenant)
    throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(tenant)}"`);
  if (op.access === "platform")
    throw fail(
      "PORTICO_ERR_ADMIN_FORBIDDEN",
      "This route needs a platform key or platform admin; a tenant key or tenant admin manages its own tenant's resources only",
    );
}

/**
 * Records whose answers Fastify serializes from their schemas (fast-json-stringify): closed objects
 * the handlers build member by member, so a client receives the same JSON.
 */
const SERIALIZED: Readonly<Record<string, TSchema>> = {
  Tenant: TenantView,
  User,
  ApiKey,
  ApiKeyCreated,
  OAuthClient,
  OAuthClientCreated,
};

/** The component a schema is a bare reference to. */
function refName(schema: Record<string, unknown> | undefined): string | undefined {
  const ref = schema?.$ref;
  return typeof ref === "string" && Object.keys(schema!).length === 1 ? ref.split("/").pop() : undefined;
}

/** Serializer schemas of an operation's answers that are one of SERIALIZED, or a page of them. */
function responseSchemas(op: Operation): Record<number, unknown> | undefined {
  const out: Record<number, unknown> = {};
  for (const [status, { schema }] of Object.entries(op.responses)) {
    const items = (schema?.properties as Record<string, Record<string, unknown>> | undefined)?.items;
    const record = SERIALIZED[refName(schema) ?? ""];
    const paged = SERIALIZED[refName(items?.items as Record<string, unknown> | undefined) ?? ""];
    if (record) out[Number(status)] = record;
    else if (paged) out[Number(status)] = pageOf(paged);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export async function adminPlugin(app: FastifyInstance, opts: AdminPluginOptions): Promise<void> {
  const { auth, validator, handlers } = opts;
  const missing = OPERATIONS.filter((op) => op.id !== "getOpenApi" && !handlers[op.id]).map((op) => op.id);
  if (missing.length > 0) throw new Error(`admin operations without a handler: ${missing.join(", ")}`);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ["application/json", "application/merge-patch+json"],
    { parseAs: "string" },
    (_req, body, done) => {
      // No body at all is the handler's to answer ("The body is empty"), not malformed JSON.
      if (body === "") return done(null, undefined);
      let value: unknown;
      try {
        value = JSON.parse(body as string);
      } catch (err) {
        // V8's message quotes the body around the error, which may be a secret: keep the position only.
        const at = /position (\d+)/.exec((err as Error).message)?.[1];
        const where = at === undefined ? "" : ` (at character ${at})`;
        done(fail("PORTICO_ERR_ADMIN_MALFORMED", `The body is not valid JSON${where}`), undefined);
        return;
      }
      if (deeperThan(value, MAX_DEPTH))
        done(fail("PORTICO_ERR_ADMIN_INVALID", `The body nests deeper than ${MAX_DEPTH} levels`), undefined);
      else done(null, value);
    },
  );
  app.setErrorHandler((err, req, reply) => sendProblem(err, req, reply));
  app.setNotFoundHandler((req, reply) => sendProblem(notFound(req), req, reply));

  const serve = async (op: Operation, req: Req, reply: FastifyReply) => {
    if (op.id === "getOpenApi") return reply.send(opts.document);
    const principal = principals.get(req) ?? PUBLIC.principal;
    const query = validator.query(op, req.query ?? {});
    if (op.body && (req.body !== undefined || op.body.optional !== true)) {
      if (req.body === undefined)
        throw fail("PORTICO_ERR_ADMIN_MALFORMED", "The body is empty: send a JSON document");
      refuseOperatorOnly(op.id, req.body); // stdio providers: the bootstrap file's alone
      validator.body(op.body.schema, req.body);
    }
    const cookie = principal.via === "session" ? auth.sessionCookie(req) : undefined;
    const result = await handlers[op.id]!({
      principal,
      params: req.params,
      query,
      body: req.body,
      ifMatch: ifMatchOf(req),
      ...(cookie !== undefined && { sessionCookie: cookie }),
    });
    if (op.method !== "get" && result.status < 400) await opts.afterWrite?.();
    if (result.etag) reply.header("etag", result.etag);
    if (result.location) reply.header("location", `${ADMIN_PREFIX}${result.location}`);
    if (result.setCookie) reply.header("set-cookie", result.setCookie);
    reply.header("cache-control", "no-store");
    if (result.type) void reply.type(result.type);
    return result.body === undefined
      ? reply.code(result.status).send()
      : reply.code(result.status).send(result.body);
  };

  // Who calls, and whether they may, is settled before the body is even read.
  const principals = new WeakMap<FastifyRequest, AdminPrincipal>();
  const admit = (op: Operation) => async (req: FastifyRequest) => {
    const principal = await auth.authenticate(req);
    const params = req.params as Record<string, string>;
    validator.params(op, params);
    authorize(op, principal, params);
    principals.set(req, principal);
  };

  const byPath = new Map<string, Method[]>();
  for (const op of OPERATIONS) {
    // Registered under the /admin prefix: the 404 handler then covers /admin/* only.
    const url = "/v1" + op.path.replace(/\{(\w+)\}/g, ":$1");
    byPath.set(url, [...(byPath.get(url) ?? []), op.method]);
    const response = responseSchemas(op);
    app.route({
      method: op.method.toUpperCase(),
      url,
      ...(response ? { schema: { response } } : {}),
      ...(op.access === "public" ? {} : { onRequest: admit(op) }),
      handler: (req, reply) => serve(op, req as Req, reply),
    });
  }
  // A known path with another method: 405 with Allow (RFC 9110 §15.5.6).
  for (const [url, methods] of byPath) {
    const allow = methods.map((m) => m.toUpperCase()).join(", ");
    const others = (["GET", "POST", "PUT", "PATCH", "DELETE"] as const).filter(
      (m) => !methods.includes(m.toLowerCase() as Method),
    );
    if (others.length > 0)
      app.route({
        method: others,
        url,
        config: { methodNotAllowed: true },
        handler: async () => {
          throw fail("PORTICO_ERR_ADMIN_METHOD_NOT_ALLOWED", `Method not allowed here; use ${allow}`, {
            allow,
          });
        },
      });
  }

  // /admin itself serves nothing: point browsers and scripts at the reference page.
  app.get("/", async (_req, reply) =>
    reply
      .code(302)
      .header("location", "/admin/docs")
      .header("cache-control", "no-store")
      .send({ docs: "/admin/docs", openapi: `${ADMIN_PREFIX}/openapi.json` }),
  );
  const page = renderDocsPage(opts.document as unknown as OpenApiDocument);
  app.get("/docs", async (_req, reply) =>
    reply.type("text/html; charset=utf-8").header("content-security-policy", DOCS_PAGE_CSP).send(page),
  );
}

/** Bodies nest at most this deep: records are shallow, and deeper input only costs stack. */
const MAX_DEPTH = 64;

/** True when a parsed JSON value nests deeper than `max` (iterative: deep input cannot overflow the stack). */
function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

function notFound(req: FastifyRequest) {
  return fail(
    "PORTICO_ERR_ADMIN_NOT_FOUND",
    `No admin route ${req.method} ${excerpt(req.url.split("?")[0])}; see ${ADMIN_PREFIX}/openapi.json`,
  );
}
