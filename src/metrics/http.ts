// HTTP metrics for every route, and GET /metrics (Prometheus text format 0.0.4), open for
// in-cluster scraping or behind PORTICO_METRICS_TOKEN (RFC 6750 bearer). Scrapes are neither rate
// limited nor logged per request.
import { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { bearerOf, secretMatcher } from "../crypto/secrets.js";
import type { Metrics } from "./metrics.js";

export interface MetricsEndpointOptions {
  readonly metrics: Metrics;
  /** Required as `Authorization: Bearer <token>` when set. */
  readonly token: string | undefined;
}

type WriteHead = (this: ServerResponse, ...args: unknown[]) => ServerResponse;

/**
 * The raw response class of Portico's server (app.ts passes it to http.createServer): it counts
 * its head when written, through a method of its own class. Wrapping each response's writeHead
 * instead (a closure and an own property per request) cost ≈ 5 µs a request on the forwarding
 * bench (docs/performance.md).
 */
export class ObservedResponse extends ServerResponse {
  /** When the request arrived (its response was made). */
  readonly started = performance.now();
  /** Set by the onRequest hook: where the head is counted, and the route it counts under. */
  metrics: Metrics | undefined = undefined;
  request: FastifyRequest | undefined = undefined;

  override writeHead(...args: unknown[]): this {
    const { metrics, request } = this;
    if (metrics !== undefined && request !== undefined) {
      this.metrics = undefined;
      const status = typeof args[0] === "number" ? args[0] : this.statusCode;
      const route = request.routeOptions.url ?? "unmatched";
      metrics.httpRequest(route, request.method, status, (performance.now() - this.started) / 1000);
    }
    return (ServerResponse.prototype.writeHead as WriteHead).apply(this, args) as this;
  }
}

/**
 * Counts each response when its head is written, timed from the request's arrival. Fastify's
 * onSend does not see SSE streams (their head is written on the raw response), so the raw
 * writeHead is observed instead: the same moment for both. Responses of another class (Fastify's
 * inject) get their writeHead wrapped one by one.
 */
function observeResponses(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onRequest", (req: FastifyRequest, reply: FastifyReply, done) => {
    const raw = reply.raw;
    if (raw instanceof ObservedResponse) {
      raw.metrics = metrics;
      raw.request = req;
      return done();
    }
    const started = performance.now();
    const writeHead = Reflect.get(raw, "writeHead") as WriteHead;
    Reflect.set(raw, "writeHead", function (this: ServerResponse, ...args: unknown[]) {
      Reflect.set(raw, "writeHead", writeHead);
      const status = typeof args[0] === "number" ? args[0] : raw.statusCode;
      const route = req.routeOptions.url ?? "unmatched";
      metrics.httpRequest(route, req.method, status, (performance.now() - started) / 1000);
      return writeHead.apply(this, args);
    });
    done();
  });
}

/** Installs the HTTP hooks and the /metrics route; call before the feature plugins register. */
export function metricsEndpoint(app: FastifyInstance, opts: MetricsEndpointOptions): void {
  const { metrics } = opts;
  observeResponses(app, metrics);
  const isToken = opts.token === undefined ? undefined : secretMatcher(opts.token);
  // Scrapes stay out of the per-request debug log: one every few seconds from every Prometheus.
  app.get("/metrics", { logLevel: "warn" }, async (req, reply) => {
    if (isToken) {
      const token = bearerOf(req.headers.authorization);
      if (token === undefined || !isToken(token))
        return reply
          .code(401)
          .header("www-authenticate", 'Bearer realm="metrics"')
          .type("text/plain; charset=utf-8")
          .send("Unauthorized: send Authorization: Bearer <PORTICO_METRICS_TOKEN>\n");
    }
    const text = await metrics.scrape();
    return reply.header("cache-control", "no-store").type(metrics.contentType).send(text);
  });
}
