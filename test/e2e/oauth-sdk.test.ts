// The official MCP SDK client's own OAuth support against Portico, with a real browser at the
// login and consent pages: the SDK finds the protected resource metadata and the authorization
// server metadata, registers (RFC 7591 dynamic registration, or a Client ID Metadata Document
// served over https), sends the user agent to the authorization endpoint, where headless
// Chromium signs in and allows; the browser lands on the client's loopback redirect URI, the SDK
// exchanges the code, and the client lists and calls tools. Then its access token is revoked, and
// the SDK's refresh path (401 → refresh_token grant → retry) keeps the client working.
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser } from "playwright-core";
import type { TenantConfig } from "../../src/records/tenant.js";
import { UserStore } from "../../src/oauth/users.js";
import {
  launchBrowser,
  signInAndConsent,
  startCallbackServer,
  type CallbackServer,
} from "../support/browser.js";
import { startPortico, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { freePort, getTestRedis, uniquePrefix } from "../support/redis.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const USER = { username: "ada", password: "correct horse battery" };

/** An OAuthClientProvider that keeps everything in memory, as a CLI host would in a file. */
class MemoryProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier: string | undefined;
  authorizationUrl: URL | undefined;
  readonly tokenHistory: OAuthTokens[] = [];

  constructor(
    private readonly redirect: string,
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Portico SDK e2e",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
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
    this.tokenHistory.push(tokens);
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

/** The backend of the tenant's http tool. */
function startWeather(): Promise<Server> {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const args = JSON.parse(Buffer.concat(chunks).toString() || "{}") as { city?: string };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ city: args.city ?? "?", celsius: 21 }));
    });
  });
  return new Promise((resolveServer) => server.listen(0, "127.0.0.1", () => resolveServer(server)));
}

function acmeTenant(weatherUrl: string): TenantConfig {
  return {
    id: "acme",
    auth: "oauth",
    providers: [
      {
        id: "docs",
        kind: "static",
        resources: [{ uri: "docs://hello", name: "hello", mimeType: "text/plain", text: "hello" }],
      },
      { id: "wx", kind: "http", tools: [{ name: "get_weather", url: `${weatherUrl}/weather` }] },
    ],
  };
}

const clientInfo = { name: "portico-sdk-e2e", version: "1.0.0" };

/**
 * The SDK's authorization code flow, start to finish: the first connect is refused with
 * UnauthorizedError after the SDK registered and asked to redirect; the browser signs in and
 * allows; finishAuth exchanges the code; a second connect succeeds.
 */
async function authorizeAndConnect(
  browser: Browser,
  callback: CallbackServer,
  provider: MemoryProvider,
  mcpUrl: string,
  issuer: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; consented: boolean }> {
  const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await assert.rejects(new Client(clientInfo).connect(first), UnauthorizedError);
  const url = provider.authorizationUrl;
  assert.ok(url, "the SDK did not send the user agent to the authorization endpoint");
  assert.equal(url.origin + url.pathname, `${issuer}/oauth/authorize`);
  assert.equal(url.searchParams.get("resource"), mcpUrl, "RFC 8707 resource is the tenant's MCP URL");
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.equal(url.searchParams.get("redirect_uri"), callback.redirectUri);

  const before = callback.received.length;
  const { redirect, consented } = await signInAndConsent(browser, url, {
    ...USER,
    redirectPrefix: callback.redirectUri,
  });
  assert.equal(callback.received.length, before + 1, "the browser reached the loopback redirect URI");
  assert.equal(callback.received.at(-1)?.href, redirect.href);
  assert.equal(redirect.searchParams.get("error"), null, redirect.href);
  assert.equal(redirect.searchParams.get("iss"), issuer, "RFC 9207 iss in the authorization response");
  const code = redirect.searchParams.get("code");
  assert.ok(code, `no code in ${redirect.href}`);
  await first.finishAuth(code);
  await first.close();
  assert.ok(provider.saved?.access_token);
  assert.ok(provider.saved.refresh_token, "a refresh token comes with the access token");

  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  const client = new Client(clientInfo);
  await client.connect(transport);
  return { client, transport, consented };
}

/** Lists and calls tools, reads a resource. */
async function useTools(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ["get_weather"],
  );
  const result = await client.callTool({ name: "get_weather", arguments: { city: "Rome" } });
  assert.deepEqual(result.structuredContent, { city: "Rome", celsius: 21 });
  const read = await client.readResource({ uri: "docs://hello" });
  assert.deepEqual(read.contents, [{ uri: "docs://hello", mimeType: "text/plain", text: "hello" }]);
}

/** RFC 7009 revocation of the current access token, as the client itself (a public client). */
async function revokeAccessToken(issuer: string, provider: MemoryProvider): Promise<string> {
  const token = provider.saved!.access_token;
  const res = await fetch(`${issuer}/oauth/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, client_id: provider.information!.client_id }),
  });
  assert.equal(res.status, 200);
  return token;
}

/** A revoked access token makes the next request 401; the SDK refreshes and retries by itself. */
async function survivesRefresh(
  client: Client,
  provider: MemoryProvider,
  issuer: string,
  mcpUrl: string,
): Promise<void> {
  const old = provider.saved!;
  await revokeAccessToken(issuer, provider);
  const direct = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${old.access_token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(direct.status, 401, "the revoked access token is refused");
  await direct.body?.cancel();

  await useTools(client);
  const now = provider.saved!;
  assert.notEqual(now.access_token, old.access_token, "the SDK refreshed the access token");
  assert.ok(now.refresh_token);
  assert.notEqual(now.refresh_token, old.refresh_token, "refresh tokens rotate");
}

describe("MCP SDK client OAuth against Portico (headless Chromium)", () => {
  let browser: Browser;
  let callback: CallbackServer;
  let weather: Server;
  let portico: RunningPortico;
  let issuer: string;
  let redisPrefix: string;

  before(async () => {
    browser = await launchBrowser();
    callback = await startCallbackServer();
    weather = await startWeather();
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    redisPrefix = uniquePrefix();
    portico = await startPortico({
      tenants: [acmeTenant(`http://127.0.0.1:${(weather.address() as AddressInfo).port}`)],
      redisPrefix,
      env: { PORT: String(port), PORTICO_PUBLIC_URL: issuer },
    });
    await new UserStore(portico.store, portico.keys).create("acme", USER);
  });
  after(async () => {
    await browser?.close();
    await portico?.close();
    await callback?.close();
    weather?.close();
  });

  it("dynamic registration: discovery, browser sign-in and consent, tools, then a forced refresh", async () => {
    const provider = new MemoryProvider(callback.redirectUri);
    const mcpUrl = portico.mcpUrl("acme");
    const { client, consented } = await authorizeAndConnect(browser, callback, provider, mcpUrl, issuer);
    assert.ok(consented, "a new client gets the consent page");
    const info = provider.information as { client_id: string; client_secret?: string };
    assert.match(info.client_id, /^[A-Za-z0-9_-]{22}$/, "registered dynamically");
    assert.equal(info.client_secret, undefined, "a public client");
    await useTools(client);
    await survivesRefresh(client, provider, issuer, mcpUrl);
    await client.close();

    // The same client signing in again: consent is remembered, the browser goes straight back.
    const again = new MemoryProvider(callback.redirectUri);
    again.information = provider.information;
    const second = await authorizeAndConnect(browser, callback, again, mcpUrl, issuer);
    assert.equal(second.consented, false, "consent already given is not asked again");
    await useTools(second.client);
    await second.client.close();
  });

  // Portico's metadata fetcher takes no CA from its configuration (only public addresses and
  // Node's trust store), so this case runs a second replica as its own process, trusting the
  // test CA through NODE_EXTRA_CA_CERTS and allowing loopback through
  // PORTICO_CLIENT_METADATA_ALLOW_CIDRS, sharing the first one's Redis (tenant, user, keys).
  it("Client ID Metadata Document: an https client_id URL instead of registration", async () => {
    const cimd = await startMetadataServer((origin) => ({
      client_id: `${origin}/clients/sdk-e2e.json`,
      client_name: "Portico SDK e2e (CIMD)",
      redirect_uris: [callback.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }));
    const replica = await startReplica({
      redisPrefix,
      caFile: cimd.caFile,
      tenants: [acmeTenant(`http://127.0.0.1:${(weather.address() as AddressInfo).port}`)],
    });
    try {
      const clientId = `${cimd.origin}/clients/sdk-e2e.json`;
      const provider = new MemoryProvider(callback.redirectUri, clientId);
      const mcpUrl = `${replica.url}/mcp/acme`;
      const { client, consented } = await authorizeAndConnect(
        browser,
        callback,
        provider,
        mcpUrl,
        replica.url,
      );
      assert.ok(consented);
      assert.equal(provider.information?.client_id, clientId, "the SDK used the URL as its client_id");
      assert.ok((cimd.hits.get("/clients/sdk-e2e.json") ?? 0) >= 1, "Portico fetched the document");
      await useTools(client);
      await survivesRefresh(client, provider, replica.url, mcpUrl);
      await client.close();
    } catch (err) {
      throw new Error(`${String(err)}\nreplica log:\n${replica.log()}`, { cause: err });
    } finally {
      await replica.close();
      await cimd.close();
    }
  });
});

interface MetadataServer {
  readonly origin: string;
  readonly caFile: string;
  readonly hits: Map<string, number>;
  close(): Promise<void>;
}

/** An https server on 127.0.0.1 with a fresh self-signed certificate, serving one metadata document. */
async function startMetadataServer(
  doc: (origin: string) => Record<string, unknown>,
): Promise<MetadataServer> {
  const dir = mkdtempSync(join(tmpdir(), "portico-sdk-cimd-"));
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  try {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...["-keyout", key, "-out", cert, "-days", "1"],
        ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      ],
      { stdio: "pipe" },
    );
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`this test needs openssl on PATH for its certificate (apt-get install openssl): ${err}`, {
      cause: err,
    });
  }
  const hits = new Map<string, number>();
  let origin = "";
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path !== "/clients/sdk-e2e.json") return void res.writeHead(404).end();
    res
      .writeHead(200, { "content-type": "application/json", "cache-control": "max-age=60" })
      .end(JSON.stringify(doc(origin)));
  });
  await new Promise<void>((resolveListen) => server.listen(0, "127.0.0.1", resolveListen));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    caFile: cert,
    hits,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolveClose();
        });
      }),
  };
}

interface Replica {
  readonly url: string;
  log(): string;
  close(): Promise<void>;
}

/** `node --import tsx src/main.ts` on a free port, as another replica of the same deployment. */
async function startReplica(opts: {
  redisPrefix: string;
  caFile: string;
  tenants: readonly TenantConfig[];
}): Promise<Replica> {
  const dir = mkdtempSync(join(tmpdir(), "portico-replica-"));
  const configFile = join(dir, "portico.json");
  writeFileSync(configFile, JSON.stringify({ tenants: opts.tenants }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = "";
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      PORTICO_PUBLIC_URL: url,
      PORTICO_CONFIG: configFile,
      PORTICO_SECRET_KEY: TEST_SECRET,
      PORTICO_REDIS_URL: (await getTestRedis()).url,
      PORTICO_REDIS_KEY_PREFIX: opts.redisPrefix,
      PORTICO_CLIENT_METADATA_ALLOW_CIDRS: "127.0.0.0/8",
      PORTICO_LOG_LEVEL: "warn",
      NODE_EXTRA_CA_CERTS: opts.caFile,
    },
  });
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const close = () =>
    new Promise<void>((resolveClose) => {
      rmSync(dir, { recursive: true, force: true });
      if (child.exitCode !== null || child.signalCode !== null) return resolveClose();
      child.once("exit", () => resolveClose());
      child.kill("SIGTERM");
    });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the replica exited (${child.exitCode}):\n${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`the replica did not become ready within 20 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, log: () => output, close };
}
