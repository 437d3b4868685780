// Requests without a body: their Content-Type describes nothing (RFC 9110 §8.3), so it is dropped
// before Fastify picks a body parser. The Python MCP SDK sends `Content-Type: application/json` on
// its body-less session DELETE, which a JSON parser would otherwise refuse as an empty document.
import type { FastifyInstance, FastifyRequest } from "fastify";

/** Methods whose requests Portico reads a body from; an empty one is theirs to refuse in their terms. */
const WITH_CONTENT = new Set(["POST", "PUT", "PATCH"]);

/** True when the headers say no content follows (RFC 9112 §6.3: no Transfer-Encoding, no length). */
export function declaresNoBody(headers: FastifyRequest["headers"]): boolean {
  const length = headers["content-length"];
  return headers["transfer-encoding"] === undefined && (length === undefined || length === "0");
}

/**
 * Registers, on every route, the hook that drops the Content-Type of a DELETE, GET, OPTIONS or other
 * request of a method that takes no content, when it carries none.
 */
export function bodylessRequests(app: FastifyInstance): void {
  app.addHook("onRequest", (req, _reply, done) => {
    if (
      req.headers["content-type"] !== undefined &&
      !WITH_CONTENT.has(req.method) &&
      declaresNoBody(req.headers)
    )
      delete req.raw.headers["content-type"];
    done();
  });
}
