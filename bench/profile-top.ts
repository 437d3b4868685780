// Prints where a V8 CPU profile (.cpuprofile, as `node --cpu-prof` and BENCH_CPU_PROF write them)
// spent its time: the top frames by self time (function, file:line, share of the busy time) and
// the same time grouped by where the code comes from (Portico, each package, Node's core, Node's
// bundled undici behind fetch, GC). Markdown tables, for docs/performance.md.
// Usage: npx tsx bench/profile-top.ts <file.cpuprofile | directory (its newest profile)> [frames=25]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, sep } from "node:path";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: number[];
}

interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

/** The profile to read: the file given, or the newest .cpuprofile in the directory given. */
function profilePath(arg: string): string {
  if (!statSync(arg).isDirectory()) return arg;
  const files = readdirSync(arg)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(arg, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (files.length === 0) throw new Error(`no .cpuprofile in ${arg}`);
  return files[0]!;
}

/** Where a frame's code comes from. */
export function groupOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(idle)") return "(idle)";
  if (functionName === "(program)") return "(program): V8 and native code outside JS";
  if (url.startsWith("node:internal/deps/undici")) return "undici bundled in Node (fetch)";
  if (url.startsWith("node:")) return "node: core";
  const path = url.replace(/^file:\/\//, "");
  const nm = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (nm >= 0) {
    const parts = path.slice(nm + "/node_modules/".length).split(sep);
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (/[/\\](dist|src)[/\\]/.test(path)) return "portico";
  if (url === "") return "native (V8 builtins, no script)";
  return "other";
}

/** A short location: the path from node_modules/, dist/ or src/ on, with its 1-based line. */
function locationOf(frame: CallFrame): string {
  if (frame.url === "") return "";
  const path = frame.url.replace(/^file:\/\//, "");
  const m = /.*[/\\](node_modules[/\\].*)$/.exec(path) ?? /.*?[/\\]((?:dist|src)[/\\].*)$/.exec(path);
  return `${m ? m[1] : path}:${frame.lineNumber + 1}`;
}

/** Portico's own frames by folder of dist/ or src/ (mcp, providers, store, …). */
function porticoFolderOf(frame: CallFrame): string {
  // The first folder below the last dist/ or src/ of the path (a checkout may sit under a src/),
  // however deep the file (providers/mcp/session/…).
  const m = /[/\\](?:dist|src)[/\\](?!.*[/\\](?:dist|src)[/\\])([^/\\]+)[/\\]/.exec(frame.url);
  return `portico ${m?.[1] ?? "(top level)"}/`;
}

function table(title: string, sums: Map<string, number>, pct: (us: number) => string): void {
  console.log(`\n| ${title} | self | self ms |\n| --- | ---: | ---: |`);
  for (const [name, us] of [...sums].sort((a, b) => b[1] - a[1]))
    console.log(`| ${name} | ${pct(us)} | ${(us / 1000).toFixed(0)} |`);
}

interface Row {
  readonly frame: CallFrame;
  /** For native code (no script): the nearest caller that has one. */
  readonly caller: CallFrame | undefined;
  selfUs: number;
}

const SPECIAL = new Set(["(garbage collector)", "(idle)", "(program)", "(root)"]);

/** For a native frame, the nearest caller outside Node's core, else in it (undefined for others). */
function callerOf(id: number, byId: Map<number, ProfileNode>, parents: Map<number, number>) {
  const frame = byId.get(id)!.callFrame;
  if (frame.url !== "" || SPECIAL.has(frame.functionName)) return undefined;
  // The nearest caller outside Node's core says who asked (fastify's reply, undici, Portico…).
  let core: CallFrame | undefined;
  for (let p = parents.get(id); p !== undefined; p = parents.get(p)) {
    const f = byId.get(p)!.callFrame;
    if (f.url !== "" && !f.url.startsWith("node:")) return f;
    if (f.url !== "") core ??= f;
  }
  return core;
}

function main(): void {
  const [arg, topArg] = process.argv.slice(2);
  if (arg === undefined) throw new Error("usage: tsx bench/profile-top.ts <file.cpuprofile | dir> [frames]");
  const top = Number(topArg ?? 25);
  const file = profilePath(arg);
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Sample i lasts until the next one; the last sample gets the mean interval.
  const deltas = profile.timeDeltas;
  const mean = deltas.reduce((a, b) => a + b, 0) / Math.max(1, deltas.length);
  const rows = new Map<string, Row>();
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  const keyOf = (f: CallFrame | undefined) =>
    f ? `${f.functionName}|${f.url}|${f.lineNumber}|${f.columnNumber}` : "";
  // Node's core and native code counted with the nearest package that called them (memoized per node).
  const owners = new Map<number, string>();
  const ownerOf = (id: number): string => {
    let owner = owners.get(id);
    if (owner !== undefined) return owner;
    const frame = byId.get(id)!.callFrame;
    const parent = parents.get(id);
    const own = frame.url !== "" && !frame.url.startsWith("node:");
    owner = own || SPECIAL.has(frame.functionName) || parent === undefined ? groupOf(frame) : ownerOf(parent);
    owners.set(id, owner);
    return owner;
  };
  const owned = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const caller = callerOf(id, byId, parents);
    const owner = ownerOf(id);
    owned.set(owner, (owned.get(owner) ?? 0) + Math.max(0, deltas[i + 1] ?? mean));
    // Native code is told apart by its caller: writev under undici is not writev under node:http.
    const key = `${keyOf(frame)}|${keyOf(caller)}`;
    const row = rows.get(key) ?? rows.set(key, { frame, caller, selfUs: 0 }).get(key)!;
    row.selfUs += Math.max(0, deltas[i + 1] ?? mean);
  });
  const all = [...rows.values()];
  const totalUs = all.reduce((a, r) => a + r.selfUs, 0);
  const idleUs = all.filter((r) => groupOf(r.frame) === "(idle)").reduce((a, r) => a + r.selfUs, 0);
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => `${((us / busyUs) * 100).toFixed(1)} %`;
  const busy = all.filter((r) => groupOf(r.frame) !== "(idle)").sort((a, b) => b.selfUs - a.selfUs);

  console.log(`${file}`);
  console.log(
    `${(totalUs / 1e6).toFixed(1)} s sampled, ${profile.samples.length} samples; busy ${(busyUs / 1e6).toFixed(1)} s ` +
      `(${((busyUs / totalUs) * 100).toFixed(1)} %), idle ${(idleUs / 1e6).toFixed(1)} s. Shares below are of the busy time.\n`,
  );
  console.log(`| self | self ms | function | location | from |\n| ---: | ---: | --- | --- | --- |`);
  for (const r of busy.slice(0, top)) {
    const where = r.caller
      ? `called from \`${r.caller.functionName || "(anonymous)"}\` ${locationOf(r.caller)}`
      : locationOf(r.frame);
    const from = r.caller ? `${groupOf(r.frame)}, via ${groupOf(r.caller)}` : groupOf(r.frame);
    console.log(
      `| ${pct(r.selfUs)} | ${(r.selfUs / 1000).toFixed(0)} | \`${r.frame.functionName || "(anonymous)"}\` | ${where} | ${from} |`,
    );
  }
  const groups = new Map<string, number>();
  const folders = new Map<string, number>();
  for (const r of busy) {
    const group = groupOf(r.frame);
    // Native code is listed under whoever called it: writev under Fastify's reply is Fastify's cost.
    const from = r.caller ? `native, called from ${groupOf(r.caller)}` : group;
    groups.set(from, (groups.get(from) ?? 0) + r.selfUs);
    if (group === "portico")
      folders.set(porticoFolderOf(r.frame), (folders.get(porticoFolderOf(r.frame)) ?? 0) + r.selfUs);
  }
  table("from", groups, pct);
  table("Portico's own code, by folder", folders, pct);
  owned.delete("(idle)");
  table("from, with Node's core and native code counted for the package that called them", owned, pct);
}

main();
