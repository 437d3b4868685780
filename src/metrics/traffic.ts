// The console's traffic overview (docs/metrics.md "Traffic overview"): calls to providers per tenant
// and provider, their errors and latency percentiles per tenant, over time. From Prometheus
// (`query_range` on PORTICO_PROMETHEUS_URL: every replica) when configured, else from this replica's
// own counters, sampled every 10 s into a ring of one hour.
import type { Registry } from "prom-client";

export type Point = [number, number];
export interface RateSeries {
  readonly tenant: string;
  readonly provider?: string;
  readonly points: Point[];
}
export interface LatencySeries {
  readonly tenant: string;
  readonly quantile: Quantile;
  readonly points: Point[];
}
export type Quantile = "0.5" | "0.95" | "0.99";
export const QUANTILES: readonly Quantile[] = ["0.5", "0.95", "0.99"];

export interface Traffic {
  readonly source: "prometheus" | "replica";
  readonly replica?: string;
  readonly stepSeconds: number;
  readonly from: string;
  readonly to: string;
  readonly requests: RateSeries[];
  readonly errors: RateSeries[];
  readonly latency: LatencySeries[];
}

export interface TrafficQuery {
  readonly minutes: number;
  /** Only this tenant's series. */
  readonly tenant?: string;
}

export interface TrafficSource {
  read(query: TrafficQuery): Promise<Traffic>;
}

const REQUESTS = "portico_upstream_requests_total";
const DURATION = "portico_upstream_request_duration_seconds";

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** One sample of the counters: requests and errors per tenant/provider, duration buckets per tenant. */
interface Sample {
  readonly at: number;
  readonly requests: Map<string, number>;
  readonly errors: Map<string, number>;
  /** tenant → cumulative bucket counts by upper bound (ascending, +Inf last). */
  readonly buckets: Map<string, Array<[number, number]>>;
}

/** The key of a tenant/provider pair (neither contains a NUL). */
const pair = (tenant: string, provider: string) => `${tenant}\0${provider}`;

/**
 * This replica's figures: every `intervalMs` the upstream counters are read from the registry, at
 * most `keep` samples kept (a bounded ring: one hour at 10 s). Rates are the differences between
 * neighbouring samples; percentiles are interpolated in the buckets' differences, as
 * Prometheus's histogram_quantile does.
 */
export class ReplicaTraffic implements TrafficSource {
  readonly #samples: Sample[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly replica: string,
    private readonly intervalMs = 10_000,
    private readonly keep = 360,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), this.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Reads the counters now (tests call it to get a sample without waiting). */
  async sample(): Promise<void> {
    const requests = new Map<string, number>();
    const errors = new Map<string, number>();
    const buckets = new Map<string, Array<[number, number]>>();
    const counter = await this.registry.getSingleMetric(REQUESTS)?.get();
    for (const v of counter?.values ?? []) {
      const key = pair(String(v.labels.tenant), String(v.labels.provider));
      requests.set(key, (requests.get(key) ?? 0) + v.value);
      if (v.labels.outcome !== "ok") errors.set(key, (errors.get(key) ?? 0) + v.value);
    }
    const histogram = await this.registry.getSingleMetric(DURATION)?.get();
    for (const v of (histogram?.values ?? []) as Array<{
      labels: Record<string, unknown>;
      value: number;
      metricName?: string;
    }>) {
      if (v.metricName !== `${DURATION}_bucket`) continue;
      const tenant = String(v.labels.tenant);
      const le = v.labels.le === "+Inf" ? Infinity : Number(v.labels.le);
      const list = buckets.get(tenant) ?? [];
      const at = list.find(([bound]) => bound === le);
      if (at) at[1] += v.value;
      else list.push([le, v.value]);
      buckets.set(tenant, list);
    }
    for (const list of buckets.values()) list.sort((a, b) => a[0] - b[0]);
    this.#samples.push({ at: Math.floor(this.now() / 1000), requests, errors, buckets });
    if (this.#samples.length > this.keep) this.#samples.splice(0, this.#samples.length - this.keep);
  }

  async read({ minutes, tenant }: TrafficQuery): Promise<Traffic> {
    const to = Math.floor(this.now() / 1000);
    const from = to - minutes * 60;
    const samples = this.#samples.filter((s) => s.at >= from);
    const mine = (key: string) => tenant === undefined || key.split("\0")[0] === tenant;
    const rates = (which: "requests" | "errors"): RateSeries[] => {
      const keys = new Set(samples.flatMap((s) => [...s[which].keys()].filter(mine)));
      return [...keys].sort().map((key) => {
        const [t, provider] = key.split("\0") as [string, string];
        const points: Point[] = [];
        for (let i = 1; i < samples.length; i++) {
          const [a, b] = [samples[i - 1]!, samples[i]!];
          const delta = Math.max(0, (b[which].get(key) ?? 0) - (a[which].get(key) ?? 0));
          points.push([b.at, delta / Math.max(1, b.at - a.at)]);
        }
        return { tenant: t, provider, points };
      });
    };
    const tenants = new Set(samples.flatMap((s) => [...s.buckets.keys()]));
    const latency: LatencySeries[] = [];
    for (const t of [...tenants].sort()) {
      if (tenant !== undefined && t !== tenant) continue;
      for (const quantile of QUANTILES) {
        const points: Point[] = [];
        for (let i = 1; i < samples.length; i++) {
          const value = quantileOf(Number(quantile), bucketDelta(samples[i - 1]!, samples[i]!, t));
          if (value !== undefined) points.push([samples[i]!.at, value]);
        }
        latency.push({ tenant: t, quantile, points });
      }
    }
    return {
      source: "replica",
      replica: this.replica,
      stepSeconds: this.intervalMs / 1000,
      from: iso(from),
      to: iso(to),
      requests: rates("requests"),
      errors: rates("errors"),
      latency,
    };
  }
}

function bucketDelta(a: Sample, b: Sample, tenant: string): Array<[number, number]> {
  const before = new Map(a.buckets.get(tenant) ?? []);
  return (b.buckets.get(tenant) ?? []).map(([le, n]) => [le, Math.max(0, n - (before.get(le) ?? 0))]);
}

/** histogram_quantile over cumulative buckets (ascending bounds, +Inf last); undefined without observations. */
export function quantileOf(q: number, buckets: ReadonlyArray<[number, number]>): number | undefined {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let [lower, below] = [0, 0];
  for (const [le, count] of buckets) {
    if (count >= rank) {
      // Past the last finite bound: Prometheus answers that bound.
      if (le === Infinity) return lower;
      return lower + (le - lower) * ((rank - below) / Math.max(count - below, Number.MIN_VALUE));
    }
    [lower, below] = [le, count];
  }
  return lower;
}

/** A JSON fetch (tests and app.ts pass the global one). */
export type JsonFetch = (url: string, init: { signal: AbortSignal; redirect: "manual" }) => Promise<Response>;

/**
 * Every replica's figures, from Prometheus's HTTP API (`/api/v1/query_range`). PORTICO_PROMETHEUS_URL
 * is the operator's, so it is reached directly, not through the providers' egress policy; no
 * redirect is followed and each query has 5 s.
 */
export class PrometheusTraffic implements TrafficSource {
  readonly #base: string;

  constructor(
    url: string,
    private readonly fetch: JsonFetch = globalThis.fetch,
    private readonly now: () => number = Date.now,
  ) {
    this.#base = url.replace(/\/+$/, "");
  }

  async read({ minutes, tenant }: TrafficQuery): Promise<Traffic> {
    const to = Math.floor(this.now() / 1000);
    const from = to - minutes * 60;
    // About 120 points whatever the span, never finer than 10 s; rates over at least a minute.
    const step = Math.max(10, Math.ceil((minutes * 60) / 120));
    const window = `${Math.max(60, 2 * step)}s`;
    const only = tenant === undefined ? "" : `tenant=${labelValue(tenant)}`;
    const errorsOnly = [only, 'outcome!="ok"'].filter(Boolean).join(",");
    const range = (query: string) => this.#range(query, from, to, step);
    const [requests, errors, ...latency] = await Promise.all([
      range(`sum by (tenant, provider) (rate(${REQUESTS}{${only}}[${window}]))`),
      range(`sum by (tenant, provider) (rate(${REQUESTS}{${errorsOnly}}[${window}]))`),
      ...QUANTILES.map((q) =>
        range(`histogram_quantile(${q}, sum by (tenant, le) (rate(${DURATION}_bucket{${only}}[${window}])))`),
      ),
    ]);
    const rateSeries = (result: PromSeries[]): RateSeries[] =>
      result.map((s) => ({
        tenant: s.metric.tenant ?? "",
        ...(s.metric.provider !== undefined && { provider: s.metric.provider }),
        points: pointsOf(s),
      }));
    return {
      source: "prometheus",
      stepSeconds: step,
      from: iso(from),
      to: iso(to),
      requests: rateSeries(requests),
      errors: rateSeries(errors),
      latency: QUANTILES.flatMap((quantile, i) =>
        latency[i]!.map((s) => ({ tenant: s.metric.tenant ?? "", quantile, points: pointsOf(s) })),
      ),
    };
  }

  async #range(query: string, from: number, to: number, step: number): Promise<PromSeries[]> {
    const params = new URLSearchParams({ query, start: String(from), end: String(to), step: String(step) });
    const res = await this.fetch(`${this.#base}/api/v1/query_range?${params}`, {
      signal: AbortSignal.timeout(5000),
      redirect: "manual",
    });
    const body = (await res.json().catch(() => undefined)) as
      { status?: string; error?: string; data?: { result?: PromSeries[] } } | undefined;
    if (!res.ok || body?.status !== "success")
      throw new Error(`Prometheus answered ${res.status}: ${body?.error ?? "not a query result"}`);
    return body.data?.result ?? [];
  }
}

/**
 * A label value as a PromQL string literal: quotes, backslashes and control characters escaped (a
 * JSON string is a valid Go-style PromQL string), so a value can never end the matcher and add to
 * the query.
 */
export function labelValue(value: string): string {
  return JSON.stringify(value);
}

interface PromSeries {
  readonly metric: Record<string, string | undefined>;
  readonly values: Array<[number, string]>;
}

/** Prometheus's [time, "value"] pairs as numbers; NaN (no observations) left out. */
function pointsOf(series: PromSeries): Point[] {
  return series.values.map(([t, v]): Point => [t, Number(v)]).filter(([, v]) => Number.isFinite(v));
}
