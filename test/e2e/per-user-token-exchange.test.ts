// Token exchange end to end (docs/upstream-auth.md "Token exchange"): two users of an OAuth tenant
// reach an upstream (official SDK) through Portico, each with a token an STS issued for them in
// exchange for Portico's own signed assertion of the user; each sees their own catalog; the client's
// own token never goes upstream; a user the STS refuses gets a clear error and nobody's tools.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";
import {
  startSts,
  startSubjectUpstream,
  STS_CLIENT,
  UPSTREAM_AUDIENCE,
  startSubjectEndpoint,
  type Sts,
  type SubjectUpstream,
} from "../support/sts.js";

const TENANT = "acme";
const USERS = [
  { username: "ada", password: "ada-password-123" },
  { username: "bob", password: "bob-password-123" },
  { username: "eve", password: "eve-password-123" },
];

let sts: Sts;
let upstream: SubjectUpstream;
let endpoint: SubjectUpstream;
let portico: RunningPortico;
const clients: RecordingClient[] = [];
let issuer: string;
const tokens: string[] = [];
const subs: string[] = [];

before(async () => {
  sts = await startSts();
  upstream = await startSubjectUpstream(sts);
  endpoint = await startSubjectEndpoint(sts);
  const started = await startIssuer({ tenant: TENANT, users: USERS });
  portico = started.portico;
  sts.issuer = started.issuer;
  issuer = started.issuer;
  const auth = {
    type: "token_exchange",
    tokenUrl: sts.tokenUrl,
    audience: UPSTREAM_AUDIENCE,
    clientId: STS_CLIENT.id,
    clientSecret: STS_CLIENT.secret,
  } as const;
  await portico.registry.seed({
    id: TENANT,
    auth: "oauth",
    providers: [
      { id: "notes", kind: "mcp", url: upstream.url, auth },
      { id: "echo", kind: "http", prefix: "echo", tools: [{ name: "who", url: endpoint.url }], auth },
    ],
    servers: [
      { id: "team", providers: [{ provider: "notes", overrides: { tools: { whoami: { name: "me" } } } }] },
    ],
  });
  const oauth = await TestOAuthClient.register(started.issuer);
  for (const user of USERS) {
    const token = (await oauth.tokens(TENANT, user)).access_token;
    tokens.push(token);
    subs.push(decodeJwt(token).sub!);
  }
  sts.refuse.add(subs[2]!);
  for (const token of tokens)
    clients.push(
      await connectClient(portico.mcpUrl(TENANT), { headers: { authorization: `Bearer ${token}` } }),
    );
});

after(async () => {
  await Promise.allSettled(clients.map((c) => c.client.close()));
  await portico?.close();
  upstream?.close();
  endpoint?.close();
  endpoint?.close();
  sts?.close();
});

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? "";

describe("per-user upstream by token exchange (RFC 8693)", () => {
  it("each user reaches the upstream as themselves", async () => {
    for (const i of [0, 1]) {
      const result = await clients[i]!.client.callTool({ name: "whoami", arguments: {} });
      assert.equal(text(result), `subject: ${subs[i]}`);
      const http = await clients[i]!.client.callTool({ name: "echo__who", arguments: {} });
      assert.equal(text(http), JSON.stringify({ subject: subs[i] }));
    }
  });

  it("each user's catalog is their own", async () => {
    const names = async (i: number) => (await clients[i]!.client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(await names(0), [`notes_of_${subs[0]}`, "whoami", "echo__who"].sort());
    assert.deepEqual(await names(1), [`notes_of_${subs[1]}`, "whoami", "echo__who"].sort());
    // Another user's tool is not theirs to call.
    await assert.rejects(
      clients[0]!.client.callTool({ name: `notes_of_${subs[1]}`, arguments: {} }),
      (err: McpError) => err.code === -32602 && /Unknown tool/.test(err.message),
    );
  });

  it("the STS saw Portico's assertion of each user, and the upstream never saw the clients' tokens", () => {
    const granted = sts.seen.filter((s) => !s.refused);
    assert.deepEqual([...new Set(granted.map((s) => s.sub))].sort(), [subs[0], subs[1]].sort());
    for (const s of granted) {
      assert.equal(s.iss, sts.issuer);
      assert.equal(s.aud, sts.tokenUrl);
      assert.equal(s.audience, UPSTREAM_AUDIENCE);
    }
    for (const token of tokens)
      for (const peer of [upstream, endpoint])
        assert.ok(!peer.authorizations.some((a) => a.includes(token)), "a client's token went upstream");
    assert.ok(upstream.authorizations.every((a) => a.startsWith("Bearer ")));
  });

  it("a user the STS refuses sees only the connect tool, whose call says why, and nobody's tools", async () => {
    const eve = clients[2]!.client;
    const listed = (await eve.listTools()).tools;
    assert.deepEqual(
      listed.map((t) => t.name),
      ["connect_notes", "echo__connect_echo"],
    );
    assert.equal(listed[0]!.description, "Connect your notes account to use its tools");
    const result = await eve.callTool({ name: "connect_notes", arguments: {} });
    assert.equal(result.isError, true);
    assert.match(
      text(result),
      /could not obtain an upstream access token: the token endpoint answered HTTP 400 \(invalid_grant\)/,
    );
    assert.doesNotMatch(text(result), /no access for this subject|sts-client-secret/);
    await assert.rejects(eve.callTool({ name: "whoami", arguments: {} }), /Unknown tool/);
    assert.ok(sts.seen.some((s) => s.sub === subs[2] && s.refused === "user refused"));
  });

  it("once the STS lets the user in, calling the connect tool brings their tools (list_changed)", async () => {
    sts.refuse.delete(subs[2]!);
    const eve = clients[2]!;
    for (const name of ["connect_notes", "echo__connect_echo"]) {
      const result = await eve.client.callTool({ name, arguments: {} });
      assert.equal(result.isError, undefined, text(result));
    }
    await eve.waitFor("notifications/tools/list_changed");
    // Each provider lists eve's tools on its own: the first list_changed may come before the other's.
    const expected = [`notes_of_${subs[2]}`, "whoami", "echo__who"].sort();
    let names: string[] = [];
    for (let i = 0; i < 100; i++) {
      names = (await eve.client.listTools()).tools.map((t) => t.name).sort();
      if (JSON.stringify(names) === JSON.stringify(expected)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(names, expected);
    assert.equal(text(await eve.client.callTool({ name: "whoami", arguments: {} })), `subject: ${subs[2]}`);
  });

  it("a token the upstream refuses is exchanged anew and the call retried once", async () => {
    const exchanges = () => sts.seen.filter((s) => s.sub === subs[0] && !s.refused).length;
    const before = exchanges();
    upstream.rejectOnce!.add(subs[0]!);
    const result = await clients[0]!.client.callTool({ name: "whoami", arguments: {} });
    assert.equal(text(result), `subject: ${subs[0]}`);
    assert.equal(exchanges(), before + 1);
  });

  it("a virtual server shows each user their own view of a per-user provider", async () => {
    const oauth = await TestOAuthClient.register(issuer);
    const token = (await oauth.tokens(`${TENANT}/team`, USERS[1]!)).access_token;
    const bob = await connectClient(`${portico.mcpUrl(TENANT)}/team`, {
      headers: { authorization: `Bearer ${token}` },
    });
    clients.push(bob);
    const names = (await bob.client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, ["me", `notes_of_${subs[1]}`].sort());
    assert.equal(text(await bob.client.callTool({ name: "me", arguments: {} })), `subject: ${subs[1]}`);
  });
});
