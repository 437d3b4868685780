// The process: configuration, buildApp, listen, graceful shutdown on SIGINT/SIGTERM (shutdown.ts:
// streams handed to other replicas, in-flight requests given PORTICO_SHUTDOWN_TIMEOUT_MS, exit 0).
import { buildApp } from "./app.js";
import { loadBootstrapFile } from "./config/bootstrap.js";
import { demoTenant } from "./config/demo.js";
import { bootFailure, type ListenTarget } from "./boot-errors.js";
import { loadConfig } from "./config/env.js";
import { gracefulClose } from "./shutdown.js";

/** Where main() tried to listen, for the boot failure's message. */
let target: ListenTarget | undefined;

async function main(): Promise<void> {
  const config = loadConfig();
  const tenants = config.configFile ? await loadBootstrapFile(config.configFile) : [demoTenant()];
  const portico = await buildApp(config, { tenants });
  const { app } = portico;
  if (!config.redisUrl)
    app.log.info(
      "store: embedded (one process only; set PORTICO_REDIS_URL to share sessions between replicas)",
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

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal, deadlineMs: config.shutdownTimeoutMs }, "shutting down");
    gracefulClose(portico, config.shutdownTimeoutMs).then(
      ({ forced }) => {
        if (forced) app.log.warn("shutdown deadline reached: requests still running were cut");
        else app.log.info("shut down");
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
