// Starts a real Portico (buildApp + listen on a loopback port) for end-to-end tests.
import type { AddressInfo } from "node:net";
import { buildApp, type BuildOptions, type Portico } from "../../src/app.js";
import { loadConfig } from "../../src/config/env.js";
import type { Metrics } from "../../src/metrics/metrics.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { UserStore } from "../../src/oauth/users.js";
import { freePort, getTestRedis, uniquePrefix } from "./redis.js";

export interface RunningPortico extends Portico {
  readonly url: string;
  mcpUrl(tenant: string): string;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly tenants: readonly TenantConfig[];
  /** Share a Redis key prefix to act as another replica of the same deployment. */
  readonly redisPrefix?: string;
  /** Use Redis (default: the embedded store). */
  readonly redis?: boolean;
  readonly env?: Record<string, string>;
  /** Metrics to use instead of a fresh registry (e.g. without caches). */
  readonly metrics?: Metrics;
  /** Per-user credential sources by `auth.type` (BuildOptions.userTokenSources). */
  readonly userTokenSources?: BuildOptions["userTokenSources"];
  /** Receives the log lines (JSON) at PORTICO_LOG_LEVEL (opts.env's, else TEST_LOG_LEVEL's or silent). */
  readonly logStream?: BuildOptions["logStream"];
  /** How often the replica's traffic is sampled (BuildOptions.trafficSampleMs). */
  readonly trafficSampleMs?: number;
  /** Platform users to seed, as the bootstrap file's `platformUsers` (BuildOptions.platformUsers). */
  readonly platformUsers?: BuildOptions["platformUsers"];
  /** stdio providers' launches, as the bootstrap file gives them (BuildOptions.stdioLaunches). */
  readonly stdioLaunches?: BuildOptions["stdioLaunches"];
}

export const TEST_SECRET = "portico-test-secret-0123456789abcdef";

export async function startPortico(opts: StartOptions): Promise<RunningPortico> {
  const env: Record<string, string> = {
    PORT: "0",
    PORTICO_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    PORTICO_SECRET_KEY: TEST_SECRET,
  };
  if (opts.redis || opts.redisPrefix) {
    env.PORTICO_REDIS_URL = (await getTestRedis()).url;
    env.PORTICO_REDIS_KEY_PREFIX = opts.redisPrefix ?? uniquePrefix();
  }
  const config = loadConfig({ ...env, ...opts.env });
  const portico = await buildApp(config, {
    tenants: opts.tenants,
    logger: process.env.TEST_LOG_LEVEL || opts.logStream ? undefined : false,
    ...(opts.metrics && { metrics: opts.metrics }),
    ...(opts.userTokenSources && { userTokenSources: opts.userTokenSources }),
    ...(opts.logStream && { logStream: opts.logStream }),
    ...(opts.trafficSampleMs !== undefined && { trafficSampleMs: opts.trafficSampleMs }),
    ...(opts.platformUsers && { platformUsers: opts.platformUsers }),
    ...(opts.stdioLaunches && { stdioLaunches: opts.stdioLaunches }),
  });
  await portico.app.listen({ port: config.port, host: "127.0.0.1" });
  const url = `http://127.0.0.1:${(portico.app.server.address() as AddressInfo).port}`;
  return { ...portico, url, mcpUrl: (t) => `${url}/mcp/${t}`, close: () => portico.app.close() };
}

export interface IssuerOptions {
  /** The oauth tenant (a static tenant with `auth: "oauth"`), and its local users. */
  readonly tenant: string;
  readonly users: ReadonlyArray<{ readonly username: string; readonly password: string }>;
  /** More tenants beside it. */
  readonly tenants?: readonly TenantConfig[];
  readonly env?: Record<string, string>;
  readonly userTokenSources?: BuildOptions["userTokenSources"];
}

/**
 * Portico on Redis and a free port that is its own public URL, so it is the issuer its OAuth
 * clients (TestOAuthClient) talk to, with an oauth tenant and its users.
 */
export async function startIssuer(opts: IssuerOptions): Promise<{ portico: RunningPortico; issuer: string }> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const portico = await startPortico({
    redis: true,
    tenants: [...(opts.tenants ?? []), { ...staticTenant(opts.tenant), auth: "oauth" }],
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer, ...opts.env },
    userTokenSources: opts.userTokenSources,
  });
  const users = new UserStore(portico.store, portico.keys);
  for (const user of opts.users) await users.create(opts.tenant, user);
  return { portico, issuer };
}

/** A tenant with one static provider, for transport tests. */
export function staticTenant(id: string): TenantConfig {
  return {
    id,
    auth: "none",
    providers: [
      {
        id: "docs",
        kind: "static",
        prompts: [
          {
            name: "code-review",
            description: "Review code",
            arguments: [{ name: "language", required: true, values: ["go", "rust", "python"] }],
            messages: [{ role: "user", text: "Review this {{language}} code." }],
          },
        ],
        resources: [{ uri: "perf://hello", name: "hello", mimeType: "text/plain", text: "hello" }],
      },
    ],
  };
}
