// `npm run bench:ab`: measurement 7a as an A/B test (docs/performance.md "Comparing two builds").
// On a shared 2-vCPU machine one side's rounds can run 2× faster than its next ones, so a change
// worth 10 % cannot be seen in two runs of `npm run bench` made one after the other. Here the bare
// forwarder and each Portico variant run at once, against one Redis and one upstream, and take
// turns round by round (the order rotating), and the medians are compared: per round, each side's
// req/s as a share of the bare forwarder's in the same round, and each side's CPU per call.
//
// BENCH_AB="name:KEY=value,KEY=value;name2:..." names the variants: `CWD=<dir>` starts that
// checkout's dist/main.js (build it first); any other key goes into that Portico's environment
// (PORTICO_* settings excepted: the bench sets those).
// Default: this checkout alone. BENCH_ROUNDS (7), BENCH_FORWARD_DURATION (3 s), BENCH_AB_ERA
// (session or stateless; both by default).
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BODIES,
  ERAS,
  FORWARD_EXPECT,
  FORWARD_SESSION_TENANT,
  FORWARD_STATELESS_TENANT,
  prepareForward,
  type ForwardEra,
} from "./forward.js";
import { wrk } from "./measurements.js";
import { killAll } from "./processes.js";
import { startBareForwarder, startForwardUpstream, startPortico, startRedis } from "./services.js";

interface Variant {
  readonly name: string;
  readonly cwd: string | undefined;
  readonly env: Record<string, string>;
}

function variantsOf(spec: string | undefined): Variant[] {
  if (!spec) return [{ name: "portico", cwd: undefined, env: {} }];
  return spec.split(";").map((part) => {
    const [name = "", settings = ""] = part.split(":");
    const env: Record<string, string> = {};
    for (const pair of settings.split(",").filter(Boolean)) {
      const at = pair.indexOf("=");
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const { CWD: cwd, ...rest } = env;
    return { name, cwd, env: rest };
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_FORWARD_DURATION ?? 3);
const LOAD = { threads: 1, connections: 32, durationSeconds: SECONDS, warmupSeconds: 1, rounds: ROUNDS };

async function main() {
  const dir = await mkdtemp(join(tmpdir(), "portico-ab-"));
  const redis = await startRedis(dir);
  const upstream = await startForwardUpstream();
  const tenant = (id: string, url: string, era: string) => ({
    id,
    auth: "none",
    providers: [{ id: "echo", kind: "mcp", url, prefix: "", era }],
  });
  const configFile = join(dir, "portico.json");
  const tenants = [
    tenant(FORWARD_SESSION_TENANT, upstream.sessionUrl, "session"),
    tenant(FORWARD_STATELESS_TENANT, upstream.statelessUrl, "stateless"),
  ];
  await writeFile(configFile, JSON.stringify({ tenants }));
  const bare = await startBareForwarder(upstream);

  const sides = [];
  for (const v of variantsOf(process.env.BENCH_AB)) {
    const home = process.cwd();
    if (v.cwd) process.chdir(v.cwd);
    Object.assign(process.env, v.env);
    const portico = await startPortico({ redisUrl: redis.url, configFile });
    for (const key of Object.keys(v.env)) delete process.env[key];
    process.chdir(home);
    const targets = await prepareForward({ portico, redis, upstream, bareForwarder: bare });
    sides.push({ name: v.name, targets, side: "portico" as const, process: "portico", portico });
  }
  const all = [{ ...sides[0]!, name: "bare", side: "bare" as const, process: "bare forwarder" }, ...sides];

  const only = process.env.BENCH_AB_ERA;
  for (const era of ERAS.filter((e): e is ForwardEra => !only || e === only)) {
    const round = async (s: (typeof all)[number], seconds: number) => {
      const t = s.targets[era][s.side];
      const run = await wrk(LOAD, {
        url: t.url,
        body: BODIES[era],
        headers: t.headers,
        watch: t.watch,
        ...(t.sessionId && { sessionId: t.sessionId }),
        expect: FORWARD_EXPECT,
        label: `${era} ${s.name}`,
        seconds,
      });
      return { rps: run.requests / seconds, cpu: run.cpuUsPerRequest[s.process]! };
    };
    for (const s of all) await round(s, LOAD.warmupSeconds);
    const seen = new Map(all.map((s) => [s.name, { rps: [] as number[], cpu: [] as number[] }]));
    for (let r = 0; r < ROUNDS; r++)
      for (let i = 0; i < all.length; i++) {
        const s = all[(i + r) % all.length]!;
        const { rps, cpu } = await round(s, SECONDS);
        seen.get(s.name)!.rps.push(rps);
        seen.get(s.name)!.cpu.push(cpu);
      }
    const bareRuns = seen.get("bare")!;
    console.log(`${era} era, ${ROUNDS} rounds of ${SECONDS} s, wrk -t1 -c32 (medians)`);
    for (const s of all) {
      const runs = seen.get(s.name)!;
      const shares = runs.rps.map((rps, i) => (100 * rps) / bareRuns.rps[i]!);
      console.log(
        `  ${s.name.padEnd(16)} ${median(runs.rps).toFixed(0).padStart(6)} req/s  ` +
          `${median(runs.cpu).toFixed(1).padStart(6)} µs CPU a call  ` +
          `${median(shares).toFixed(1).padStart(5)} % of bare (rounds: ${shares.map((x) => x.toFixed(0)).join(" ")})`,
      );
    }
  }
  for (const s of sides) await s.portico.child.stop();
}

try {
  await main();
} finally {
  killAll();
}
