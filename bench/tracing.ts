// BENCH_ONLY=tracing (docs/performance.md "Tracing"): what tracing costs. Portico with tracing off
// and with tracing on at 100 % sampling (OTLP http/protobuf to a local receiver that discards),
// and, when BENCH_BASELINE names a built checkout of an earlier commit, that build too, side by
// side on one Redis and one upstream: resources/read req/s and CPU per request (wrk, the sides in
// alternating rounds), and sequential tools/call latency through each.
import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { sampleSequential, type LatencySummary } from "./latency.js";
import * as m from "./measurements.js";
import { failures } from "./wrk.js";
import { startPortico, startRedis, startUpstream, type Service } from "./services.js";

export interface TracingSide {
  readonly label: string;
  readonly read: m.Run[];
  readonly tool: LatencySummary[];
}

export interface TracingResults {
  readonly sides: TracingSide[];
  /** What the receiver got from the traced side: export requests and bytes. */
  readonly exported: { requests: number; bytes: number };
}

const log = (msg: string) => console.error(`bench: ${msg}`);

/** An OTLP/HTTP endpoint that answers 200 to everything and keeps nothing but counts. */
async function startDiscardingReceiver() {
  const exported = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (exported.bytes += chunk.length));
    req.on("end", () => {
      exported.requests++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exported,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function writeBootstrap(dir: string, upstreamUrl: string): Promise<string> {
  const file = join(dir, "portico-tracing.json");
  const tenant = {
    id: m.TENANT,
    auth: "none",
    providers: [
      {
        id: "docs",
        kind: "static",
        resources: [{ uri: "perf://hello", name: "hello", mimeType: "text/plain", text: "hello" }],
      },
      { id: "ref", kind: "mcp", url: upstreamUrl, prefix: "" },
    ],
  };
  await writeFile(file, JSON.stringify({ tenants: [tenant] }, null, 2));
  return file;
}

/** Starts the servers (each pushed to `children`), then measures every side in alternating rounds. */
export async function measureTracing(
  children: Service[],
  dir: string,
  load: m.Load,
  tool: { calls: number; warmup: number },
): Promise<TracingResults> {
  const redis = await startRedis(dir);
  children.push(redis);
  const upstream = await startUpstream();
  children.push(upstream);
  const receiver = await startDiscardingReceiver();
  const configFile = await writeBootstrap(dir, upstream.url);
  const common = { redisUrl: redis.url, configFile };
  const started: { label: string; service: Service }[] = [];
  const baseline = process.env.BENCH_BASELINE;
  if (baseline)
    started.push({
      label: "baseline",
      service: await startPortico({ ...common, main: join(baseline, "dist/main.js") }),
    });
  started.push({ label: "tracing off", service: await startPortico(common) });
  started.push({
    label: "tracing on",
    service: await startPortico({
      ...common,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_TRACES_SAMPLER: "always_on",
      },
    }),
  });
  for (const side of started) children.push(side.service);

  log("checking answers before timing anything");
  const sides = [];
  for (const { label, service } of started) {
    const url = `${service.url}/mcp/${m.TENANT}`;
    const { sessionId } = await m.checkRead(url);
    const { portico: toolSession } = await m.checkTools(url, upstream.url);
    sides.push({
      label,
      service,
      url,
      sessionId,
      toolSession,
      read: [] as m.Run[],
      tool: [] as LatencySummary[],
    });
  }
  for (const s of sides)
    await m.wrk(load, {
      label: `tracing warm-up ${s.label}`,
      url: s.url,
      body: m.READ_BODY,
      sessionId: s.sessionId,
      watch: [s.service],
      seconds: load.warmupSeconds,
      // A warm-up only warms; on a loaded machine the traced side may time some requests out.
      tolerateFailures: true,
    });
  for (let round = 1; round <= load.rounds; round++)
    for (const s of sides) {
      s.read.push(
        await m.wrk(load, {
          label: `tracing round ${round} ${s.label}`,
          url: s.url,
          body: m.READ_BODY,
          sessionId: s.sessionId,
          watch: [s.service],
          // Counted in the report (a side that times requests out is slower, not wrong).
          tolerateFailures: true,
        }),
      );
      log(`tracing round ${round} ${s.label}: ${tool.calls} tools/call in a row`);
      s.tool.push(
        await sampleSequential(m.toolCall(s.url, s.toolSession), {
          warmup: tool.warmup,
          count: tool.calls,
          deadlineMs: 60_000,
        }),
      );
    }
  await receiver.close();
  return {
    sides: sides.map(({ label, read, tool: latencies }) => ({ label, read, tool: latencies })),
    exported: { ...receiver.exported },
  };
}

/** The side-by-side table docs/performance.md quotes. */
export function formatTracingReport(r: TracingResults): string {
  const best = (runs: m.Run[]) => runs.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a));
  const p50 = (l: LatencySummary[]) => Math.min(...l.map((x) => x.p50));
  const p99 = (l: LatencySummary[]) => Math.min(...l.map((x) => x.p99));
  const off = r.sides.find((s) => s.label === "tracing off")!;
  const rows = r.sides.map((s) => {
    const run = best(s.read);
    const cpu = run.cpuUsPerRequest.portico ?? NaN;
    const ratio = run.requestsPerSecond / best(off.read).requestsPerSecond;
    const failed = s.read.reduce((n, r) => n + failures(r), 0);
    return `| ${s.label} | ${Math.round(run.requestsPerSecond)} | ${(ratio * 100).toFixed(1)} % | ${cpu.toFixed(0)} | ${failed} | ${p50(s.tool).toFixed(3)} | ${p99(s.tool).toFixed(3)} |`;
  });
  return [
    "Tracing: resources/read (wrk, best round) and sequential tools/call through each side",
    "",
    "| side | read req/s | vs tracing off | CPU µs/read | reads timed out | tools/call p50 ms | p99 ms |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `exported by the traced side: ${r.exported.requests} OTLP requests, ${(r.exported.bytes / 1e6).toFixed(1)} MB`,
  ].join("\n");
}
