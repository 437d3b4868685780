// Headless Chromium (Debian's `chromium` package) driven by playwright-core, for the tests that go
// through Portico's login and consent pages as a person would: labelled inputs, real buttons, the
// browser following the redirect back to the client. Never downloads a browser of its own.
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";

/** The Chromium binary; PORTICO_CHROMIUM overrides it. */
export const CHROMIUM = process.env.PORTICO_CHROMIUM ?? "/usr/bin/chromium";

// The machine's network is closed: without the background-networking flags Chromium keeps trying
// (and failing) to reach Google's services at every start.
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches headless Chromium; fails (never skips) with the install command when it is missing. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}, and this test drives the OAuth login and consent ` +
        "pages in a real browser. Install it with `apt-get install -y chromium` (Debian), or set " +
        "PORTICO_CHROMIUM to a Chromium binary. .ci/run installs it on CI.",
    );
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 30_000 });
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export interface SignInResult {
  /** The URL the browser was sent back to (the client's redirect URI with code or error). */
  readonly redirect: URL;
  /** Whether the consent page was shown (it is skipped once the user allowed the same scopes). */
  readonly consented: boolean;
}

/**
 * Opens an authorization URL in a fresh browser context (no cookies), signs in on the login page,
 * allows (or denies) on the consent page when it is shown, and resolves with the URL the browser
 * lands on under `redirectPrefix`. Whatever serves that URL (the test's loopback server, or the
 * conformance CLI's callback listener) gets the request from the browser itself.
 */
export async function signInAndConsent(
  browser: Browser,
  authorizationUrl: string | URL,
  opts: Credentials & {
    redirectPrefix: string;
    /** Picked on the login page when the request named no resource (the page then lists tenants). */
    tenant?: string;
    decision?: "Allow" | "Deny";
    timeoutMs?: number;
  },
): Promise<SignInResult> {
  const timeout = opts.timeoutMs ?? 15_000;
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  // Chromium reports blocked navigations (a CSP form-action refusal, say) only on the console.
  const consoleLines: string[] = [];
  page.on("console", (message) => consoleLines.push(message.text().trim()));
  const back = (url: URL) => url.href.startsWith(opts.redirectPrefix);
  try {
    await page.goto(String(authorizationUrl));
    await describeFailure(page, consoleLines, () => page.getByRole("heading", { name: "Sign in" }).waitFor());
    const tenantChoice = page.getByLabel("Tenant");
    if (opts.tenant !== undefined && (await tenantChoice.count()) > 0)
      await tenantChoice.selectOption(opts.tenant);
    await page.getByLabel("Username").fill(opts.username);
    await page.getByLabel("Password").fill(opts.password);
    const landed = page.waitForURL(back, { waitUntil: "commit" }).then(() => false);
    const allow = page.getByRole("button", { name: "Allow" });
    await page.getByRole("button", { name: "Sign in" }).click();
    const consentShown = allow.waitFor().then(
      () => true,
      () => false,
    );
    // Either the consent page, or (consent remembered) straight back to the client.
    if (await describeFailure(page, consoleLines, () => Promise.race([landed, consentShown]))) {
      await page.getByRole("button", { name: opts.decision ?? "Allow" }).click();
      await describeFailure(page, consoleLines, () => page.waitForURL(back, { waitUntil: "commit" }));
      return { redirect: new URL(page.url()), consented: true };
    }
    return { redirect: new URL(page.url()), consented: false };
  } finally {
    await context.close();
  }
}

/** Runs a wait; on timeout, says which page the browser was stuck on, what it showed and logged. */
async function describeFailure<T>(page: Page, consoleLines: string[], wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (err) {
    const text = await page
      .locator("body")
      .innerText({ timeout: 1000 })
      .catch(() => "(no page text)");
    const logged = consoleLines.length > 0 ? `; browser console: ${consoleLines.join(" | ")}` : "";
    throw new Error(
      `browser stuck at ${page.url()}: ${text.replace(/\s+/g, " ").slice(0, 500)} (${String(err).split("\n")[0]})${logged}`,
      { cause: err },
    );
  }
}

export interface CallbackServer {
  /** http://127.0.0.1:<port><path> (/callback unless told otherwise) */
  readonly redirectUri: string;
  /** Every request to its path the server received, in order (not the browser's favicon requests). */
  readonly received: URL[];
  close(): Promise<void>;
}

/**
 * A native client's loopback redirect target (RFC 8252 §7.3) on 127.0.0.1 and an ephemeral port,
 * at `path` (VS Code's is "/").
 */
export async function startCallbackServer(path = "/callback"): Promise<CallbackServer> {
  const received: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    const ok = url.pathname === path;
    if (ok) received.push(url);
    res
      .writeHead(ok ? 200 : 404, { "content-type": "text/html; charset=utf-8" })
      .end(ok ? "<!doctype html><title>Done</title><p>You can close this window.</p>" : "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
