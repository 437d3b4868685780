// The HTTP server span of every request (@fastify/otel; docs/operations.md "Tracing"): it continues
// the client's `traceparent` header, and the MCP spans (spans.ts), store spans and log lines of the
// request sit under it. Imported only when tracing is on (app.ts).
import type { FastifyInstance } from "fastify";
import { context } from "@opentelemetry/api";
import { FastifyOtelInstrumentation } from "@fastify/otel";

/** Registers the plugin on `app`; call before any route is added. */
export async function httpSpans(app: FastifyInstance): Promise<void> {
  // One span per request: spans of each hook and handler would double the spans of a tool call.
  const instrumentation = new FastifyOtelInstrumentation({
    instrumentHooks: false,
    instrumentHandler: false,
  });
  await app.register(instrumentation.plugin());
  // The handler runs in the request span's context (its body was read on the socket's callbacks,
  // outside it), so what it starts is a child of the request.
  app.addHook("preHandler", (req, _reply, done) => {
    const inner = req.opentelemetry().context;
    if (inner === null) done();
    else context.with(inner, done);
  });
}
