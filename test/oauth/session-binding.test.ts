// A session id is never a credential (security best practices, "session hijacking"): a session
// of an oauth tenant answers only to tokens of the user and client that opened it, and a token
// lacking a scope gets a step-up challenge.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { TestOAuthClient } from "../support/oauth.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";
import { MCP_HEADERS } from "../support/rpc.js";

let portico: RunningPortico;
let issuer: string;
let oauthClient: TestOAuthClient;
const ada = { username: "ada", password: "correct horse battery" };
const bob = { username: "bob", password: "another good password" };

before(async () => {
  ({ portico, issuer } = await startIssuer({ tenant: "acme", users: [ada, bob] }));
  oauthClient = await TestOAuthClient.register(issuer);
});
after(() => portico.close());

function rpc(token: string, message: object, sid?: string) {
  return fetch(`${issuer}/mcp/acme`, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, ...(sid ? { "mcp-session-id": sid } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
}

const initialize = {
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

it("another user's token on an existing session gets 404; the owner's works", async () => {
  const adaTokens = await oauthClient.tokens("acme", ada);
  const bobTokens = await oauthClient.tokens("acme", bob);
  const init = await rpc(adaTokens.access_token, initialize);
  assert.equal(init.status, 200);
  const sid = init.headers.get("mcp-session-id")!;
  assert.equal((await rpc(adaTokens.access_token, { id: 1, method: "ping" }, sid)).status, 200);
  assert.equal((await rpc(bobTokens.access_token, { id: 2, method: "ping" }, sid)).status, 404);
  const get = await fetch(`${issuer}/mcp/acme`, {
    headers: {
      accept: "text/event-stream",
      authorization: `Bearer ${bobTokens.access_token}`,
      "mcp-session-id": sid,
    },
  });
  assert.equal(get.status, 404);
  const del = await fetch(`${issuer}/mcp/acme`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${bobTokens.access_token}`, "mcp-session-id": sid },
  });
  assert.equal(del.status, 404);
  assert.equal(
    (await rpc(adaTokens.access_token, { id: 3, method: "ping" }, sid)).status,
    200,
    "still Ada's",
  );
});

it("a session id without a token is 401, never a way in", async () => {
  const tokens = await oauthClient.tokens("acme", ada);
  const sid = (await rpc(tokens.access_token, initialize)).headers.get("mcp-session-id")!;
  const res = await fetch(`${issuer}/mcp/acme`, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sid },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  assert.equal(res.status, 401);
});

it("a read-only token calling a tool gets 403 with an insufficient_scope step-up", async () => {
  const tokens = await oauthClient.tokens("acme", ada, "mcp:read");
  const init = await rpc(tokens.access_token, initialize);
  const sid = init.headers.get("mcp-session-id")!;
  assert.equal((await rpc(tokens.access_token, { id: 1, method: "tools/list" }, sid)).status, 200);
  const call = await rpc(
    tokens.access_token,
    { id: 2, method: "tools/call", params: { name: "x", arguments: {} } },
    sid,
  );
  assert.equal(call.status, 403);
  const challenge = call.headers.get("www-authenticate")!;
  assert.match(challenge, /error="insufficient_scope"/);
  assert.match(challenge, /scope="mcp:read mcp:tools"/);
  assert.match(challenge, /resource_metadata="/);
});
