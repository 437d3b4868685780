// The traffic overview's Prometheus queries (docs/metrics.md "Traffic overview") against a real
// Prometheus: a tenant filter is a label value, quoted whatever it holds, so a quote in it can never
// end the matcher and add to the query. The admin API's Slug check keeps such names out first; this
// holds below it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { labelValue, PrometheusTraffic } from "../../src/metrics/traffic.js";
import { runPrometheus, type RunningPrometheus } from "../support/prometheus.js";
import { freePort } from "../support/redis.js";

let prometheus: RunningPrometheus;

before(async () => {
  // Nothing to scrape: the queries are what is tested, not the figures.
  prometheus = await runPrometheus(`127.0.0.1:${await freePort()}`);
  await prometheus.until("Prometheus answering", async (query) =>
    ((await query("/api/v1/query?query=1")) as { status: string }).status === "success" ? true : undefined,
  );
});

after(async () => {
  await prometheus?.stop();
});

describe("PrometheusTraffic", () => {
  it("answers a tenant's (empty) series", async () => {
    const traffic = await new PrometheusTraffic(prometheus.url).read({ minutes: 5, tenant: "acme" });
    assert.equal(traffic.source, "prometheus");
    assert.deepEqual([traffic.requests, traffic.errors, traffic.latency], [[], [], []]);
  });

  it("quotes the tenant: a quote or a backslash in it is part of the value, not the query", async () => {
    for (const tenant of ['acme"} or vector(1) or up{job="x', "a\\", "a\nb"]) {
      const traffic = await new PrometheusTraffic(prometheus.url).read({ minutes: 5, tenant });
      assert.deepEqual(traffic.requests, [], `no series for ${JSON.stringify(tenant)}`);
    }
  });

  it("labelValue is a PromQL string literal", () => {
    assert.equal(labelValue("acme"), '"acme"');
    assert.equal(labelValue('a"b\\c\n'), '"a\\"b\\\\c\\n"');
  });
});
