// `npm run test:conformance`: runs the official MCP conformance suite (server mode, pinned version)
// against Portico, which fronts three fixture upstreams behind three tenants: the session-era
// test/fixtures/conformance-server.ts (SDK v1) for `--requirements 2025-11-25`, the 2026-07-28
// test/fixtures/stateless-server.ts (SDK v2) for `--requirements 2026-07-28`, and both revisions
// again through test/fixtures/dual-era-server.ts (both on one URL) with `era: "auto"`, where Portico
// must speak each client's era to the upstream. Then the `tasks-*` scenarios of the Tasks extension
// (io.modelcontextprotocol/tasks, not part of either requirement set) run scored against
// test/fixtures/tasks-server.ts alone. It prints a per-scenario table for each run and exits
// non-zero unless every scored scenario of every run passed.
// Flags for manual use: --requirements <rev> (default: both), --upstream session|stateless|dual
// (default: the revision's own fixture, then the dual one), --upstream-url <url> (front any server
// instead, e.g. the suite's own reference server), --upstream-era auto|session|stateless (the
// provider's `era`), --scenario <name>, --verbose, -o <dir>, --target fixture (the fixtures alone),
// --extension tasks (only the tasks run; with an explicit --target portico, through Portico too).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startConformanceUpstream } from "../fixtures/conformance-server.js";
import { startDualEraUpstream } from "../fixtures/dual-era-server.js";
import { startStatelessUpstream } from "../fixtures/stateless-server.js";
import { startTasksUpstream } from "../fixtures/tasks-server.js";
import { startPortico } from "../support/portico.js";
import { CACHE_MODULES, CONFORMANCE_VERSION, ensureTooling, run, type Check } from "./tooling.js";

const RUN_TIMEOUT_MS = 10 * 60_000;

interface ScenarioResult {
  name: string;
  checks: Check[];
}

interface Requirements {
  scored: Set<string>;
  unscored: Map<string, string>; // scenario -> reason
}

type Upstream = "session" | "stateless" | "dual" | "tasks";
const UPSTREAMS: readonly Upstream[] = ["session", "stateless", "dual", "tasks"];
/** The upstreams a revision's requirement set runs against (the tasks fixture serves only its extension). */
const REVISION_UPSTREAMS: readonly Upstream[] = ["session", "stateless", "dual"];
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Which single-era fixture each revision's run fronts by default (the dual one follows). */
const UPSTREAM_OF: Readonly<Record<string, Upstream>> = {
  "2025-11-25": "session",
  "2026-07-28": "stateless",
};

/** The tenant fronting each fixture (auth "none", one `mcp` provider with an empty prefix). */
const TENANT_OF: Readonly<Record<Upstream, string>> = {
  session: "conformance",
  stateless: "conformance-2026",
  dual: "conformance-dual",
  tasks: "conformance-tasks",
};

const DESCRIPTION_OF: Readonly<Record<Upstream, string>> = {
  session: "session-era fixture upstream",
  stateless: "2026-07-28 fixture upstream",
  dual: "dual-era fixture upstream",
  tasks: "tasks extension fixture upstream",
};

/**
 * Starts what the suite is pointed at: Portico on a real Redis with one tenant per fixture.
 * `--target fixture` points the suite at the fixtures themselves instead, to keep them honest.
 */
async function startSystemUnderTest(
  upstreams: Record<Upstream, string>,
  target: string,
  era: "auto" | "session" | "stateless" = "auto",
  fronted: readonly Upstream[] = REVISION_UPSTREAMS,
): Promise<{ url(upstream: Upstream): string; close(): Promise<void> }> {
  if (target === "fixture") return { url: (upstream) => upstreams[upstream], close: async () => undefined };
  const portico = await startPortico({
    redis: true,
    // Every scenario comes from 127.0.0.1, as fast as the suite goes: limits set explicitly
    // rather than trusting the per-address defaults (docs/security.md) to stay out of its way.
    env: {
      PORTICO_RATE_LIMIT_PER_CLIENT_REQUESTS_PER_MINUTE: "100000000",
      PORTICO_MAX_SESSIONS_PER_ADDRESS: "0",
    },
    tenants: fronted.map((key) => ({
      id: TENANT_OF[key],
      auth: "none" as const,
      providers: [{ id: "ref", kind: "mcp" as const, url: upstreams[key], prefix: "", era }],
    })),
  });
  return { url: (upstream) => portico.mcpUrl(TENANT_OF[upstream]), close: () => portico.close() };
}

/**
 * Reads the frozen requirement set shipped with the CLI (requirements/<rev>.yaml): the `server:` list
 * is scored, `not_scored` entries with `leg: server` are run but not scored. The file is flat enough
 * that a line reader suffices, which keeps a YAML dependency out of package.json.
 */
function readRequirements(revision: string): Requirements {
  const file = join(CACHE_MODULES, "@modelcontextprotocol/conformance/requirements", `${revision}.yaml`);
  const requirements: Requirements = { scored: new Set(), unscored: new Map() };
  if (!existsSync(file)) return requirements;
  let section = "";
  let entry: Record<string, string> = {};
  const flush = () => {
    if (entry.leg === "server" && entry.scenario)
      requirements.unscored.set(entry.scenario, entry.reason ?? "");
    entry = {};
  };
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const top = /^([a-z_]+):\s*$/.exec(line);
    if (top?.[1]) {
      flush();
      section = top[1];
      continue;
    }
    const item = /^\s+-\s+(\S+)\s*$/.exec(line);
    if (section === "server" && item?.[1]) requirements.scored.add(item[1]);
    const field = /^\s+(-\s+)?([a-z_]+):\s*(\S.*)$/.exec(line);
    if (section === "not_scored" && field?.[2] && field[3]) {
      if (field[1]) flush();
      entry[field[2]] = field[3].trim();
    }
  }
  flush();
  return requirements;
}

/**
 * Collects `<dir>/server-<scenario>-<timestamp>/checks.json` as written by the CLI's `-o`. A scenario
 * that threw leaves its directory empty and only says why in the CLI output, so that line becomes its check.
 */
function readResults(dir: string, cliOutput: string): ScenarioResult[] {
  const results: ScenarioResult[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry.name);
    const name = match?.[1];
    if (!entry.isDirectory() || !name) continue;
    const file = join(dir, entry.name, "checks.json");
    if (existsSync(file)) {
      results.push({ name, checks: JSON.parse(readFileSync(file, "utf8")) as Check[] });
      continue;
    }
    const crash = cliOutput.split("\n").find((line) => line.startsWith(`Failed to run scenario ${name}:`));
    const errorMessage = crash ?? "scenario wrote no checks.json (see cli.log)";
    results.push({ name, checks: [{ id: "scenario-run", status: "FAILURE", errorMessage }] });
  }
  return results.sort((a, b) => a.name.localeCompare(b.name));
}

const failures = (result: ScenarioResult) => result.checks.filter((check) => check.status === "FAILURE");

/** Prints the table and failure details; returns the scored scenario counts. */
function report(
  results: ScenarioResult[],
  requirements: Requirements,
  scenario: string | undefined,
): { passed: number; failed: number } {
  const isScored = (name: string) =>
    requirements.scored.has(name) || (scenario === name && !requirements.unscored.has(name));
  const seen = new Set(results.map((r) => r.name));
  const missing = [...requirements.scored].filter((name) => scenario === undefined && !seen.has(name));
  const width = Math.max(10, ...results.map((r) => r.name.length));
  console.log(`\n${"scenario".padEnd(width)}  result  checks  scored`);
  for (const result of results) {
    const counted = result.checks.filter((c) => c.status === "SUCCESS" || c.status === "FAILURE");
    const passed = counted.length - failures(result).length;
    const scored = isScored(result.name)
      ? "yes"
      : `no (${requirements.unscored.get(result.name) ?? "not required"})`;
    const mark = failures(result).length === 0 ? "pass" : "FAIL";
    console.log(
      `${result.name.padEnd(width)}  ${mark}    ${`${passed}/${counted.length}`.padEnd(6)}  ${scored}`,
    );
  }
  for (const name of missing) console.log(`${name.padEnd(width)}  FAIL    -       yes (no results written)`);

  // A scenario with no SUCCESS or FAILURE check (say, all SKIPPED) passes without testing anything.
  for (const result of results.filter(
    (r) => !r.checks.some((c) => c.status === "SUCCESS" || c.status === "FAILURE"),
  ))
    console.log(
      `note: ${result.name} ran no checks (${result.checks.map((c) => `${c.status}: ${c.errorMessage ?? c.id}`).join("; ") || "none"})`,
    );
  const failed = results.filter((r) => failures(r).length > 0);
  for (const result of failed) {
    console.log(`\n${result.name}${isScored(result.name) ? "" : " (unscored)"} failed:`);
    for (const check of failures(result))
      console.log(`  - ${check.id}: ${check.errorMessage ?? "(no message)"}`);
  }
  const unscored = results.filter((r) => !isScored(r.name));
  if (unscored.length > 0) {
    const passing = unscored.filter((r) => failures(r).length === 0).map((r) => r.name);
    console.log(`\nunscored: ${passing.length}/${unscored.length} passed (${passing.join(", ") || "none"})`);
  }
  const scored = results.filter((r) => isScored(r.name));
  const scoredFailed = scored.filter((r) => failures(r).length > 0).length;
  return { passed: scored.length - scoredFailed, failed: scoredFailed + missing.length };
}

// Some scenarios pass without their fixture (the conformance suite's server scenarios, pitfall 2): a missing tool's error
// text satisfies "has text content". So first make sure the system under test serves them all.
const FIXTURES_2025 = {
  tools: [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_error_handling",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
  ],
  prompts: [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
  ],
  resources: ["test://static-text", "test://static-binary", "test://watched-resource"],
  templates: ["test://template/{id}/data"],
};

/** What the 2026-07-28 scenarios call: MRTR fixtures and server-stateless's diagnostic tools. */
const FIXTURES_2026 = {
  tools: [
    "test_simple_text",
    "test_tool_with_progress",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
  ],
  prompts: ["test_simple_prompt", "test_prompt_with_arguments", "test_input_required_result_prompt"],
  resources: ["test://static-text", "test://static-binary"],
  templates: ["test://template/{id}/data"],
};

/** What the `tasks-*` scenarios call (each scenario's "Required server fixtures"). */
const FIXTURES_TASKS: Fixtures = {
  tools: [
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
  ],
};

type Fixtures = Partial<Record<"tools" | "prompts" | "resources" | "templates", readonly string[]>>;

/** An official SDK client of the revision's era: v1 for the session era, v2 on 2026-07-28. */
async function precheckClient(
  url: string,
  revision: string,
): Promise<Pick<Client, "listTools" | "listPrompts" | "listResources" | "listResourceTemplates" | "close">> {
  if (revision < "2026-") {
    const client = new Client({ name: "conformance-precheck", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    return client;
  }
  const client = new V2Client(
    { name: "conformance-precheck", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: revision } } },
  );
  await client.connect(new V2Transport(new URL(url)));
  return client as unknown as Pick<
    Client,
    "listTools" | "listPrompts" | "listResources" | "listResourceTemplates" | "close"
  >;
}

/**
 * Fails when a fixture is missing, as a client of the revision's era lists them (a dual-era
 * upstream serves each era its own catalog); with `warnOnly` (a server we did not write) it only says so.
 */
async function assertFixturesServed(
  url: string,
  revision: string,
  FIXTURES: Fixtures,
  warnOnly = false,
): Promise<void> {
  const client = await precheckClient(url, revision);
  try {
    // Only the kinds asked for: a server without prompts answers prompts/list with -32601.
    const list = {
      tools: async () => (await client.listTools()).tools.map((t) => t.name),
      prompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
      resources: async () => (await client.listResources()).resources.map((r) => r.uri),
      templates: async () =>
        (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
    };
    const missing: string[] = [];
    for (const kind of Object.keys(FIXTURES) as Array<keyof Fixtures>) {
      const served = await list[kind]();
      for (const name of FIXTURES[kind] ?? []) if (!served.includes(name)) missing.push(`${kind}: ${name}`);
    }
    const message = `the system under test does not list every fixture:\n  ${missing.join("\n  ")}`;
    if (missing.length > 0 && !warnOnly) throw new Error(message);
    if (missing.length > 0) console.log(`warning: ${message}`);
    else console.log(`fixtures: all ${Object.values(FIXTURES).flat().length} served by ${url}`);
  } finally {
    await client.close();
  }
}

/** Which upstreams a revision runs against: one chosen, else its own fixture and the dual one. */
function upstreamsFor(revision: string, chosen: string | undefined, foreign: boolean): Upstream[] {
  if (chosen !== undefined) return [chosen as Upstream];
  const own = UPSTREAM_OF[revision] ?? "session";
  return foreign ? [own] : [own, "dual"];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      requirements: { type: "string" },
      upstream: { type: "string" },
      scenario: { type: "string" },
      verbose: { type: "boolean", default: false },
      "output-dir": { type: "string", short: "o" },
      target: { type: "string" },
      "upstream-url": { type: "string" },
      "upstream-era": { type: "string", default: "auto" },
      extension: { type: "string" },
    },
  });
  if (values.extension !== undefined && values.extension !== "tasks")
    throw new Error("--extension is tasks (the only extension with server scenarios here)");
  if (values.upstream !== undefined && !REVISION_UPSTREAMS.includes(values.upstream as Upstream))
    throw new Error("--upstream is session, stateless or dual");
  const foreign = values["upstream-url"];
  const revisions =
    values.extension !== undefined
      ? []
      : values.requirements
        ? [values.requirements]
        : Object.keys(UPSTREAM_OF);
  // The tasks run comes with the full run, or alone with --extension tasks: against the tasks
  // server alone and through Portico by default, one of them with --target fixture or portico.
  const tasksRun =
    values.extension === "tasks" ||
    (values.requirements === undefined &&
      values.scenario === undefined &&
      values.upstream === undefined &&
      foreign === undefined);
  const tasksWays: ReadonlyArray<"directly" | "portico"> = !tasksRun
    ? []
    : values.target === "fixture"
      ? ["directly"]
      : values.target === "portico"
        ? ["portico"]
        : ["directly", "portico"];
  const tasksThroughPortico = tasksWays.includes("portico");
  const pin = values["upstream-era"];
  if (pin !== "auto" && pin !== "session" && pin !== "stateless")
    throw new Error("--upstream-era is auto, session or stateless");
  const tooling = await ensureTooling();
  const none = { url: foreign ?? "", close: async () => undefined };
  const fixtures = foreign
    ? { session: none, stateless: none, dual: none, tasks: none }
    : await (async () => {
        const [session, stateless, dual, tasks] = await Promise.all([
          startConformanceUpstream(),
          startStatelessUpstream(),
          startDualEraUpstream(),
          startTasksUpstream(),
        ]);
        return { session, stateless, dual, tasks };
      })();
  let sut: Awaited<ReturnType<typeof startSystemUnderTest>> | undefined;
  const summary: string[] = [];
  const line = (run: string, where: string, result: { ok: boolean; passed: number; failed: number }) =>
    `${run.padEnd(10)}  ${where.padEnd(60)}  ${result.passed}/${result.passed + result.failed}${result.ok ? "" : "  FAIL"}`;
  try {
    sut = await startSystemUnderTest(
      {
        session: fixtures.session.url,
        stateless: fixtures.stateless.url,
        dual: fixtures.dual.url,
        tasks: fixtures.tasks.url,
      },
      values.target ?? "portico",
      pin,
      tasksThroughPortico ? UPSTREAMS : REVISION_UPSTREAMS,
    );
    const through = values.target === "fixture" ? "directly" : `through Portico, era ${pin}`;
    let ok = true;
    for (const revision of revisions)
      for (const upstream of upstreamsFor(revision, values.upstream, foreign !== undefined)) {
        const result = await runRevision(revision, sut.url(upstream), upstream, pin, tooling, values);
        summary.push(
          line(revision, `${foreign ? `upstream ${foreign}` : DESCRIPTION_OF[upstream]}, ${through}`, result),
        );
        ok = result.ok && ok;
      }
    for (const way of tasksWays) {
      const url = way === "portico" ? sut.url("tasks") : fixtures.tasks.url;
      const where = `${foreign ? `upstream ${foreign}` : DESCRIPTION_OF.tasks}, ${way === "portico" ? `through Portico, era ${pin}` : "directly"}`;
      const result = await runTasks(url, where, tooling, values);
      summary.push(line("tasks ext", where, result));
      ok = result.ok && ok;
    }
    console.log("\n== summary ==");
    for (const entry of summary) console.log(entry);
    return ok ? 0 : 1;
  } finally {
    await sut?.close();
    await Promise.all(Object.values(fixtures).map((f) => f.close()));
  }
}

/** One run of the CLI at one revision against one URL; true when every scored scenario passed. */
async function runRevision(
  revision: string,
  url: string,
  upstream: Upstream,
  pin: string,
  tooling: Awaited<ReturnType<typeof ensureTooling>>,
  values: {
    requirements?: string;
    scenario?: string;
    verbose?: boolean;
    "output-dir"?: string;
    "upstream-url"?: string;
  },
): Promise<{ ok: boolean; passed: number; failed: number }> {
  const requirements = readRequirements(revision);
  // A fresh directory per run, so results of earlier runs are never read back as this run's.
  const resultsBase = values["output-dir"] ? resolve(values["output-dir"]) : tmpdir();
  await mkdir(resultsBase, { recursive: true });
  const resultsDir = await mkdtemp(join(resultsBase, "portico-conformance-"));
  const foreign = values["upstream-url"];
  const era = upstream === "dual" ? `, provider era ${pin}` : "";
  console.log(`\n== ${revision}, ${foreign ? `upstream ${foreign}` : DESCRIPTION_OF[upstream]}${era} ==`);
  const fixtures = revision < "2026-" ? FIXTURES_2025 : FIXTURES_2026;
  try {
    await assertFixturesServed(url, revision, fixtures, foreign !== undefined);
  } catch (error) {
    // The other runs still go ahead; this one fails without running the suite.
    console.log(error instanceof Error ? error.message : String(error));
    console.log(`conformance ${revision}: not run`);
    return { ok: false, passed: 0, failed: requirements.scored.size };
  }
  // --requirements replaces --scenario in the CLI, so a single scenario runs at that revision's wire instead.
  const selection = values.scenario
    ? ["--scenario", values.scenario, ...(values.requirements ? ["--spec-version", revision] : [])]
    : ["--requirements", revision];
  const args = [tooling.cli, "server", "--url", url, ...selection, "-o", resultsDir];
  console.log(`conformance ${CONFORMANCE_VERSION}: ${args.slice(1).join(" ")}`);
  const output: Buffer[] = [];
  const cliCode = await run(tooling.node, args, {
    timeoutMs: RUN_TIMEOUT_MS,
    onOutput: (chunk) => {
      output.push(chunk);
      if (values.verbose) process.stdout.write(chunk);
    },
  });
  const cliOutput = Buffer.concat(output).toString("utf8");
  await writeFile(join(resultsDir, "cli.log"), cliOutput);

  const results = readResults(resultsDir, cliOutput);
  if (results.length === 0) console.error(cliOutput.split("\n").slice(-40).join("\n"));
  const scored = report(results, requirements, values.scenario);
  // The CLI's exit code is authoritative; the table only explains it.
  const ok = cliCode === 0 && scored.failed === 0 && results.length > 0;
  if (cliCode !== 0 && scored.failed === 0) console.log(`\nthe conformance CLI exited with ${cliCode}`);
  console.log(`\nresults: ${resultsDir}${ok && !values["output-dir"] ? " (removed)" : ""}`);
  if (ok && !values["output-dir"]) await rm(resultsDir, { recursive: true, force: true });
  console.log(`conformance ${revision}: ${scored.passed} passed, ${scored.failed} failed`);
  return { ok, ...scored };
}

/**
 * The `tasks-*` scenarios of the Tasks extension, one CLI run each (an extension scenario runs only
 * by name), all scored: the ones the 2026-07-28 requirement file lists as `not_scored`, reason
 * `extension`. They run on the 2026-07-28 wire.
 */
async function runTasks(
  url: string,
  where: string,
  tooling: Awaited<ReturnType<typeof ensureTooling>>,
  values: { scenario?: string; verbose?: boolean; "output-dir"?: string; "upstream-url"?: string },
): Promise<{ ok: boolean; passed: number; failed: number }> {
  const all = [...readRequirements("2026-07-28").unscored]
    .filter(([name, reason]) => reason === "extension" && name.startsWith("tasks-"))
    .map(([name]) => name);
  if (all.length === 0) throw new Error(`the requirement file names no ${TASKS_EXTENSION} scenarios`);
  if (values.scenario !== undefined && !all.includes(values.scenario))
    throw new Error(`--scenario ${values.scenario} is not one of the tasks scenarios: ${all.join(", ")}`);
  const scenarios = values.scenario !== undefined ? [values.scenario] : all;
  const requirements: Requirements = { scored: new Set(scenarios), unscored: new Map() };
  const resultsBase = values["output-dir"] ? resolve(values["output-dir"]) : tmpdir();
  await mkdir(resultsBase, { recursive: true });
  const resultsDir = await mkdtemp(join(resultsBase, "portico-conformance-tasks-"));
  console.log(`\n== ${TASKS_EXTENSION} (SEP-2663), ${where} ==`);
  try {
    await assertFixturesServed(url, "2026-07-28", FIXTURES_TASKS, values["upstream-url"] !== undefined);
  } catch (error) {
    console.log(error instanceof Error ? error.message : String(error));
    console.log("conformance tasks: not run");
    return { ok: false, passed: 0, failed: scenarios.length };
  }
  const output: Buffer[] = [];
  let cliFailed = false;
  for (const scenario of scenarios) {
    const args = [tooling.cli, "server", "--url", url, "--scenario", scenario, "-o", resultsDir];
    console.log(`conformance ${CONFORMANCE_VERSION}: ${args.slice(1).join(" ")}`);
    const code = await run(tooling.node, args, {
      timeoutMs: RUN_TIMEOUT_MS,
      onOutput: (chunk) => {
        output.push(chunk);
        if (values.verbose) process.stdout.write(chunk);
      },
    });
    cliFailed ||= code !== 0;
  }
  const cliOutput = Buffer.concat(output).toString("utf8");
  await writeFile(join(resultsDir, "cli.log"), cliOutput);
  const results = readResults(resultsDir, cliOutput);
  const scored = report(results, requirements, values.scenario);
  const ok = !cliFailed && scored.failed === 0 && results.length > 0;
  if (cliFailed && scored.failed === 0) console.log("\nthe conformance CLI exited non-zero");
  console.log(`\nresults: ${resultsDir}${ok && !values["output-dir"] ? " (removed)" : ""}`);
  if (ok && !values["output-dir"]) await rm(resultsDir, { recursive: true, force: true });
  console.log(`conformance tasks: ${scored.passed} passed, ${scored.failed} failed`);
  return { ok, ...scored };
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(error);
  return 1;
});
