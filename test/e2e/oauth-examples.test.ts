// The OAuth client examples of docs/clients.md, run as a user runs them: docs/examples/oauth-client.ts
// (the TypeScript SDK v1, through tsx) and docs/examples/oauth_client.py (the Python SDK, in the
// tests' venv) against an OAuth tenant with a local user. Headless Chromium plays the user at the
// URL the example prints; the example lists the tenant's tools, and a second run uses the tokens
// it saved, with no sign-in. A denied sign-in fails the run and saves no tokens.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { UserStore } from "../../src/oauth/users.js";
import { launchBrowser, signInAndConsent } from "../support/browser.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { skipPython, venvPython } from "../support/python.js";
import { freePort } from "../support/redis.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const USER = { username: "ada", password: "correct horse battery" };
const TOOLS = ["get_weather", "get_time"];

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether the example asked for a sign-in (printed an authorization URL). */
  readonly signedIn: boolean;
}

let portico: RunningPortico;
let browser: Browser;
const dir = mkdtempSync(join(tmpdir(), "portico-examples-"));

before(async () => {
  browser = await launchBrowser();
  const port = await freePort();
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "oauth",
        providers: [
          {
            id: "wx",
            kind: "http",
            tools: TOOLS.map((name) => ({ name, url: `http://127.0.0.1:9/${name}` })),
          },
        ],
      },
    ],
    env: { PORT: String(port), PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
  await new UserStore(portico.store, portico.keys).create("acme", USER);
});
after(async () => {
  await browser?.close();
  await portico?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs an example; when it prints a sign-in URL, Chromium signs in as Ada there and allows (or
 * denies) and lands on the example's loopback redirect URI.
 */
async function runExample(
  command: string,
  args: string[],
  decision: "Allow" | "Deny" = "Allow",
): Promise<Run> {
  const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: process.env });
  let stdout = "";
  let stderr = "";
  let signIn: Promise<unknown> | undefined;
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
    const url = /Sign in in your browser: (\S+)/.exec(stderr)?.[1];
    if (url && !signIn) {
      const redirectPrefix = new URL(url).searchParams.get("redirect_uri")!;
      signIn = signInAndConsent(browser, url, { ...USER, redirectPrefix, decision });
    }
  });
  const code = await new Promise<number | null>((done) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (c) => (clearTimeout(timer), done(c)));
  });
  await signIn;
  return { code, stdout, stderr, signedIn: signIn !== undefined };
}

const examples = [
  {
    label: "TypeScript SDK v1 (docs/examples/oauth-client.ts)",
    skip: false as const,
    command: async () => ({
      command: process.execPath,
      args: ["--import", "tsx", "docs/examples/oauth-client.ts"],
    }),
  },
  {
    label: "Python SDK (docs/examples/oauth_client.py)",
    skip: skipPython,
    command: async () => ({ command: await venvPython(), args: ["docs/examples/oauth_client.py"] }),
  },
];

for (const example of examples)
  describe(example.label, { skip: example.skip }, () => {
    const store = join(dir, `${example.label.split(" ")[0]}-tokens.json`);

    it("signs in in the browser and lists the tools; the next run reuses the saved tokens", async () => {
      const { command, args } = await example.command();
      const url = portico.mcpUrl("acme");
      const first = await runExample(command, [...args, url, store]);
      assert.equal(first.code, 0, first.stderr);
      assert.ok(first.signedIn, `no sign-in URL printed:\n${first.stderr}`);
      assert.deepEqual(first.stdout.trim().split("\n").sort(), [...TOOLS].sort(), first.stderr);
      const saved = JSON.parse(readFileSync(store, "utf8")) as Record<
        string,
        { tokens?: { access_token?: string } }
      >;
      assert.ok(saved[url]?.tokens?.access_token, "tokens saved under the server's URL");
      assert.equal(statSync(store).mode & 0o077, 0, "the token file is the user's alone");

      const second = await runExample(command, [...args, url, store]);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.signedIn, false, `asked to sign in again:\n${second.stderr}`);
      assert.deepEqual(second.stdout.trim().split("\n").sort(), [...TOOLS].sort());
    });

    it("a denied sign-in: the run fails, no tools printed, no tokens saved", async () => {
      const { command, args } = await example.command();
      const denied = join(dir, `denied-${example.label.split(" ")[0]}.json`);
      const run = await runExample(command, [...args, portico.mcpUrl("acme"), denied], "Deny");
      assert.ok(run.signedIn);
      assert.notEqual(run.code, 0);
      assert.equal(run.stdout, "");
      assert.match(run.stderr, /access_denied/);
      const saved = JSON.parse(readFileSync(denied, "utf8")) as Record<string, { tokens?: unknown }>;
      assert.equal(saved[portico.mcpUrl("acme")]?.tokens, undefined);
    });
  });
