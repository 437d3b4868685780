// GET /metrics (src/metrics/http.ts): open, or behind PORTICO_METRICS_TOKEN with a Bearer
// challenge; scrapes stay out of the per-request debug log; and a real Prometheus (Debian's
// `prometheus` package) scrapes a running Portico with the token.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { buildApp } from "../../src/app.js";
import { ConfigError, loadConfig } from "../../src/config/env.js";
import { startPortico, staticTenant, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { parseExposition, runPrometheus, sumOf } from "../support/prometheus.js";

const METRICS_TOKEN = "metrics-test-token-0123456789abcdef";

describe("/metrics behind PORTICO_METRICS_TOKEN, scraped by a real Prometheus", () => {
  let guarded: RunningPortico;
  before(async () => {
    guarded = await startPortico({
      tenants: [staticTenant("acme")],
      env: { PORTICO_METRICS_TOKEN: METRICS_TOKEN },
    });
  });
  after(() => guarded.close());

  it("answers 401 with a Bearer challenge without the token, the metrics with it", async () => {
    for (const authorization of [
      undefined,
      "Bearer wrong-token-0123456789abcdef",
      `Basic ${METRICS_TOKEN}`,
    ]) {
      const res = await fetch(`${guarded.url}/metrics`, { headers: authorization ? { authorization } : {} });
      assert.equal(res.status, 401, String(authorization));
      assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="metrics"');
      assert.doesNotMatch(await res.text(), /portico_/);
    }
    const res = await fetch(`${guarded.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const samples = parseExposition(await res.text());
    assert.ok(samples.some((s) => s.name === "portico_http_requests_total"));
    // This one runs on the embedded store, whose commands are timed too.
    assert.ok(sumOf(samples, "portico_store_command_duration_seconds_count") > 0);
    assert.equal(sumOf(samples, "portico_store_up"), 1);
  });

  it("refuses a short token at boot", () => {
    assert.throws(
      () => loadConfig({ PORTICO_METRICS_TOKEN: "short" }),
      (err) => err instanceof ConfigError && /PORTICO_METRICS_TOKEN must be at least 24/.test(err.message),
    );
  });

  it("is scraped by Prometheus: the target is up and portico_http_requests_total has samples", async () => {
    const target = new URL(guarded.url).host;
    const prometheus = await runPrometheus(target, METRICS_TOKEN);
    try {
      const targets = await prometheus.until("the target is up", async (api) => {
        const body = (await api("/api/v1/targets")) as {
          data: { activeTargets: { health: string; lastError: string }[] };
        };
        const t = body.data.activeTargets[0];
        return t?.health === "up" ? t : undefined;
      });
      assert.equal(targets.lastError, "");
      const result = await prometheus.until("samples of portico_http_requests_total", async (api) => {
        const body = (await api("/api/v1/query?query=portico_http_requests_total")) as {
          data: { result: { metric: Record<string, string> }[] };
        };
        return body.data.result.length > 0 ? body.data.result : undefined;
      });
      assert.ok(result.some((r) => r.metric.route === "/metrics" && r.metric.job === "portico"));
    } finally {
      await prometheus.stop();
    }
  });
});

it("keeps scrapes out of the per-request debug log", async () => {
  const lines: string[] = [];
  const config = loadConfig({ PORTICO_LOG_LEVEL: "debug", PORTICO_SECRET_KEY: TEST_SECRET });
  const { app } = await buildApp(config, { tenants: [], logStream: { write: (l) => void lines.push(l) } });
  try {
    assert.equal((await app.inject({ url: "/metrics" })).statusCode, 200);
    assert.equal((await app.inject({ url: "/healthz" })).statusCode, 200);
    const completed = lines.map((l) => JSON.parse(l) as { msg: string; req?: { url: string } });
    const urls = completed.filter((l) => l.msg === "request completed").map((l) => l.req?.url);
    assert.deepEqual(urls, ["/healthz"]);
  } finally {
    await app.close();
  }
});
