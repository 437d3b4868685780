// The open-loop load generator of bench measurement 7b (docs/performance.md), run as its own
// process: POSTs one body at a fixed rate through an undici Pool, whatever the server's pace, and
// times each request from the moment it was due (not from when it went out), so a slow answer
// delays nobody's clock (no coordinated omission). Prints one RATE_JSON line with the latency
// percentiles, the rate achieved, how late the sends were, and the wrong answers.
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { percentile } from "./latency.js";

const env = (name: string): string => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};

const url = new URL(env("BENCH_URL"));
const body = env("BENCH_BODY");
const headers = JSON.parse(env("BENCH_HEADERS")) as Record<string, string>;
const expect = env("BENCH_EXPECT");
const rate = Number(env("BENCH_RATE"));
const seconds = Number(env("BENCH_SECONDS"));
const warmupSeconds = Number(env("BENCH_WARMUP_SECONDS"));
const connections = Number(process.env.BENCH_CONNECTIONS ?? "64");
const TIMEOUT_MS = 10_000;
/** After the last send, how long unanswered calls are waited for before they count as failed. */
const GIVE_UP_MS = 30_000;

const pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
const path = url.pathname + url.search;
const intervalMs = 1000 / rate;
const warmup = Math.round(rate * warmupSeconds);
const total = warmup + Math.round(rate * seconds);

const latencyMs = new Float64Array(total).fill(Infinity); // stays so for a call never answered
const lagMs = new Float64Array(total);
let wrong = 0;
let failed = 0;
let firstError = "";

async function send(i: number, dueAt: number): Promise<void> {
  lagMs[i] = performance.now() - dueAt;
  try {
    const res = await pool.request({
      method: "POST",
      path,
      headers,
      body,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      failed++;
      firstError ||= `HTTP ${res.statusCode}: ${text.slice(0, 200)}`;
    } else if (!text.includes(expect)) {
      wrong++;
      firstError ||= `unexpected answer: ${text.slice(0, 200)}`;
    }
  } catch (err) {
    failed++;
    firstError ||= String(err);
  }
  latencyMs[i] = performance.now() - dueAt;
}

/** Resolves once every request has been answered (or has failed), or GIVE_UP_MS after the last send. */
function run(): Promise<{ startedAt: number; endedAt: number }> {
  return new Promise((resolve) => {
    const startedAt = performance.now() + 20;
    let next = 0;
    let pending = 0;
    const finish = () => {
      if (--pending === 0 && next === total) resolve({ startedAt, endedAt: performance.now() });
    };
    const giveUp = () => {
      if (pending === 0) return;
      failed += pending;
      firstError ||= `${pending} calls unanswered ${GIVE_UP_MS} ms after the last send`;
      resolve({ startedAt, endedAt: performance.now() });
    };
    const tick = () => {
      const now = performance.now();
      // Every request already due goes out now, timed from when it was due.
      while (next < total && startedAt + next * intervalMs <= now) {
        pending++;
        void send(next, startedAt + next * intervalMs).finally(finish);
        next++;
      }
      if (next < total) setTimeout(tick, Math.max(0, startedAt + next * intervalMs - performance.now()));
      else setTimeout(giveUp, GIVE_UP_MS).unref();
    };
    setTimeout(tick, 20);
  });
}

const { startedAt, endedAt } = await run();
await pool.destroy(); // closes what a give-up left open
const sorted = (a: Float64Array) => Array.from(a.subarray(warmup)).sort((x, y) => x - y);
const lat = sorted(latencyMs);
const lag = sorted(lagMs);
const service = sorted(latencyMs.map((l, i) => l - lagMs[i]!));
const measuredFrom = startedAt + warmup * intervalMs;
console.log(
  "RATE_JSON " +
    JSON.stringify({
      rate,
      requests: total - warmup,
      warmupRequests: warmup,
      // Completed requests of the timed part over the time from its first due send to the last answer.
      achievedRate: (total - warmup) / ((endedAt - measuredFrom) / 1000),
      failed,
      wrong,
      firstError,
      latencyMs: {
        p50: percentile(lat, 50),
        p90: percentile(lat, 90),
        p99: percentile(lat, 99),
        max: lat[lat.length - 1] ?? NaN,
      },
      // How late the generator sent (its own timer and event loop), and the time from send to answer.
      sendLagMs: { p50: percentile(lag, 50), p99: percentile(lag, 99), max: lag[lag.length - 1] ?? NaN },
      serviceMs: { p50: percentile(service, 50), p99: percentile(service, 99) },
    }),
);
