// An MCP client that signs in to an OAuth tenant with the official TypeScript SDK v1
// (docs/clients.md "TypeScript SDK"): a loopback redirect (RFC 8252), the client registration and
// tokens kept in a JSON file, the sign-in URL printed (and opened with $BROWSER when set), then
// the tenant's tools listed. The next run reuses the saved tokens, refreshing them when needed.
//
//   npx tsx docs/examples/oauth-client.ts http://localhost:8080/mcp/acme [tokens.json]
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

const [serverUrl, storePath = join(homedir(), ".config", "mcp-example", "tokens.json")] =
  process.argv.slice(2);
if (!serverUrl) throw new Error("usage: oauth-client.ts <mcp-url> [tokens.json]");

/** What is kept per server URL: the client registration and the tokens. */
interface Saved {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
}
const load = (): Record<string, Saved> => {
  try {
    return JSON.parse(readFileSync(storePath, "utf8")) as Record<string, Saved>;
  } catch {
    return {};
  }
};
const save = (change: Saved) => {
  const all = load();
  all[serverUrl] = { ...all[serverUrl], ...change };
  mkdirSync(dirname(storePath), { recursive: true, mode: 0o700 });
  writeFileSync(storePath, JSON.stringify(all, null, 2), { mode: 0o600 });
};

// The redirect URI: this process on 127.0.0.1, any free port; the browser brings the code here.
const state = randomBytes(16).toString("base64url");
let gotCode!: (code: string) => void;
let failed!: (err: Error) => void;
const code = new Promise<string>((resolve, reject) => ((gotCode = resolve), (failed = reject)));
const callback = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (url.pathname !== "/callback") return void res.writeHead(404).end();
  res.end("Signed in. You can close this tab.");
  const given = url.searchParams.get("code");
  if (url.searchParams.get("state") !== state || !given)
    failed(new Error(`sign-in failed: ${url.searchParams.get("error") ?? "bad state"}`));
  else gotCode(given);
});
await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;

let verifier = "";
const provider: OAuthClientProvider = {
  redirectUrl,
  clientMetadata: {
    client_name: "MCP OAuth example",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  },
  state: () => state,
  clientInformation: () => load()[serverUrl]?.client,
  saveClientInformation: (client) => save({ client }),
  tokens: () => load()[serverUrl]?.tokens,
  saveTokens: (tokens) => save({ tokens }),
  saveCodeVerifier: (v) => void (verifier = v),
  codeVerifier: () => verifier,
  redirectToAuthorization: (url) => {
    console.error(`Sign in in your browser: ${url.href}`);
    if (process.env.BROWSER)
      spawn(process.env.BROWSER, [url.href], { stdio: "ignore" }).on("error", () => {});
  },
};

const connect = () => {
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  return { transport, client: new Client({ name: "oauth-example", version: "1.0.0" }) };
};
let { transport, client } = connect();
try {
  await client.connect(transport);
} catch (err) {
  if (!(err instanceof UnauthorizedError)) throw err;
  await transport.finishAuth(await code); // the code the browser brought back
  ({ transport, client } = connect());
  await client.connect(transport);
}
callback.closeAllConnections();
callback.close();

for (const tool of (await client.listTools()).tools) console.log(tool.name);
await client.close();
