// Finding a per-user provider's authorization server (src/accounts/discovery.ts) against loopback
// servers: the 401's `resource_metadata` (RFC 9728 §5.1), the well-known fallback (§3), RFC 8414
// before OpenID discovery, and the hostile cases — metadata naming another resource (§3.3: refused),
// naming no server, a challenge without the parameter.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, it } from "node:test";
import { AuthorizationServers, DiscoveryError, resourceMetadataOf } from "../../src/accounts/discovery.js";
import { egressFetch } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { freePort } from "../support/redis.js";

let server: Server;
let base: string;
/** What the upstream's resource metadata says, per test. */
let prm: Record<string, unknown> = {};
/** Whether the 401 names its metadata. */
let challenge = true;

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = createServer((req, res): void => {
    const json = (body: unknown): void =>
      void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.url === "/.well-known/oauth-protected-resource/mcp") return json(prm);
    if (req.url === "/.well-known/oauth-authorization-server/as")
      return json({
        issuer: `${base}/as`,
        authorization_endpoint: `${base}/as/authorize`,
        token_endpoint: `${base}/as/token`,
      });
    if (req.url === "/mcp") {
      const header = challenge
        ? `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`
        : "Bearer";
      return void res.writeHead(401, { "www-authenticate": header }).end();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const servers = () => new AuthorizationServers(egressFetch(new EgressPolicy({})));

it("follows the 401's resource_metadata to the server's RFC 8414 metadata", async () => {
  prm = { resource: `${base}/mcp`, authorization_servers: [`${base}/as`], scopes_supported: ["read"] };
  const found = await servers().discover(`${base}/mcp`, undefined);
  assert.equal(found.as.issuer, `${base}/as`);
  assert.equal(found.resource, `${base}/mcp`);
  assert.deepEqual(found.scopesSupported, ["read"]);
});

it("falls back to the well-known metadata URL when the challenge names none", async () => {
  challenge = false;
  try {
    const found = await servers().discover(`${base}/mcp`, undefined);
    assert.equal(found.as.token_endpoint, `${base}/as/token`);
  } finally {
    challenge = true;
  }
});

it("refuses metadata naming another resource, or no server (RFC 9728 §3.3)", async () => {
  prm = { resource: "https://elsewhere.example/mcp", authorization_servers: [`${base}/as`] };
  await assert.rejects(servers().discover(`${base}/mcp`, undefined), DiscoveryError);
  prm = { resource: `${base}/mcp` };
  await assert.rejects(servers().discover(`${base}/mcp`, undefined), /names no authorization server/);
});

it("a configured issuer skips the upstream; an issuer without metadata fails", async () => {
  const found = await servers().discover("https://never.asked.example/mcp", `${base}/as`);
  assert.equal(found.resource, "https://never.asked.example/mcp");
  await assert.rejects(
    servers().discover(`${base}/mcp`, `${base}/nothing`),
    /no authorization server metadata/,
  );
});

it("reads resource_metadata only from a Bearer challenge", async () => {
  assert.equal(
    (await resourceMetadataOf(`Basic realm="x", Bearer scope="a", resource_metadata="${base}/m"`))?.href,
    `${base}/m`,
  );
  assert.equal(await resourceMetadataOf(`Basic resource_metadata="${base}/m"`), undefined);
  assert.equal(await resourceMetadataOf('Bearer resource_metadata="not a url"'), undefined);
  assert.equal(await resourceMetadataOf(null), undefined);
});
