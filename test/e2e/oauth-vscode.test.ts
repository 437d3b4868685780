// docs/clients.md's VS Code OAuth flow, run: the official SDK client configured as VS Code behaves
// (the MCP URL with a trailing slash, the Protected Resource Metadata's `resource` compared to it
// exactly, VS Code's redirect URIs registered by RFC 7591, the authorization on an ephemeral
// loopback port at "/"), headless Chromium at Portico's login and consent pages, then a tool call
// carrying the token, at the slash URL and the slash-less one.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser } from "playwright-core";
import {
  launchBrowser,
  signInAndConsent,
  startCallbackServer,
  type CallbackServer,
} from "../support/browser.js";
import { UserStore } from "../../src/oauth/users.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { freePort } from "../support/redis.js";

const USER = { username: "ada", password: "correct horse battery" };
/** The redirect URIs VS Code registers (docs/clients.md#vs-code). */
const VSCODE_REDIRECTS = [
  "https://insiders.vscode.dev/redirect",
  "https://vscode.dev/redirect",
  "http://127.0.0.1/",
  "http://127.0.0.1:33418/",
];

/** An OAuthClientProvider with VS Code's registration and its exact RFC 9728 §3.3 resource check. */
class VsCodeLikeProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier: string | undefined;
  authorizationUrl: URL | undefined;
  readonly resourcesChecked: Array<[string, string | undefined]> = [];

  constructor(readonly redirectUrl: string) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Visual Studio Code",
      redirect_uris: VSCODE_REDIRECTS,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  /** VS Code refuses metadata whose `resource` is not the server URL it was given, string for string. */
  validateResourceURL(serverUrl: string | URL, resource?: string): Promise<URL | undefined> {
    this.resourcesChecked.push([String(serverUrl), resource]);
    if (resource !== String(serverUrl))
      throw new Error(
        `Protected Resource Metadata resource "${resource}" does not match MCP server resolved resource "${String(serverUrl)}"`,
      );
    return Promise.resolve(new URL(resource));
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.information = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    assert.ok(this.verifier, "the SDK asked for a code verifier it never saved");
    return this.verifier;
  }
}

/** The backend of the tenant's http tool: echoes its arguments. */
function startEcho(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () =>
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(Buffer.concat(chunks).toString() || "{}"),
    );
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const clientInfo = { name: "vscode-like", version: "1.0.0" };
let browser: Browser;
let callback: CallbackServer;
let echo: Server;
let portico: RunningPortico;
let issuer: string;

before(async () => {
  browser = await launchBrowser();
  // VS Code's loopback redirect is "/" on whatever port it got (33418 when free).
  callback = await startCallbackServer("/");
  echo = await startEcho();
  const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo`;
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  portico = await startPortico({
    tenants: [
      {
        id: "acme",
        auth: "oauth",
        providers: [{ id: "echo", kind: "http", tools: [{ name: "echo", url: echoUrl }] }],
      },
    ],
    redis: true,
    env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer },
  });
  await new UserStore(portico.store, portico.keys).create("acme", USER);
});
after(async () => {
  await browser?.close();
  await portico?.close();
  await callback?.close();
  echo?.close();
});

it("VS Code's flow: slash URL, exact resource check, DCR, ephemeral loopback port, browser sign-in, tool call", async () => {
  const mcpUrl = `${issuer}/mcp/acme/`;
  const provider = new VsCodeLikeProvider(callback.redirectUri);
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await assert.rejects(new Client(clientInfo).connect(first), UnauthorizedError);
  assert.deepEqual(provider.resourcesChecked, [[mcpUrl, mcpUrl]], "the metadata names the URL as written");
  const registered = provider.information as { client_id: string; redirect_uris?: string[] };
  assert.deepEqual(registered.redirect_uris, VSCODE_REDIRECTS);

  const url = provider.authorizationUrl!;
  assert.equal(url.searchParams.get("resource"), mcpUrl);
  assert.equal(url.searchParams.get("redirect_uri"), callback.redirectUri);
  assert.notEqual(new URL(callback.redirectUri).port, "33418", "a port it did not register");
  const { redirect, consented } = await signInAndConsent(browser, url, {
    ...USER,
    redirectPrefix: callback.redirectUri,
  });
  assert.ok(consented);
  assert.equal(callback.received.length, 1, "the browser reached VS Code's loopback listener");
  assert.equal(redirect.searchParams.get("iss"), issuer);
  await first.finishAuth(redirect.searchParams.get("code")!);
  await first.close();

  for (const server of [mcpUrl, `${issuer}/mcp/acme`]) {
    const transport = new StreamableHTTPClientTransport(new URL(server), {
      authProvider: server === mcpUrl ? provider : tokenOnly(provider),
    });
    const client = new Client(clientInfo);
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["echo"],
    );
    const result = await client.callTool({ name: "echo", arguments: { said: server } });
    assert.deepEqual(result.structuredContent, { said: server }, server);
    await client.close();
  }
});

/** The same tokens without the slash-URL resource check, for the slash-less URL. */
function tokenOnly(provider: VsCodeLikeProvider): OAuthClientProvider {
  return {
    redirectUrl: provider.redirectUrl,
    clientMetadata: provider.clientMetadata,
    clientInformation: () => provider.information,
    tokens: () => provider.saved,
    saveTokens: (tokens) => void (provider.saved = tokens),
    redirectToAuthorization: () => assert.fail("no second sign-in: the token covers both spellings"),
    saveCodeVerifier: () => undefined,
    codeVerifier: () => assert.fail("no second sign-in"),
  };
}
