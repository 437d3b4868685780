// Environment configuration (docs/architecture.md §6): one schema gives validation, defaults, types and the
// docs table (docs/configuration.md is generated from ENV_VARS). process.env is read only here.
import { BlockList, isIP } from "node:net";
import { addCidr } from "../egress/policy.js";
import { checkRedisUrl, RedisUrlError, sentinelEndpoint } from "../store/redis-urls.js";
import { redactUrl } from "../logs/redaction.js";
import { CALL_VARS } from "./env/calls.js";
import { LIMIT_VARS } from "./env/limits.js";
import { OAUTH_VARS } from "./env/oauth.js";
import { PROCESS_VARS } from "./env/process.js";
import { SERVER_VARS } from "./env/server.js";
import { TASK_VARS } from "./env/tasks.js";
import { TRACING_VARS } from "./env/tracing.js";
import { UPSTREAM_VARS } from "./env/upstream.js";
import type { Config, VarSpec } from "./env/types.js";

export type { Config } from "./env/types.js";

/** Every variable Portico reads, in the order the docs list them (one file per area under env/). */
export const ENV_VARS: readonly VarSpec[] = [
  ...SERVER_VARS,
  ...CALL_VARS,
  ...TASK_VARS,
  ...UPSTREAM_VARS,
  ...LIMIT_VARS,
  ...OAUTH_VARS,
  ...PROCESS_VARS,
  ...TRACING_VARS,
];

/** Raised when the environment is unusable; the message says how to fix it. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function splitList(raw: string): string[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function parseVar(spec: VarSpec, raw: string): unknown {
  // A URL's password or secret parameters are not repeated into the error (it reaches the logs).
  const where = `${spec.name}=${JSON.stringify(redactUrl(raw))}`;
  switch (spec.type) {
    case "int": {
      if (!/^\d+$/.test(raw)) throw new ConfigError(`${where} is not a whole number. ${spec.description}`);
      const n = Number(raw);
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max))
        throw new ConfigError(`${where} is out of range: use ${spec.min} to ${spec.max}.`);
      return n;
    }
    case "bool":
      if (raw !== "true" && raw !== "false") throw new ConfigError(`${where} must be true or false.`);
      return raw === "true";
    case "url": {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new ConfigError(`${where} is not a URL. Example: https://mcp.example.com`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new ConfigError(`${where} must use http:// or https://.`);
      return spec.name === "PORTICO_PUBLIC_URL" ? raw.replace(/\/+$/, "") : raw;
    }
    case "redis-url": // checked with PORTICO_REDIS_CLUSTER, in checkRedis
      return raw;
    case "list":
      return splitList(raw);
    case "cidrs":
      for (const cidr of splitList(raw)) {
        try {
          addCidr(new BlockList(), cidr);
        } catch (err) {
          throw new ConfigError(`${spec.name}: ${(err as Error).message}.`);
        }
      }
      return splitList(raw);
    case "enum":
      if (!spec.values?.includes(raw))
        throw new ConfigError(`${where} must be one of: ${spec.values?.join(", ")}.`);
      return raw;
    case "string":
    case "path":
      if (raw.trim() === "")
        throw new ConfigError(`${spec.name} is set but empty; unset it or give a value.`);
      return raw;
  }
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || (isIP(h) === 4 && h.startsWith("127."));
}

/** Reads, validates and freezes the configuration. Throws ConfigError with a fix in its message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const values: Record<string, unknown> = {};
  for (const spec of ENV_VARS) {
    const raw = env[spec.name] ?? spec.default;
    values[spec.key] = raw === undefined ? undefined : parseVar(spec, raw);
  }
  checkRedis(values as unknown as Config);
  const secret = values.secretKey as string | undefined;
  if (secret !== undefined && secret.length < 32)
    throw new ConfigError(
      "PORTICO_SECRET_KEY is too short: use at least 32 characters, e.g. `openssl rand -base64 32`.",
    );
  values.previousSecretKeys = checkPreviousKeys(secret, values.previousSecretKeys as string[] | undefined);
  const adminToken = values.adminToken as string | undefined;
  if (adminToken !== undefined && adminToken.length < 24)
    throw new ConfigError(
      "PORTICO_ADMIN_TOKEN is too short: use at least 24 characters, e.g. `openssl rand -base64 32`.",
    );
  const metricsToken = values.metricsToken as string | undefined;
  // Printable ASCII without spaces: what a bearer token can carry in an Authorization header.
  if (metricsToken !== undefined && !/^[\x21-\x7e]{24,}$/.test(metricsToken))
    throw new ConfigError(
      "PORTICO_METRICS_TOKEN must be at least 24 printable characters without spaces, e.g. `openssl rand -base64 32`.",
    );
  checkUpstreamTimeouts(values as unknown as Config);
  // The SDK is loaded only when it has somewhere to export to (docs/operations.md "Tracing").
  values.tracing =
    (values.otlpEndpoint !== undefined || values.otlpTracesEndpoint !== undefined) &&
    values.otelSdkDisabled !== true;
  const host = values.host as string;
  if (values.publicUrl === undefined) {
    const shown = isLoopbackHost(host) ? "localhost" : host.includes(":") ? `[${host}]` : host;
    values.publicUrl = `http://${shown}:${values.port as number}`;
  }
  return Object.freeze(values) as unknown as Config;
}

/** A JSON answer's headers come with the whole answer: a headers timeout below the call's would cut it. */
function checkUpstreamTimeouts(config: Config): void {
  const headers = config.upstreamHeadersTimeoutMs;
  if (headers !== 0 && headers < config.upstreamTimeoutMs)
    throw new ConfigError(
      `PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS (${headers}) is below PORTICO_UPSTREAM_TIMEOUT_MS (${config.upstreamTimeoutMs}): an upstream answering JSON sends its headers with the whole answer, so calls would be cut early. Set it to at least ${config.upstreamTimeoutMs}, or 0.`,
    );
  if (config.upstreamBreakerMaxOpenMs < config.upstreamBreakerOpenMs)
    throw new ConfigError(
      `PORTICO_UPSTREAM_BREAKER_MAX_OPEN_MS (${config.upstreamBreakerMaxOpenMs}) is below PORTICO_UPSTREAM_BREAKER_OPEN_MS (${config.upstreamBreakerOpenMs}): set it to at least that.`,
    );
}

/** PORTICO_SECRET_KEY_PREVIOUS: long enough, distinct, and only beside a current key. */
function checkPreviousKeys(current: string | undefined, previous: string[] | undefined): readonly string[] {
  if (previous === undefined) return Object.freeze([]);
  if (current === undefined)
    throw new ConfigError(
      "PORTICO_SECRET_KEY_PREVIOUS is set without PORTICO_SECRET_KEY: set the new key as PORTICO_SECRET_KEY and keep the old ones in PORTICO_SECRET_KEY_PREVIOUS.",
    );
  previous.forEach((key, i) => {
    if (key.length < 32)
      throw new ConfigError(
        `PORTICO_SECRET_KEY_PREVIOUS entry ${i + 1} is too short: each previous key is a former PORTICO_SECRET_KEY (at least 32 characters).`,
      );
    if (key === current)
      throw new ConfigError(
        `PORTICO_SECRET_KEY_PREVIOUS entry ${i + 1} equals PORTICO_SECRET_KEY: list only the keys it replaced.`,
      );
    if (previous.indexOf(key) !== i)
      throw new ConfigError(
        `PORTICO_SECRET_KEY_PREVIOUS entry ${i + 1} repeats entry ${previous.indexOf(key) + 1}.`,
      );
  });
  return Object.freeze(previous);
}

/** The Redis settings together: one URL, a cluster's seeds, or sentinels (docs/operations.md "Redis"). */
function checkRedis(config: Config): void {
  const { redisUrl, redisCluster, redisKeyPrefix } = config;
  checkSentinels(config);
  if (redisUrl === undefined) {
    if (redisCluster)
      throw new ConfigError(
        "PORTICO_REDIS_CLUSTER=true needs PORTICO_REDIS_URL: a seed node of the cluster.",
      );
    return;
  }
  try {
    if (config.redisSentinels.length === 0) checkRedisUrl(redisUrl, redisCluster);
  } catch (err) {
    if (err instanceof RedisUrlError)
      throw new ConfigError(`PORTICO_REDIS_URL=${JSON.stringify(redactUrl(redisUrl))} ${err.message}`);
    throw err;
  }
  // Every key carries its own hash tag ({t:<tenant>}, {oauth}, {admin}); a brace in the prefix
  // changes which part of a key Redis hashes ("app{1}" would put every key in one slot).
  if (redisCluster && /[{}]/.test(redisKeyPrefix))
    throw new ConfigError(
      `PORTICO_REDIS_KEY_PREFIX=${JSON.stringify(redisKeyPrefix)} must not contain { or } with a Redis Cluster: keys carry their own hash tags.`,
    );
}

/** Sentinel mode: sentinels, a master name and a URL for the data nodes, never with a cluster. */
function checkSentinels(config: Config): void {
  const { redisSentinels, redisSentinelMaster, redisSentinelPassword, redisUrl } = config;
  if (redisSentinels.length === 0) {
    if (redisSentinelMaster !== undefined || redisSentinelPassword !== undefined)
      throw new ConfigError(
        "PORTICO_REDIS_SENTINEL_MASTER and PORTICO_REDIS_SENTINEL_PASSWORD need PORTICO_REDIS_SENTINELS: the sentinels' host:port, comma-separated.",
      );
    return;
  }
  if (config.redisCluster)
    throw new ConfigError(
      "PORTICO_REDIS_SENTINELS and PORTICO_REDIS_CLUSTER=true exclude each other: a Redis Cluster fails over on its own, without sentinels. Unset one.",
    );
  if (redisSentinelMaster === undefined || redisSentinelMaster.trim() === "")
    throw new ConfigError(
      "PORTICO_REDIS_SENTINELS needs PORTICO_REDIS_SENTINEL_MASTER: the master's name in the sentinels' configuration (`sentinel monitor <name> …`), e.g. mymaster.",
    );
  if (redisUrl === undefined)
    throw new ConfigError(
      "PORTICO_REDIS_SENTINELS needs PORTICO_REDIS_URL for the data nodes' scheme, credentials and database, e.g. redis://:password@mymaster/0 (its host is not used).",
    );
  try {
    sentinelEndpoint(redisUrl, redisSentinels, redisSentinelMaster, redisSentinelPassword);
  } catch (err) {
    if (err instanceof RedisUrlError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The configuration table of docs/configuration.md, generated from ENV_VARS. */
export function configTableMarkdown(): string {
  const rows = ENV_VARS.map((v) => {
    const def = v.default === undefined ? "—" : v.default === "" ? "(empty)" : `\`${v.default}\``;
    return `| \`${v.name}\` | ${def} | ${v.description} |`;
  });
  return ["| Variable | Default | Meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
