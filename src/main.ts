// The process: configuration, buildApp, listen, graceful shutdown on SIGINT/SIGTERM (shutdown.ts:
// not ready but serving for PORTICO_SHUTDOWN_DELAY_SECONDS, then streams handed to other replicas,
// in-flight requests given PORTICO_SHUTDOWN_TIMEOUT_MS, exit 0).
import { buildApp } from "./app.js";
import { loadBootstrap } from "./config/bootstrap.js";
import { demoTenant } from "./config/demo.js";
import { bootFailure, type ListenTarget } from "./boot-errors.js";
import { loadConfig } from "./config/env.js";
import { drainThenClose } from "./shutdown.js";
import { PORTICO_VERSION } from "./protocol/version.js";

/** Where main() tried to listen, for the boot failure's message. */
let target: ListenTarget | undefined;

async function main(): Promise<void> {
  const config = loadConfig();
  // Before anything makes a request: the SDK is loaded only when tracing is on (docs/operations.md "Tracing").
  const tracing = config.tracing
    ? await (
        await import("./tracing/sdk.js")
      ).startTracing({
        serviceName: config.otelServiceName,
        serviceVersion: PORTICO_VERSION,
        protocol: config.otlpTracesProtocol ?? config.otlpProtocol,
      })
    : undefined;
  const { tenants, platformUsers, stdio } = config.configFile
    ? await loadBootstrap(config.configFile)
    : { tenants: [demoTenant()], platformUsers: [], stdio: undefined };
  const portico = await buildApp(config, { tenants, platformUsers, stdioLaunches: stdio });
  const { app } = portico;
  if (!config.redisUrl)
    app.log.info(
      "store: embedded, in this process's memory: tenants, users, providers, tokens and sessions made " +
        "since start are lost when it stops (set PORTICO_REDIS_URL to keep them and to run replicas)",
    );
  target = { port: config.port, host: config.host };
  try {
    await app.listen(target);
  } catch (err) {
    // Store connections and upstream health checks would hold the process open.
    await app.close().catch(() => undefined);
    throw err;
  }
  for (const t of tenants) app.log.info(`MCP endpoint for tenant '${t.id}': ${config.publicUrl}/mcp/${t.id}`);

  // A first SIGTERM (an orchestrator's) drains then closes; a second signal during the delay skips
  // the rest of it; a signal after that (closing) exits at once. SIGINT (Ctrl-C at a terminal, where
  // no load balancer routes by readiness) closes without the delay.
  let phase: "serving" | "draining" | "closing" = "serving";
  const skip = new AbortController();
  const times = { delayMs: config.shutdownDelaySeconds * 1000, deadlineMs: config.shutdownTimeoutMs };
  const shutdown = (signal: string) => {
    if (phase === "closing") {
      app.log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    if (phase === "draining") {
      app.log.info({ signal }, "second signal: skipping the rest of the shutdown delay");
      skip.abort();
      return;
    }
    phase = "draining";
    if (signal === "SIGINT") skip.abort();
    else app.log.info({ signal, ...times }, "shutting down: not ready, still serving until the delay ends");
    const closing = () => {
      phase = "closing";
      app.log.info("shutdown delay over: closing");
    };
    drainThenClose(portico, times, skip.signal, closing).then(
      async ({ forced }) => {
        if (forced) app.log.warn("shutdown deadline reached: requests still running were cut");
        else app.log.info("shut down");
        // The last spans are exported before the process goes (bounded by the exporter's timeout).
        await tracing?.shutdown().catch(() => undefined);
        process.exit(0);
      },
      (err: unknown) => {
        app.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((err: unknown) => {
  const { line, stack } = bootFailure(err, target);
  console.error(line);
  if (stack) console.error(stack);
  process.exit(1);
});
