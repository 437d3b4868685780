// The `portico` command (src/cli.ts): --help, an unknown command, and `serve` (and no command)
// running the server as dist/main.js does, shutting down cleanly on SIGTERM.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const CLI = ["--import", "tsx", "src/cli.ts"];

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
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", PORTICO_LOG_LEVEL: "info" },
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
      child.kill("SIGTERM");
      assert.equal(await exited, 0, out);
    });
});
