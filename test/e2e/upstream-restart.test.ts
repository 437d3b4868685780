// Healing (docs/upstream-mcp.md): an upstream restarted while client sessions are open forgets
// Portico's upstream sessions and answers 404, or, like server-everything, HTTP 400 "Bad Request:
// No valid session ID provided" (test/fixtures/restartable-server.ts reproduces both). Open
// sessions of both eras, on two replicas, keep working with their log level and subscriptions; the
// provider's health follows the upstream down and up; a restart causes no reconnect storm.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import {
  startRestartableUpstream,
  WATCHED_URI,
  type RestartableUpstream,
} from "../fixtures/restartable-server.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { connectClient, type RecordingClient } from "../support/clients.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";

/** How long health may take to follow the upstream: its probe runs every second here (PORTICO_UPSTREAM_HEALTH_INTERVAL_MS). */
const HEALTH_WAIT_MS = 10_000;
/** Initializations a restart may cost beside per-session ones: 4 per replica (see the storm tests). */
const SHARED_BOUND = 8;

async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const text = (result: object) => JSON.stringify((result as { content?: unknown }).content);

for (const flavour of [404, 400] as const) {
  describe(`an upstream restarted while sessions are open (unknown session: HTTP ${flavour})`, () => {
    let upstream: RestartableUpstream;
    let a: RunningPortico;
    let b: RunningPortico;
    let admin: AdminClient;
    const open: Array<{ close(): Promise<void> }> = [];

    before(async () => {
      upstream = await startRestartableUpstream({ unknownSession: flavour });
      const prefix = uniquePrefix();
      const tenants = [
        {
          id: "acme",
          auth: "none" as const,
          providers: [{ id: "up", kind: "mcp" as const, url: upstream.url }],
        },
      ];
      const env = { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN, PORTICO_UPSTREAM_HEALTH_INTERVAL_MS: "1000" };
      a = await startPortico({ redisPrefix: prefix, tenants, env });
      b = await startPortico({ redisPrefix: prefix, tenants, env });
      admin = new AdminClient(a.url);
    });
    after(async () => {
      await Promise.allSettled(open.map((c) => c.close()));
      await Promise.all([a.close(), b.close()]);
      await upstream.close();
    });

    /** An SDK v1 client whose requests alternate between the two replicas. */
    async function v1Client(capabilities = true): Promise<RecordingClient> {
      let next = 0;
      const ports = [new URL(a.url).port, new URL(b.url).port];
      const rc = await connectClient(a.mcpUrl("acme"), {
        capabilities,
        route: (url) => Object.assign(new URL(url), { port: ports[next++ % 2]! }),
      });
      open.push(rc.client);
      return rc;
    }

    /** An SDK v2 client on 2026-07-28 (Portico bridges to the session-era upstream). */
    async function v2Client(capabilities: Record<string, object>): Promise<V2Client> {
      const client = new V2Client(
        { name: "v2", version: "1.0.0" },
        { capabilities, versionNegotiation: { mode: "auto" } },
      );
      if (capabilities.roots) client.setRequestHandler("roots/list", async () => ({ roots: [] }));
      await client.connect(new V2Transport(new URL(b.mcpUrl("acme"))));
      assert.equal(client.getProtocolEra(), "modern");
      open.push(client);
      return client;
    }

    const health = async () =>
      (await admin.get("/tenants/acme/providers/up/health")).body as { status: string };

    it("an SDK v1 client's next call after the restart succeeds, on either replica", async () => {
      const { client } = await v1Client();
      assert.equal(
        text(await client.callTool({ name: "echo", arguments: { text: "before" } })),
        text({ content: [{ type: "text", text: "before" }] }),
      );
      await client.callTool({ name: "echo", arguments: { text: "the other replica" } });
      await upstream.restart();
      for (const word of ["after", "and again", "and on the other replica"]) {
        const result = await client.callTool({ name: "echo", arguments: { text: word } });
        assert.equal(result.isError, undefined, `${word}: ${text(result)}`);
        assert.equal(text(result), text({ content: [{ type: "text", text: word }] }));
      }
    });

    it("a 2026-07-28 client's next call after the restart succeeds, with and without capabilities", async () => {
      const bare = await v2Client({});
      const full = await v2Client({ sampling: {}, elicitation: {}, roots: {} });
      for (const client of [bare, full])
        await client.callTool({ name: "echo", arguments: { text: "before" } });
      await upstream.restart();
      for (const [name, client] of [
        ["no capabilities", bare],
        ["sampling, elicitation, roots", full],
      ] as const) {
        const result = await client.callTool({ name: "echo", arguments: { text: name } });
        assert.equal(result.isError, undefined, `${name}: ${text(result)}`);
        assert.equal(text(result), text({ content: [{ type: "text", text: name }] }));
      }
    });

    it("a session's log level and subscriptions are restored on the new upstream session", async () => {
      const rc = await connectClient(a.mcpUrl("acme"));
      open.push(rc.client);
      await rc.client.setLoggingLevel("error");
      await rc.client.subscribeResource({ uri: WATCHED_URI });
      await rc.client.callTool({ name: "echo", arguments: { text: "before" } });
      assert.ok((await upstream.touch(WATCHED_URI)) >= 1, "the upstream holds the subscription");
      await rc.waitFor("notifications/resources/updated");

      await upstream.restart();
      const from = rc.notifications.length;
      const healed = await rc.client.callTool({ name: "log", arguments: { level: "info", text: "quiet" } });
      assert.equal(healed.isError, undefined, text(healed));
      await rc.client.callTool({ name: "log", arguments: { level: "error", text: "loud" } });
      const logged = rc.notifications.slice(from).filter((n) => n.method === "notifications/message");
      assert.deepEqual(
        logged.map((n) => n.params?.data),
        ["loud"],
        "only messages at the session's level reach it",
      );
      const since = upstream.received.filter((m) => m.generation === upstream.generation);
      assert.ok(
        since.some((m) => m.method === "logging/setLevel" && m.params?.level === "error"),
        `the new upstream session was told the level: ${since.map((m) => m.method).join()}`,
      );
      assert.ok(
        since.some((m) => m.method === "resources/subscribe" && m.params?.uri === WATCHED_URI),
        "the new upstream session was subscribed again",
      );
      const updates = rc.notifications.filter((n) => n.method === "notifications/resources/updated").length;
      await until(
        async () => (await upstream.touch(WATCHED_URI)) >= 1,
        "a subscribed upstream session",
        5000,
      );
      await until(
        () => rc.notifications.filter((n) => n.method === "notifications/resources/updated").length > updates,
        "resources/updated after the restart",
        5000,
      );
    });

    it("log messages outside a call below the session's level are dropped, whatever the upstream sends", async () => {
      const rc = await connectClient(a.mcpUrl("acme"));
      open.push(rc.client);
      await rc.client.setLoggingLevel("error");
      await rc.streamOpen();
      const from = rc.notifications.length;
      for (const [level, text] of [
        ["info", "quiet outside"],
        ["error", "loud outside"],
      ])
        await rc.client.callTool({ name: "log", arguments: { level, text, outside: true } });
      await rc.waitFor("notifications/message");
      await new Promise((r) => setTimeout(r, 300)); // time for anything sent before it to arrive
      assert.deepEqual(
        rc.notifications
          .slice(from)
          .filter((n) => n.method === "notifications/message")
          .map((n) => n.params?.data),
        ["loud outside"],
      );
    });

    it("a 2026-07-28 client's listen stream keeps hearing its resource after the restart", async () => {
      const client = await v2Client({});
      let updates = 0;
      client.setNotificationHandler("notifications/resources/updated", () => void (updates += 1));
      const sub = await client.listen({ resourceSubscriptions: [WATCHED_URI] });
      const heard = async (what: string) => {
        const before = updates;
        await until(async () => (await upstream.touch(WATCHED_URI), updates > before), what, HEALTH_WAIT_MS);
      };
      await heard("resources/updated before the restart");
      await upstream.restart();
      await client.callTool({ name: "echo", arguments: { text: "after" } });
      await heard("resources/updated after the restart");
      await sub.close();
    });

    it("health goes unhealthy while the upstream is down, healthy after, and calls work when it says so", async () => {
      const { client } = await v1Client();
      await client.callTool({ name: "echo", arguments: { text: "before" } });
      // Earlier tests restarted the upstream: start from a provider that says it is healthy.
      await until(async () => (await health()).status === "healthy", "health: healthy", HEALTH_WAIT_MS);
      await upstream.stop();
      await until(async () => (await health()).status === "unhealthy", "health: unhealthy", HEALTH_WAIT_MS);
      const down = await client.callTool({ name: "echo", arguments: { text: "down" } });
      assert.equal(down.isError, true, "a call while the upstream is down fails as a tool error");
      await upstream.start();
      await until(async () => (await health()).status === "healthy", "health: healthy", HEALTH_WAIT_MS);
      const up = await client.callTool({ name: "echo", arguments: { text: "up" } });
      assert.equal(up.isError, undefined, `healthy, so the open session's call works: ${text(up)}`);
    });

    it("no reconnect storm: many sessions calling after a restart share a bounded number of initializations", async () => {
      // Sessions that hold no session-scoped state (no capabilities, log level or subscriptions)
      // need no upstream session of their own (docs/upstream-mcp.md): after a restart, each of the
      // two replicas re-initializes its catalog session, the session that lists for a client
      // declaring every capability (docs/upstream-mcp.md) and its shared call session once each
      // (single flight), and may open one more for a health probe racing them: 4 per replica,
      // whereas one upstream session per client session would be at least 16 (32 before the
      // rebuild: one per call).
      const sessions = 16;
      const clients = await Promise.all(Array.from({ length: sessions }, () => v1Client(false)));
      await Promise.all(
        clients.map(({ client }) => client.callTool({ name: "echo", arguments: { text: "warm" } })),
      );
      await upstream.restart();
      const results = await Promise.all(
        clients.flatMap(({ client }) =>
          [1, 2].map((n) => client.callTool({ name: "echo", arguments: { text: `call ${n}` } })),
        ),
      );
      assert.deepEqual(
        results.filter((r) => r.isError),
        [],
        "every call after the restart succeeds",
      );
      const initialized = upstream.initializations(true);
      assert.ok(
        initialized <= SHARED_BOUND,
        `${initialized} initialize requests for ${sessions} sessions after the restart`,
      );
    });

    it("sessions with their own upstream session are each re-initialized once, however many calls race", async () => {
      // A log level is session-scoped state: each of these sessions has its own upstream session,
      // so the bound is one initialize per session (however many of its calls race) plus the
      // shared ones (above).
      const sessions = 6;
      const clients = await Promise.all(Array.from({ length: sessions }, () => v1Client(false)));
      await Promise.all(clients.map(({ client }) => client.setLoggingLevel("warning")));
      await Promise.all(
        clients.map(({ client }) => client.callTool({ name: "echo", arguments: { text: "warm" } })),
      );
      await upstream.restart();
      const results = await Promise.all(
        clients.flatMap(({ client }) =>
          [1, 2, 3].map((n) => client.callTool({ name: "echo", arguments: { text: `call ${n}` } })),
        ),
      );
      assert.deepEqual(
        results.filter((r) => r.isError),
        [],
        "every call after the restart succeeds",
      );
      const initialized = upstream.initializations(true);
      assert.ok(
        initialized <= sessions + SHARED_BOUND,
        `${initialized} initialize requests for ${sessions} sessions (3 concurrent calls each) after the restart`,
      );
    });
  });
}

describe("a provider deleted and added again through the admin API", () => {
  let upstream: RestartableUpstream;
  let a: RunningPortico;
  let b: RunningPortico;
  let admin: AdminClient;
  let rc: RecordingClient;

  before(async () => {
    upstream = await startRestartableUpstream();
    // The session is served by one replica, the admin API answered by the other.
    const options = {
      redisPrefix: uniquePrefix(),
      tenants: [
        {
          id: "acme",
          auth: "none" as const,
          providers: [{ id: "up", kind: "mcp" as const, url: upstream.url, prefix: "up" }],
        },
      ],
      env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
    };
    a = await startPortico(options);
    b = await startPortico(options);
    admin = new AdminClient(b.url);
    rc = await connectClient(a.mcpUrl("acme"));
    await rc.client.listTools();
    await rc.streamOpen(); // list_changed comes on it
  });
  after(async () => {
    await rc.client.close();
    await Promise.all([a.close(), b.close()]);
    await upstream.close();
  });

  const LISTS = ["tools", "prompts", "resources"].map((kind) => `notifications/${kind}/list_changed`);

  /** How many of each list_changed the session saw since `from`, once they have settled. */
  async function announced(from: number): Promise<Record<string, number>> {
    await until(
      () => LISTS.every((m) => rc.notifications.slice(from).some((n) => n.method === m)),
      "every list to be announced",
      5000,
    );
    await new Promise((r) => setTimeout(r, 1500)); // a second announcement would come by now
    const counts: Record<string, number> = {};
    for (const m of LISTS) counts[m] = rc.notifications.slice(from).filter((n) => n.method === m).length;
    return counts;
  }

  it("announces each changed list once on delete and once on re-add", async () => {
    const got = await admin.get("/tenants/acme/providers/up");
    const { etag: _e, ...record } = got.body as Record<string, unknown>;
    let from = rc.notifications.length;
    assert.equal((await admin.delete("/tenants/acme/providers/up")).status, 204);
    assert.deepEqual(await announced(from), Object.fromEntries(LISTS.map((m) => [m, 1])), "on delete");
    assert.deepEqual((await rc.client.listTools()).tools, []);

    from = rc.notifications.length;
    assert.equal((await admin.post("/tenants/acme/providers", record)).status, 201);
    assert.deepEqual(await announced(from), Object.fromEntries(LISTS.map((m) => [m, 1])), "on re-add");
    assert.deepEqual((await rc.client.listTools()).tools.map((t) => t.name).sort(), ["up__echo", "up__log"]);
  });
});
