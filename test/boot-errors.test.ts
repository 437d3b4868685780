// Boot failures as a user meets them (src/boot-errors.ts): `node src/main.ts` with a port in
// use, a bad setting, an unreachable Redis exits 1 with one line on stderr naming the fix.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { dirname, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { bootFailure } from "../src/boot-errors.js";
import { ConfigError } from "../src/config/env.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs main.ts with these settings until it exits; its exit code and stderr lines. */
function boot(
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string[]; stdout: string }> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH, HOST: "127.0.0.1", PORTICO_LOG_LEVEL: "warn", ...env },
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      failed(new Error(`main.ts did not exit within 20 s:\n${stdout}\n${stderr}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, stderr: stderr.split("\n").filter((l) => l !== ""), stdout });
    });
  });
}

describe("boot failures", () => {
  let busy: Server;
  let port: number;
  before(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    port = (busy.address() as { port: number }).port;
  });
  after(() => busy.close());

  it("a port in use: exit 1 and exactly one line that says to set PORT", async () => {
    const { code, stderr } = await boot({ PORT: String(port) });
    assert.equal(code, 1);
    assert.deepEqual(stderr, [
      `portico: port ${port} is in use on 127.0.0.1 — set PORT to another port or stop the other process`,
    ]);
  });

  it("a bad setting: exit 1 and one line naming the variable", async () => {
    const { code, stderr } = await boot({ PORT: "eighty" });
    assert.equal(code, 1);
    assert.equal(stderr.length, 1, stderr.join("\n"));
    assert.match(stderr[0]!, /^portico: PORT.* is not a whole number/);
  });

  it("an unreachable Redis: exit 1 and one line naming it, its password redacted", async () => {
    const { code, stderr } = await boot({
      PORT: "0",
      PORTICO_REDIS_URL: `redis://:hunter2@127.0.0.1:${port}`,
    });
    assert.equal(code, 1);
    assert.equal(stderr.length, 1, stderr.join("\n"));
    assert.match(stderr[0]!, /^portico: Cannot connect to Redis at redis:\/\/.*127\.0\.0\.1:\d+ within 5 s/);
    assert.doesNotMatch(stderr[0]!, /hunter2/);
  });
});

describe("bootFailure", () => {
  it("folds a message that spans lines into one", () => {
    const { line, stack } = bootFailure(new ConfigError("PORTICO_CONFIG: not valid JSON:\n  at line 3"));
    assert.equal(line, "portico: PORTICO_CONFIG: not valid JSON: at line 3");
    assert.equal(stack, undefined);
  });

  it("names privileged ports and missing addresses", () => {
    const denied = Object.assign(new Error("listen EACCES"), { code: "EACCES" });
    assert.match(
      bootFailure(denied, { port: 80, host: "0.0.0.0" }).line,
      /port 80 .*set PORT to 1024 or above/,
    );
    const nowhere = Object.assign(new Error("listen EADDRNOTAVAIL"), { code: "EADDRNOTAVAIL" });
    assert.match(
      bootFailure(nowhere, { port: 8080, host: "10.9.9.9" }).line,
      /cannot listen on 10\.9\.9\.9.*set HOST/,
    );
  });

  it("keeps the stack of a failure nobody foresaw (a bug to report)", () => {
    const { line, stack } = bootFailure(new TypeError("x is undefined"));
    assert.equal(line, "portico: failed to start: x is undefined");
    assert.match(stack!, /TypeError: x is undefined\n\s+at /);
  });
});
