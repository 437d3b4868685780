// The README's quickstart as a new user runs it: its own bash blocks, word for word but for the
// ports, register server-everything on the demo tenant and call a tool with curl — so the guide
// cannot drift from what Portico answers.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { after, before, it } from "node:test";
import { demoTenant } from "../src/config/demo.js";
import { ADMIN_TOKEN } from "./support/admin.js";
import { startEverything, type EverythingServer } from "./support/everything.js";
import { startPortico, type RunningPortico } from "./support/portico.js";

let portico: RunningPortico;
let everything: EverythingServer;
before(async () => {
  everything = await startEverything();
  portico = await startPortico({ tenants: [demoTenant()], env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
});
after(async () => {
  await portico.close();
  await everything.stop();
});

/** The README's ```bash block that contains `marker`, with the quickstart's ports made this test's. */
async function readmeBlock(marker: string): Promise<string> {
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const block = [...readme.matchAll(/```bash\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((b) => b.includes(marker));
  assert.ok(block, `the README has a bash block with ${marker}`);
  return block
    .replaceAll("http://localhost:8080", portico.url)
    .replaceAll("http://localhost:3001/mcp", everything.url);
}

/** Runs a script in bash (never blocking: the Portico it talks to is in this process). */
function bash(script: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-eo", "pipefail", "-c", script],
      { env: { PATH: process.env.PATH, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

it("the quickstart registers an upstream, answers its health, and a tool is called with curl", async () => {
  const register = await bash(await readmeBlock("/admin/v1/tenants/demo/providers"));
  assert.equal(register.status, 0, register.stderr);
  const saved = JSON.parse(register.stdout) as { id: string; health: { status: string } };
  assert.equal(saved.id, "everything");
  assert.equal(saved.health.status, "healthy");

  const call = await bash(await readmeBlock('"method":"tools/call"'));
  assert.equal(call.status, 0, call.stderr);
  assert.deepEqual(JSON.parse(call.stdout), {
    jsonrpc: "2.0",
    id: 2,
    result: { content: [{ type: "text", text: "Echo: hello from Portico" }] },
  });
});
