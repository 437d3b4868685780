// Environment configuration: defaults, and a message that says how to fix each bad value.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../src/config/env.js";

const fails = (env: Record<string, string>, message: RegExp) =>
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => err instanceof ConfigError && message.test(err.message),
  );

describe("loadConfig", () => {
  it("has defaults a newcomer can start with", () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, "127.0.0.1");
    assert.equal(config.publicUrl, "http://localhost:8080");
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.sessionIdleTtlSeconds, 1800);
    assert.equal(config.logLevel, "info");
    assert.ok(Object.isFrozen(config));
  });

  it("derives the public URL from a non-loopback bind, and trims a given one", () => {
    assert.equal(loadConfig({ HOST: "0.0.0.0", PORT: "9000" }).publicUrl, "http://0.0.0.0:9000");
    assert.equal(
      loadConfig({ PORTICO_PUBLIC_URL: "https://mcp.example.com/" }).publicUrl,
      "https://mcp.example.com",
    );
  });

  it("rejects bad values with the fix in the message", () => {
    fails({ PORT: "eighty" }, /PORT="eighty" is not a whole number/);
    fails({ PORT: "70000" }, /out of range: use 0 to 65535/);
    fails(
      { PORTICO_REDIS_URL: "not a url" },
      /PORTICO_REDIS_URL="not a url" is not a URL\. Example: redis:\/\//,
    );
    fails({ PORTICO_REDIS_URL: "http://localhost:6379" }, /must use redis:\/\/ or rediss:\/\//);
    fails({ PORTICO_REDIS_URL: "localhost:6379" }, /must use redis:\/\/ or rediss:\/\//);
    fails({ PORTICO_LOG_LEVEL: "loud" }, /must be one of: fatal, error, warn, info, debug, trace, silent/);
    fails({ PORTICO_SECRET_KEY: "short" }, /too short: use at least 32 characters/);
    fails({ PORTICO_SESSION_IDLE_TTL_SECONDS: "1" }, /out of range/);
    fails({ PORTICO_CONFIG: " " }, /set but empty/);
  });

  it("splits comma-separated lists", () => {
    const config = loadConfig({
      PORTICO_ALLOWED_ORIGINS: "https://a.example, https://b.example,",
      PORTICO_ALLOWED_HOSTS: "",
    });
    assert.deepEqual(config.allowedOrigins, ["https://a.example", "https://b.example"]);
    assert.deepEqual(config.allowedHosts, []);
  });

  it("refuses upstream timeouts and breaker cool-downs that contradict each other", () => {
    fails(
      { PORTICO_UPSTREAM_TIMEOUT_MS: "120000", PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS: "60000" },
      /^PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS \(60000\) is below PORTICO_UPSTREAM_TIMEOUT_MS \(120000\): .+ Set it to at least 120000, or 0\.$/,
    );
    assert.equal(
      loadConfig({ PORTICO_UPSTREAM_TIMEOUT_MS: "600000", PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS: "0" })
        .upstreamHeadersTimeoutMs,
      0,
    );
    fails(
      { PORTICO_UPSTREAM_BREAKER_OPEN_MS: "10000", PORTICO_UPSTREAM_BREAKER_MAX_OPEN_MS: "5000" },
      /^PORTICO_UPSTREAM_BREAKER_MAX_OPEN_MS \(5000\) is below PORTICO_UPSTREAM_BREAKER_OPEN_MS \(10000\)/,
    );
    const config = loadConfig({});
    assert.equal(config.upstreamBreakerFailures, 5);
    assert.equal(config.upstreamConnectTimeoutMs, 10000);
    assert.equal(config.upstreamHeadersTimeoutMs, 300000);
  });
});
