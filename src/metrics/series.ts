// Counters and histograms for the metrics observed on every request. prom-client's own hash the
// label object, validate it and key buckets by stringified bounds on each call (≈ 4 µs a request
// for the HTTP, MCP and store metrics together); these keep one record per label tuple, found by
// a joined key, and render prom-client's metric shape only when scraped.
import type { Registry } from "prom-client";

type Labels<L extends string> = Record<L, string | number>;

interface MetricValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

/** One label's values, each to the next label's map, the last to its series. */
type Level = Map<string | number, unknown>;

abstract class Series<L extends string, S> {
  readonly #series: Array<{ labels: Labels<L>; state: S }> = [];
  /**
   * The series by label value, one map per label in order: a lookup is a few Map reads of the
   * values as they come, with no key string joined (and hashed) per observation.
   */
  readonly #root: Level = new Map();
  #unlabelled: S | undefined;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "histogram",
    private readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    // prom-client's registry renders any object with name, help, type and get().
    registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** The record of one label tuple, made on first use. */
  protected state(labels: Labels<L>): S {
    const names = this.labelNames;
    const last = names.length - 1;
    if (last < 0) return (this.#unlabelled ??= this.#add(labels));
    let level = this.#root;
    for (let i = 0; i < last; i++) {
      const value = labels[names[i]!];
      let next = level.get(value) as Level | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    const value = labels[names[last]!];
    let found = level.get(value) as S | undefined;
    if (found === undefined) level.set(value, (found = this.#add(labels)));
    return found;
  }

  #add(labels: Labels<L>): S {
    const state = this.initial();
    this.#series.push({ labels: { ...labels }, state });
    return state;
  }

  /** A metric without labels has its one series from the start, at zero, as in prom-client. */
  protected unlabelled(): void {
    if (this.labelNames.length === 0) this.state({} as Labels<L>);
  }

  protected abstract initial(): S;
  protected abstract values(labels: Labels<L>, state: S): MetricValue[];

  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: "sum" }> {
    const values: MetricValue[] = [];
    for (const { labels, state } of this.#series) values.push(...this.values(labels, state));
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: "sum" });
  }
}

/** A monotonic counter per label tuple. */
export class FastCounter<L extends string> extends Series<L, { value: number }> {
  constructor(registry: Registry, name: string, help: string, labelNames: readonly L[]) {
    super(name, help, "counter", labelNames, registry);
    this.unlabelled();
  }

  inc(labels: Labels<L>, by = 1): void {
    this.state(labels).value += by;
  }

  protected initial() {
    return { value: 0 };
  }

  protected values(labels: Labels<L>, state: { value: number }): MetricValue[] {
    return [{ labels, value: state.value }];
  }
}

interface HistogramState {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** A histogram per label tuple, with fixed upper bounds in seconds. */
export class FastHistogram<L extends string> extends Series<L, HistogramState> {
  readonly #bounds: readonly number[];

  constructor(registry: Registry, name: string, help: string, labelNames: readonly L[], bounds: number[]) {
    super(name, help, "histogram", labelNames, registry);
    this.#bounds = [...bounds].sort((a, b) => a - b);
    this.unlabelled();
  }

  observe(labels: Labels<L>, value: number): void {
    if (!Number.isFinite(value)) return;
    const state = this.state(labels);
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    state.counts[i]! += 1;
    state.sum += value;
    state.count += 1;
  }

  protected initial(): HistogramState {
    return { counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
  }

  protected values(labels: Labels<L>, state: HistogramState): MetricValue[] {
    const out: MetricValue[] = [];
    let cumulative = 0;
    const bucket = `${this.name}_bucket`;
    this.#bounds.forEach((le, i) => {
      cumulative += state.counts[i]!;
      out.push({ labels: { ...labels, le }, value: cumulative, metricName: bucket });
    });
    out.push({ labels: { ...labels, le: "+Inf" }, value: state.count, metricName: bucket });
    out.push({ labels, value: state.sum, metricName: `${this.name}_sum` });
    out.push({ labels, value: state.count, metricName: `${this.name}_count` });
    return out;
  }
}
