// Operations endpoints (docs/architecture.md §1): /healthz says the process serves; /readyz says this replica
// can serve MCP traffic: its store answers, its tenants are loaded and it is not draining. From the
// shutdown delay on, /readyz answers 503; /healthz answers 200 until the process exits.
import type { FastifyInstance } from "fastify";
import type { Store } from "./store/store.js";

/** A store that does not answer a PING this fast is not fit to serve requests. */
const PING_TIMEOUT_MS = 2000;

export interface HealthDeps {
  readonly store: Store;
  /** How many tenants this replica serves. */
  readonly tenants: () => number;
  /** True once the bootstrap tenants are loaded. */
  readonly bootstrapped: () => boolean;
  /** True from SIGTERM on: load balancers should send their work elsewhere (shutdown.ts). */
  readonly draining: () => boolean;
}

export function healthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  const { store } = deps;
  app.get("/healthz", async (_req, reply) =>
    reply.header("cache-control", "no-store").send({ status: "ok" }),
  );
  app.get("/readyz", async (_req, reply) => {
    void reply.header("cache-control", "no-store");
    if (deps.draining())
      return reply.code(503).send({ status: "unavailable", reason: "this replica is shutting down" });
    if (!deps.bootstrapped())
      return reply.code(503).send({ status: "unavailable", reason: "tenants are not loaded yet" });
    if (!(await answers(store)))
      return reply.code(503).send({
        status: "unavailable",
        reason: `the ${store.kind} store cannot be reached`,
        store: store.kind,
      });
    return { status: "ready", store: store.kind, tenants: deps.tenants() };
  });
}

async function answers(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>(
    (resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)),
  );
  try {
    return await Promise.race([
      store.ping().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
