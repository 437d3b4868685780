// `npm run test:conformance:auth`: the official MCP conformance suite's authorization-server mode
// (`conformance authorization`: the metadata endpoint and the authorization code grant) against
// Portico's authorization server. The suite prints an authorization URL and waits on its own
// callback listener (http://127.0.0.1:<port>/callback) for a person to sign in; here headless
// Chromium does that (test/support/browser.ts): it opens the URL, signs in on the login page,
// allows on the consent page and follows the redirect to the suite's listener.
// Prints a per-scenario table and `conformance authorization: N passed, M failed` (checks), and
// exits non-zero unless every check passed and the CLI agreed.
// Flags for manual use: --verbose (the CLI's output as it runs), -o <dir> (keep the results).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Browser } from "playwright-core";
import { ClientStore } from "../../src/oauth/clients.js";
import { UserStore } from "../../src/oauth/users.js";
import { launchBrowser, signInAndConsent, type SignInResult } from "../support/browser.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";
import { CONFORMANCE_VERSION, ensureTooling, run, type Check } from "./tooling.js";

// The suite waits up to 5 minutes for the callback; a signed-in browser needs seconds.
const RUN_TIMEOUT_MS = 2 * 60_000;

/** The suite's authorization-server scenarios at the pinned version (`conformance list --authorization`). */
const SCENARIOS = ["authorization-code-grant", "authorization-server-metadata-endpoint"];
const USER = { username: "conformance", password: "conformance suite password" };

/**
 * Portico with one oauth tenant on a real Redis, its issuer equal to the listening URL; a local
 * user; and the suite's client pre-registered for the tenant (public, PKCE only), with the
 * suite's callback as its redirect URI.
 */
async function startAuthorizationServer(callbackPort: number): Promise<{
  portico: RunningPortico;
  issuer: string;
  clientId: string;
  redirectUri: string;
}> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const portico = await startPortico({
    redis: true,
    tenants: [
      {
        id: "acme",
        auth: "oauth",
        providers: [
          {
            id: "docs",
            kind: "static",
            resources: [{ uri: "docs://hello", name: "hello", mimeType: "text/plain", text: "hello" }],
          },
        ],
      },
    ],
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer },
  });
  await new UserStore(portico.store, portico.keys).create("acme", USER);
  const redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
  const client = await new ClientStore(portico.store, portico.keys).preRegister("acme", {
    client_name: "MCP conformance suite",
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  });
  return { portico, issuer, clientId: client.client_id, redirectUri };
}

/** `<dir>/authorization-server-<scenario>-<timestamp>/checks.json`, as written by the CLI's `-o`. */
function readResults(dir: string): Array<{ name: string; checks: Check[] }> {
  const results: Array<{ name: string; checks: Check[] }> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const match = /^authorization-server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry.name);
    const file = join(dir, entry.name, "checks.json");
    if (!entry.isDirectory() || !match?.[1] || !existsSync(file)) continue;
    results.push({ name: match[1], checks: JSON.parse(readFileSync(file, "utf8")) as Check[] });
  }
  return results.sort((a, b) => a.name.localeCompare(b.name));
}

/** The CLI's own summary lines, `✓ <scenario>: N passed, M failed`, for scenarios that wrote no file. */
function summaryOf(cliOutput: string): Map<string, { passed: number; failed: number }> {
  const summary = new Map<string, { passed: number; failed: number }>();
  for (const m of cliOutput.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gmu))
    summary.set(m[1]!, { passed: Number(m[2]), failed: Number(m[3]) });
  return summary;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      verbose: { type: "boolean", default: false },
      "output-dir": { type: "string", short: "o" },
    },
  });
  const tooling = await ensureTooling();
  const resultsBase = values["output-dir"] ? resolve(values["output-dir"]) : tmpdir();
  await mkdir(resultsBase, { recursive: true });
  const resultsDir = await mkdtemp(join(resultsBase, "portico-conformance-auth-"));

  const callbackPort = await freePort();
  let browser: Browser | undefined;
  let server: Awaited<ReturnType<typeof startAuthorizationServer>> | undefined;
  try {
    browser = await launchBrowser();
    server = await startAuthorizationServer(callbackPort);
    const { issuer, clientId, redirectUri, portico } = server;
    const resource = portico.mcpUrl("acme");
    const args = [
      ...[tooling.cli, "authorization", "--url", issuer, "--client-id", clientId],
      ...["--resource", resource, "-p", String(callbackPort), "-o", resultsDir],
    ];
    console.log(`conformance ${CONFORMANCE_VERSION}: ${args.slice(1).join(" ")}`);

    // The suite prints the authorization URL on a line of its own, then waits on its callback.
    const signIns: Array<Promise<SignInResult | Error>> = [];
    const output: Buffer[] = [];
    let pending = "";
    const activeBrowser = browser;
    // A sign-in that failed leaves the suite waiting minutes for its callback: stop it at once.
    const abort = new AbortController();
    const cliCode = await run(tooling.node, args, {
      timeoutMs: RUN_TIMEOUT_MS,
      signal: abort.signal,
      onOutput: (chunk) => {
        output.push(chunk);
        if (values.verbose) process.stdout.write(chunk);
        const lines = (pending + chunk.toString("utf8")).split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines.map((l) => l.trim()))
          if (line.startsWith(`${issuer}/oauth/authorize?`))
            signIns.push(
              signInAndConsent(activeBrowser, line, { ...USER, redirectPrefix: redirectUri }).catch(
                (err: unknown) => {
                  abort.abort("the browser could not complete the sign-in");
                  return err instanceof Error ? err : new Error(String(err));
                },
              ),
            );
      },
    });
    const cliOutput = Buffer.concat(output).toString("utf8");
    await writeFile(join(resultsDir, "cli.log"), cliOutput);
    const browserErrors = (await Promise.all(signIns)).filter((r): r is Error => r instanceof Error);
    for (const err of browserErrors) console.error(`browser: ${err.message}`);

    const results = readResults(resultsDir);
    const summary = summaryOf(cliOutput);
    for (const [name, counts] of summary)
      if (!results.some((r) => r.name === name))
        results.push({
          name,
          checks: [
            ...Array.from({ length: counts.passed }, () => ({ id: name, status: "SUCCESS" as const })),
            ...Array.from({ length: counts.failed }, () => ({
              id: name,
              status: "FAILURE" as const,
              errorMessage: "no checks.json (see cli.log)",
            })),
          ],
        });
    for (const name of SCENARIOS)
      if (!results.some((r) => r.name === name))
        results.push({
          name,
          checks: [
            { id: name, status: "FAILURE", errorMessage: "the scenario reported nothing (see cli.log)" },
          ],
        });
    results.sort((a, b) => a.name.localeCompare(b.name));
    if (results.every((r) => r.checks.every((c) => c.status !== "SUCCESS")))
      console.error(cliOutput.split("\n").slice(-40).join("\n"));

    const width = Math.max(10, ...results.map((r) => r.name.length));
    console.log(`\n${"scenario".padEnd(width)}  result  checks`);
    let passed = 0;
    let failed = 0;
    for (const result of results) {
      const ok = result.checks.filter((c) => c.status === "SUCCESS").length;
      const bad = result.checks.filter((c) => c.status === "FAILURE");
      const warnings = result.checks.filter((c) => c.status === "WARNING").length;
      passed += ok;
      failed += bad.length;
      const mark = bad.length === 0 ? "pass" : "FAIL";
      const note = warnings > 0 ? `  (${warnings} warning${warnings > 1 ? "s" : ""})` : "";
      console.log(`${result.name.padEnd(width)}  ${mark}    ${ok}/${ok + bad.length}${note}`);
      for (const check of bad) console.log(`  - ${check.id}: ${check.errorMessage ?? "(no message)"}`);
    }
    if (signIns.length === 0) console.log("\nthe suite never printed an authorization URL for the browser");
    const ok =
      cliCode === 0 && failed === 0 && passed > 0 && browserErrors.length === 0 && signIns.length > 0;
    if (cliCode !== 0 && failed === 0) console.log(`\nthe conformance CLI exited with ${cliCode}`);
    console.log(`\nresults: ${resultsDir}${ok && !values["output-dir"] ? " (removed)" : ""}`);
    if (ok && !values["output-dir"]) await rm(resultsDir, { recursive: true, force: true });
    console.log(`conformance authorization: ${passed} passed, ${failed} failed`);
    return ok ? 0 : 1;
  } finally {
    await browser?.close();
    await server?.portico.close();
  }
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(error);
  return 1;
});
