// Per-user auth on an `openapi` provider (docs/openapi.md, docs/upstream-auth.md): a real REST
// service (Fastify, its document written by @fastify/swagger) behind `openapi` providers of one
// oauth tenant, one by token exchange (RFC 8693, at the STS of test/support/sts.ts) and one by
// connected accounts (the connect pages in Chromium, oidc-provider as the API's authorization
// server). The service records every request: each user's calls carry that user's own upstream
// token, never the MCP client's own; a user who has not connected gets the connect tool and a link.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt, jwtVerify } from "jose";
import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, Page } from "playwright-core";
import {
  PREREGISTERED,
  signInUpstream,
  startProtectedUpstream,
  UPSTREAM_SCOPE,
  type ProtectedUpstream,
} from "../fixtures/protected-upstream.js";
import { startRestService, type RestService, type SeenRequest } from "../fixtures/rest-service.js";
import { ADMIN_TOKEN } from "../support/admin.js";
import { launchBrowser } from "../support/browser.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { TestOAuthClient } from "../support/oauth.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";
import { startSts, STS_CLIENT, UPSTREAM_AUDIENCE, type Sts } from "../support/sts.js";

const TENANT = "acme";
const USERS = [
  { username: "ada", password: "ada-password-123" },
  { username: "bob", password: "bob-password-123" },
  { username: "cy", password: "cy-password-1234" },
];

let rest: RestService;
let sts: Sts;
let upstream: ProtectedUpstream;
let portico: RunningPortico;
let browser: Browser;
const tokens: string[] = [];
const subs: string[] = [];
const clients: RecordingClient[] = [];

before(async () => {
  rest = await startRestService();
  sts = await startSts();
  const started = await startIssuer({
    tenant: TENANT,
    users: USERS,
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  portico = started.portico;
  sts.issuer = started.issuer;
  // The REST service is a resource server of oidc-provider: it issues tokens for its URL.
  upstream = await startProtectedUpstream(started.issuer, [rest.url]);
  await portico.registry.seed({
    id: TENANT,
    auth: "oauth",
    providers: [
      {
        id: "pets",
        kind: "openapi",
        prefix: "pets",
        document: rest.document,
        baseUrl: rest.url,
        auth: {
          type: "token_exchange",
          tokenUrl: sts.tokenUrl,
          audience: UPSTREAM_AUDIENCE,
          clientId: STS_CLIENT.id,
          clientSecret: STS_CLIENT.secret,
        },
      },
      {
        id: "vet",
        kind: "openapi",
        prefix: "vet",
        document: rest.document,
        baseUrl: rest.url,
        auth: { type: "user_oauth", issuer: upstream.issuer, scope: UPSTREAM_SCOPE, ...PREREGISTERED },
      },
    ],
  });
  const oauth = await TestOAuthClient.register(started.issuer);
  for (const user of USERS) {
    const token = (await oauth.tokens(TENANT, user)).access_token;
    tokens.push(token);
    subs.push(decodeJwt(token).sub!);
  }
  sts.refuse.add(subs[2]!);
  // Ada's client takes no URL-mode elicitation (she is given the link as text), Bob's does (-32042).
  for (const [i, urlMode] of [
    [0, false],
    [1, true],
    [2, false],
  ] as const) {
    const client = await connectClient(portico.mcpUrl(TENANT), {
      headers: { authorization: `Bearer ${tokens[i]}` },
      clientCapabilities: urlMode ? { elicitation: { url: {} } } : { elicitation: {} },
    });
    clients.push(client);
    // Notifications outside a call go on its standalone stream: open before anything is asked.
    await client.streamOpen();
  }
  browser = await launchBrowser();
});

after(async () => {
  await Promise.allSettled(clients.map((c) => c.client.close()));
  await browser?.close();
  await portico?.close();
  await upstream?.close();
  await rest?.close();
  sts?.close();
});

const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? "";

/** The document's operations, as @fastify/swagger wrote them: the tools an `openapi` provider lists. */
const operations = () =>
  Object.values(rest.document.paths as Record<string, Record<string, { operationId: string }>>)
    .flatMap((path) => Object.values(path).map((op) => op.operationId))
    .sort();

/** The connect tools of the two connected-accounts providers. */
const CONNECT_TOOLS = ["vet__connect_vet"];

const toolNames = async (i: number) => (await clients[i]!.client.listTools()).tools.map((t) => t.name).sort();

/** Calls `<prefix>__getPet` for a pet id no other call uses: the request the REST service got for it. */
async function getPet(i: number, prefix: string, petId: string): Promise<SeenRequest> {
  const result = await clients[i]!.client.callTool({ name: `${prefix}__getPet`, arguments: { petId } });
  assert.equal(result.isError, undefined, text(result));
  assert.deepEqual(result.structuredContent, { id: petId, name: `pet ${petId}`, tags: [] });
  const seen = rest.seen.filter((s) => s.url === `/pets/${petId}`);
  assert.equal(seen.length, 1, `one request for pet ${petId} reached the REST service`);
  return seen[0]!;
}

/** The bearer token of a request the REST service got. */
function bearerOf(seen: SeenRequest): string {
  const match = /^Bearer (\S+)$/.exec(String(seen.headers.authorization ?? ""));
  assert.ok(match, `a bearer token reached the REST service: ${String(seen.headers.authorization)}`);
  return match[1]!;
}

/** Opens a connect link in a fresh browser, signs in to Portico as user `i`, and checks it is the connect page. */
async function connectPage(link: string, i: number, provider: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(link);
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.getByLabel("Username").fill(USERS[i]!.username);
  await page.getByLabel("Password").fill(USERS[i]!.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  // The connect page, or what Portico says instead (its page's one heading).
  const heading = page.getByRole("heading", { level: 1 }).filter({ hasNotText: /^Sign in$/ });
  await heading.waitFor();
  assert.equal(await heading.textContent(), `Connect your ${provider} account`, await page.innerText("body"));
  return page;
}

/**
 * Connects user `i`'s vet account through a connect link: Portico's own sign-in, the connect
 * page's button, the API's authorization server as `account`, and back at "Connected".
 */
async function openConnectLink(link: string, i: number, account: string): Promise<void> {
  const page = await connectPage(link, i, "vet");
  try {
    await page.getByRole("button", { name: "Connect vet" }).click();
    await signInUpstream(page, upstream.issuer, account);
    await page.getByRole("heading", { name: "Connected" }).waitFor();
  } finally {
    await page.context().close();
  }
}

/** Lists user `i`'s tools until they are `expected` (each provider answers a list on its own). */
async function untilListed(i: number, expected: string[]): Promise<string[]> {
  let names: string[] = [];
  for (let tries = 0; tries < 100; tries++) {
    names = await toolNames(i);
    if (JSON.stringify(names) === JSON.stringify(expected)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return names;
}

describe("an openapi provider by token exchange (RFC 8693)", () => {
  it("lists the document's operations to each user the STS lets in", async () => {
    const expected = [...operations().map((op) => `pets__${op}`), ...CONNECT_TOOLS].sort();
    assert.equal(operations().length, 8, "the REST service's document has its eight operations");
    assert.deepEqual(await toolNames(0), expected, "ada's tools");
    assert.deepEqual(await toolNames(1), expected, "bob's tools");
  });

  it("each user's call reaches the REST service with their own exchanged token, never the client's", async () => {
    const ada = bearerOf(await getPet(0, "pets", "tx-ada"));
    const bob = bearerOf(await getPet(1, "pets", "tx-bob"));
    assert.notEqual(ada, bob, "each user has their own token");
    for (const [token, i] of [
      [ada, 0],
      [bob, 1],
    ] as const) {
      assert.notEqual(token, tokens[i], "not the MCP client's own token");
      // Issued by the STS (its signature, its audience) for this user.
      const { payload } = await jwtVerify(token, sts.publicKey, {
        issuer: new URL(sts.tokenUrl).origin,
        audience: UPSTREAM_AUDIENCE,
      });
      assert.equal(payload.sub, subs[i], `the exchanged token is ${USERS[i]!.username}'s`);
    }
    const granted = sts.seen.filter((s) => !s.refused).map((s) => s.sub);
    assert.deepEqual([...new Set(granted)].sort(), [subs[0], subs[1]].sort(), "the STS exchanged for both");
  });

  it("a user the STS refuses sees the connect tool, whose call says why, and not the operations", async () => {
    const cy = clients[2]!.client;
    assert.deepEqual(await toolNames(2), ["pets__connect_pets", ...CONNECT_TOOLS].sort());
    const before = rest.seen.length;
    const result = await cy.callTool({ name: "pets__connect_pets", arguments: {} });
    assert.equal(result.isError, true, "the connect tool's call is an error");
    assert.match(
      text(result),
      /could not obtain an upstream access token: the token endpoint answered HTTP 400 \(invalid_grant\)/,
    );
    assert.doesNotMatch(text(result), /sts-client-secret/, "the STS client secret is not shown");
    await assert.rejects(
      cy.callTool({ name: "pets__getPet", arguments: { petId: "tx-cy" } }),
      (err: McpError) => err.code === -32602 && /Unknown tool/.test(err.message),
      "an operation is not cy's to call",
    );
    assert.equal(rest.seen.length, before, "nothing reached the REST service for cy");
  });
});

describe("an openapi provider by connected accounts (user_oauth)", () => {
  it("a user who has not connected lists the connect tool instead of the operations", async () => {
    for (const i of [0, 1]) {
      const listed = (await clients[i]!.client.listTools()).tools.filter((t) => t.name.startsWith("vet__"));
      assert.deepEqual(
        listed.map((t) => [t.name, t.description]),
        [["vet__connect_vet", "Connect your vet account to use its tools"]],
        `${USERS[i]!.username} sees only the connect tool of vet`,
      );
    }
    const before = rest.seen.length;
    await assert.rejects(
      clients[0]!.client.callTool({ name: "vet__getPet", arguments: { petId: "oa-early" } }),
      (err: McpError) => err.code === -32602 && /Unknown tool/.test(err.message),
      "an operation is not callable before connecting",
    );
    assert.equal(rest.seen.length, before, "nothing reached the REST service");
  });

  it("without URL-mode elicitation the connect tool answers the link; once connected, calls carry the user's token", async () => {
    const ada = clients[0]!;
    const result = await ada.client.callTool({ name: "vet__connect_vet", arguments: {} });
    assert.equal(result.isError, true, "not connected yet: an error result");
    const match = /^Connect your vet account to use its tools: open (\S+)/.exec(text(result));
    assert.ok(match, `the result gives the link: ${text(result)}`);
    const link = match[1]!;
    assert.ok(link.startsWith(`${portico.url}/accounts/connect?link=`), link);

    await openConnectLink(link, 0, "ada-upstream");
    await ada.waitFor("notifications/tools/list_changed");
    const expected = operations()
      .flatMap((op) => [`pets__${op}`, `vet__${op}`])
      .sort();
    assert.deepEqual(await untilListed(0, expected), expected, "ada lists vet's operations");

    const token = bearerOf(await getPet(0, "vet", "oa-ada"));
    assert.equal(
      token,
      await portico.accounts.tokenFor(TENANT, subs[0]!, "vet"),
      "the token of ada's connected account",
    );
    const claims = decodeJwt(token);
    assert.equal(claims.sub, "ada-upstream", "issued to ada's account at the API's server");
    assert.equal(claims.aud, rest.url, "for the REST service (RFC 8707 resource)");
  });

  it("with URL-mode elicitation: -32042, then elicitation/complete, and bob's own token", async () => {
    const bob = clients[1]!;
    const err = await bob.client.callTool({ name: "vet__connect_vet", arguments: {} }).then(
      () => assert.fail("expected -32042"),
      (e: McpError) => e,
    );
    assert.equal(err.code, -32042, err.message);
    const [elicitation] = (err.data as { elicitations: Array<Record<string, string>> }).elicitations;
    assert.equal(elicitation!.mode, "url");
    assert.ok(elicitation!.url!.startsWith(`${portico.url}/accounts/connect?link=`), elicitation!.url);

    await openConnectLink(elicitation!.url!, 1, "bob-upstream");
    const complete = await bob.waitFor("notifications/elicitation/complete");
    assert.deepEqual(complete.params, { elicitationId: elicitation!.elicitationId });
    const expected = operations()
      .flatMap((op) => [`pets__${op}`, `vet__${op}`])
      .sort();
    assert.deepEqual(await untilListed(1, expected), expected, "bob lists vet's operations");

    const token = bearerOf(await getPet(1, "vet", "oa-bob"));
    assert.equal(decodeJwt(token).sub, "bob-upstream", "issued to bob's account");
    assert.notEqual(token, await portico.accounts.tokenFor(TENANT, subs[0]!, "vet"), "not ada's token");
    // Ada, connected first, is still called as herself.
    assert.equal(decodeJwt(bearerOf(await getPet(0, "vet", "oa-ada-2"))).sub, "ada-upstream");
  });

  it("no MCP client's own token ever reached the REST service", () => {
    assert.ok(rest.seen.length > 0, "the REST service was called");
    for (const seen of rest.seen)
      for (const token of tokens)
        assert.ok(!JSON.stringify(seen.headers).includes(token), `a client's token went to ${seen.url}`);
  });

  it("refuses user_oauth on a provider calling its document's servers: users connect for a baseUrl", async () => {
    const res = await fetch(`${portico.url}/admin/v1/tenants/${TENANT}/providers`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        id: "clinic",
        kind: "openapi",
        document: { ...rest.document, servers: [{ url: rest.url }] },
        useDocumentServers: true,
        auth: { type: "user_oauth", issuer: upstream.issuer, ...PREREGISTERED },
      }),
    });
    const problem = (await res.json()) as { errors: Array<{ pointer: string; detail: string }> };
    assert.equal(res.status, 422, JSON.stringify(problem));
    assert.equal(problem.errors[0]!.pointer, "/baseUrl");
    assert.match(problem.errors[0]!.detail, /user_oauth/);
  });
});
