// The README's quickstart as a new user runs it: its own bash blocks, word for word but for the
// ports (and the bridge run from source), register server-everything on the demo tenant and call a
// tool with curl, then create an OAuth tenant with a user and that upstream, and call a tool through
// `portico connect`, whose "browser" signs in as the README's user — so the guide cannot drift from
// what Portico answers.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { after, before, it } from "node:test";
import { demoTenant } from "../src/config/demo.js";
import { ADMIN_TOKEN } from "./support/admin.js";
import { BRIDGE_ARGS, bridgeEnv, newBridgeHome, ROOT } from "./support/connect.js";
import { startEverything, type EverythingServer } from "./support/everything.js";
import { startPortico, type RunningPortico } from "./support/portico.js";
import { freePort } from "./support/redis.js";

let portico: RunningPortico;
let everything: EverythingServer;
const home = newBridgeHome();
before(async () => {
  everything = await startEverything();
  const port = await freePort();
  // Its own public URL, so the tokens' audience is the URL the README's bridge is given.
  const env = { PORT: String(port), PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` };
  portico = await startPortico({
    tenants: [demoTenant()],
    env: { ...env, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
});
after(async () => {
  await portico.close();
  await everything.stop();
  rmSync(home.configDir, { recursive: true, force: true });
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
    .replaceAll("http://localhost:3001/mcp", everything.url)
    .replaceAll("node dist/cli.js", `"${process.execPath}" ${BRIDGE_ARGS.join(" ")}`);
}

/** Runs a script in bash at the repository's root (never blocking: the Portico it talks to is in this process). */
function bash(
  script: string,
  env: Record<string, string> = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-eo", "pipefail", "-c", script],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
        timeout: 30_000,
      },
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

it("the OAuth quickstart creates a tenant, a user and a provider; the bridge signs in and calls a tool", async () => {
  const created = await bash(await readmeBlock("/admin/v1/tenants/acme/users"));
  assert.equal(created.status, 0, created.stderr);
  assert.match(created.stdout, /"id":"everything"/, created.stdout);
  const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
  const [, username, password] = /"username": "([^"]+)", "password": "([^"]+)"/.exec(readme)!;

  // The bridge's "browser" (test/fixtures/connect-login.ts) signs in as the README's user.
  const browser = { CONNECT_TEST_USER: username!, CONNECT_TEST_PASSWORD: password! };
  const env = Object.fromEntries(
    Object.entries(bridgeEnv(home, browser)).filter(
      ([name]) => name.startsWith("PORTICO_CONNECT_") || name.startsWith("CONNECT_TEST_"),
    ),
  );
  const signIns = () => readFileSync(home.marker, "utf8").trim().split("\n").filter(Boolean).length;
  for (const run of [1, 2]) {
    const call = await bash(await readmeBlock("connect http://localhost:8080/mcp/acme"), env);
    assert.equal(call.status, 0, call.stderr);
    assert.deepEqual(JSON.parse(call.stdout), {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "Echo: hello from acme" }] },
    });
    assert.equal(signIns(), 1, `run ${run}: one sign-in, then the cached token`);
    if (run === 1) assert.match(call.stderr, /sign in to .* in your browser/);
    else assert.doesNotMatch(call.stderr, /portico connect:/, "the bridge said nothing");
  }
});
