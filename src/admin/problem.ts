// Errors on /admin speak RFC 9457 problem details: a stable `type` per error code, the HTTP
// reason as `title`, a `detail` a person can act on and, for invalid bodies, each member's JSON
// Pointer. Unexpected errors get a generic body; the log gets the reason (docs/architecture.md §5).
import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { fail, isPorticoError, type PorticoError } from "../protocol/errors.js";
import type { FieldError } from "../records/schema-check.js";

export const PROBLEM_JSON = "application/problem+json";

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly pointer?: string;
  readonly errors?: readonly FieldError[];
}

/** Fastify's own errors (body parsing, limits) as Portico's. */
function fromFastify(err: FastifyError): PorticoError | undefined {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return fail("PORTICO_ERR_ADMIN_BODY_TOO_LARGE", "The body is too large (see PORTICO_BODY_LIMIT_BYTES)");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return fail("PORTICO_ERR_ADMIN_CONTENT_TYPE", "Send the body as application/json");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return fail("PORTICO_ERR_ADMIN_MALFORMED", "The body is empty: send a JSON document");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return fail("PORTICO_ERR_ADMIN_MALFORMED", "Content-Length does not match the body");
    default:
      return undefined;
  }
}

export function problemOf(err: PorticoError): Problem {
  const data = err.data as { errors?: FieldError[] } | undefined;
  const errors = data?.errors;
  return {
    type: `urn:portico:problem:${err.code
      .replace(/^PORTICO_ERR_/, "")
      .toLowerCase()
      .replaceAll("_", "-")}`,
    title: STATUS_CODES[err.status] ?? "Error",
    status: err.status,
    detail: err.message,
    code: err.code,
    ...(errors && errors.length > 0 ? { pointer: errors[0]!.pointer, errors } : {}),
  };
}

/** The admin surface's error handler. */
export function sendProblem(err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  let known = isPorticoError(err) ? err : fromFastify(err as FastifyError);
  if (!known) {
    req.log.error({ err, url: req.url }, "admin request failed");
    known = fail("PORTICO_ERR_ADMIN_INTERNAL", "Internal error: the server log has the details");
  }
  const problem = problemOf(known);
  if (problem.status === 401) reply.header("www-authenticate", challenge(known));
  if (problem.status === 503) reply.header("retry-after", "1");
  if (problem.status === 405) reply.header("allow", String((known.data as { allow?: string }).allow ?? ""));
  return reply.code(problem.status).type(PROBLEM_JSON).send(problem);
}

/** RFC 6750 §3: a presented key that failed names `invalid_token`; none presented, just the realm. */
function challenge(err: PorticoError): string {
  const presented = (err.data as { presented?: boolean } | undefined)?.presented === true;
  return presented
    ? `Bearer realm="portico-admin", error="invalid_token", error_description="${err.message.replaceAll('"', "'")}"`
    : 'Bearer realm="portico-admin"';
}
