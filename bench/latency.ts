// Sequential latency sampling for bench measurement 2: warm-up calls, then N timed calls one after
// another (never overlapping), bounded by a deadline; percentiles by nearest rank.
import { performance } from "node:perf_hooks";

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

export interface SampleOptions {
  readonly warmup: number;
  readonly count: number;
  /** Stop early (with fewer samples) past this many ms; the summary says how many were taken. */
  readonly deadlineMs: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Summary of latencies in milliseconds. */
export function summarize(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    mean: sum / sorted.length,
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

/** Times `call` (which must check its own answer and throw when wrong) `count` times in a row. */
export async function sampleSequential(
  call: (i: number) => Promise<void>,
  o: SampleOptions,
): Promise<LatencySummary> {
  const deadline = Date.now() + o.deadlineMs;
  for (let i = 0; i < o.warmup && Date.now() < deadline; i++) await call(i);
  const samples: number[] = [];
  for (let i = 0; i < o.count && Date.now() < deadline; i++) {
    const start = performance.now();
    await call(o.warmup + i);
    samples.push(performance.now() - start);
  }
  return summarize(samples);
}
