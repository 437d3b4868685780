// The `portico` command (src/cli.ts): --help, an unknown command, and `serve` (and no command)
// running the server as dist/main.js does, shutting down cleanly on SIGTERM. Then the form it ships
// in: compiled by tsconfig.build.json into a package laid out as a checkout after `npm run build`,
// run as `node dist/cli.js` and as `npm exec -- portico`, which follows package.json's bin.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const CLI = ["--import", "tsx", "src/cli.ts"];

function withoutRedis(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith("PORTICO_REDIS_")));
}

describe("portico (src/cli.ts)", () => {
  it("--help prints the usage on stdout, naming connect and never npx", () => {
    const run = spawnSync(process.execPath, [...CLI, "--help"], { cwd: ROOT, encoding: "utf8" });
    assert.equal(run.status, 0);
    assert.match(run.stdout, /^Usage:/);
    assert.match(run.stdout, /portico connect <url>/);
    assert.match(run.stdout, /npm exec -- portico connect <url>/);
    assert.doesNotMatch(run.stdout, /npx/);
    assert.equal(run.stderr, "");
  });

  it("an unknown command: usage on stderr, exit 2", () => {
    const run = spawnSync(process.execPath, [...CLI, "srve"], { cwd: ROOT, encoding: "utf8" });
    assert.equal(run.status, 2);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /^portico: unknown command srve\n/);
  });

  for (const args of [["serve"], []])
    it(`${args.length ? "serve" : "no command"}: the server starts, and SIGTERM shuts it down with exit 0`, async () => {
      const child = spawn(process.execPath, [...CLI, ...args], {
        cwd: ROOT,
        // The embedded store, whatever the environment says.
        env: { ...withoutRedis(process.env), PORT: "0", HOST: "127.0.0.1", PORTICO_LOG_LEVEL: "info" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (out += c.toString()));
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
      const deadline = Date.now() + 20_000;
      while (!/MCP endpoint for tenant 'demo'/.test(out)) {
        assert.ok(Date.now() < deadline, `no listening message:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(
        out,
        /store: embedded, in this process's memory: .* lost when it stops/,
        "says what a restart forgets",
      );
      child.kill("SIGTERM");
      assert.equal(await exited, 0, out);
    });
});

describe("portico as shipped (dist/cli.js, package.json's bin)", () => {
  let pkg: string;
  before(() => {
    // A checkout after `npm run build`, in a temporary directory: the compiled tree (about 10 s of
    // tsc), package.json, and this checkout's node_modules.
    pkg = mkdtempSync(join(tmpdir(), "portico-bin-"));
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const build = spawnSync(
      process.execPath,
      [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", join(pkg, "dist")],
      { encoding: "utf8" },
    );
    assert.equal(build.status, 0, build.stdout + build.stderr);
    copyFileSync(join(ROOT, "package.json"), join(pkg, "package.json"));
    symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"), "dir");
  });
  after(() => rmSync(pkg, { recursive: true, force: true }));

  const usage = (run: { status: number | null; stdout: string; stderr: string }) => {
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^Usage:/);
    assert.match(run.stdout, /portico connect <url>/);
  };

  it("package.json's bin is dist/cli.js, which keeps src/cli.ts's shebang", () => {
    const { bin } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: unknown };
    assert.deepEqual(bin, { portico: "dist/cli.js" });
    const compiled = readFileSync(join(pkg, "dist/cli.js"), "utf8");
    assert.ok(compiled.startsWith("#!/usr/bin/env node\n"), "an executable script once npm links it");
  });

  it("node dist/cli.js --help", () => {
    usage(spawnSync(process.execPath, ["dist/cli.js", "--help"], { cwd: pkg, encoding: "utf8" }));
  });

  it("npm exec -- portico --help, in the checkout (offline: never a registry package of that name)", () => {
    usage(spawnSync("npm", ["exec", "--offline", "--", "portico", "--help"], { cwd: pkg, encoding: "utf8" }));
  });
});
