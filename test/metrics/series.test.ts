// The hot-path counters and histograms render what prom-client's own would: cumulative buckets
// with `le` (an observation equal to a bound falls in that bucket), _sum and _count, one series
// per label tuple, unlabelled series present at zero, label values escaped.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { FastCounter, FastHistogram } from "../../src/metrics/series.js";

describe("FastCounter and FastHistogram", () => {
  it("render cumulative buckets, sums and counts per label tuple", async () => {
    const registry = new Registry();
    const h = new FastHistogram(registry, "t_seconds", "Time.", ["route"], [0.5, 0.1, 1]);
    h.observe({ route: "/a" }, 0.1);
    h.observe({ route: "/a" }, 0.3);
    h.observe({ route: "/a" }, 7);
    h.observe({ route: "/b" }, 0.05);
    h.observe({ route: "/b" }, Number.NaN);
    const text = await registry.metrics();
    assert.equal(
      text,
      [
        "# HELP t_seconds Time.",
        "# TYPE t_seconds histogram",
        't_seconds_bucket{route="/a",le="0.1"} 1',
        't_seconds_bucket{route="/a",le="0.5"} 2',
        't_seconds_bucket{route="/a",le="1"} 2',
        't_seconds_bucket{route="/a",le="+Inf"} 3',
        't_seconds_sum{route="/a"} 7.4',
        't_seconds_count{route="/a"} 3',
        't_seconds_bucket{route="/b",le="0.1"} 1',
        't_seconds_bucket{route="/b",le="0.5"} 1',
        't_seconds_bucket{route="/b",le="1"} 1',
        't_seconds_bucket{route="/b",le="+Inf"} 1',
        't_seconds_sum{route="/b"} 0.05',
        't_seconds_count{route="/b"} 1',
        "",
      ].join("\n"),
    );
  });

  it("keep counters per tuple, unlabelled ones from zero, with escaped values", async () => {
    const registry = new Registry();
    const c = new FastCounter(registry, "c_total", "Count.", ["a", "b"]);
    c.inc({ a: 'x"y', b: 200 });
    c.inc({ a: 'x"y', b: 200 }, 2);
    c.inc({ a: "x", b: "y\n" });
    new FastCounter(registry, "idle_total", "Idle.", []);
    new FastHistogram(registry, "idle_seconds", "Idle.", [], [1]);
    const text = await registry.metrics();
    assert.match(text, /^c_total\{a="x\\"y",b="200"\} 3$/m);
    assert.match(text, /^c_total\{a="x",b="y\\n"\} 1$/m);
    assert.match(text, /^idle_total 0$/m);
    assert.match(text, /^idle_seconds_bucket\{le="\+Inf"\} 0$/m);
    assert.match(text, /^idle_seconds_count 0$/m);
  });
});
