// The per-provider circuit breaker (docs/upstream-mcp.md "Circuit breaker"): the state machine on
// a moved clock, then real `mcp` and `http` providers (built by the provider factory, with real
// metrics and a log that records) in front of upstreams that refuse connections, hang, flap, or
// answer with errors that must not open it.
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { freePort } from "../support/redis.js";
import { after, describe, it } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import { Agent } from "undici";
import { knownHealth } from "../../src/admin/routes/provider-health.js";
import { Metrics } from "../../src/metrics/metrics.js";
import { breakerValue, CircuitBreaker, type BreakerState } from "../../src/providers/circuit-breaker.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import { providerFactory } from "../../src/providers/factory.js";
import type { CallContext, Provider } from "../../src/providers/types.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { startStatelessUpstream } from "../fixtures/stateless-server.js";
import { startScriptedUpstream } from "../support/scripted-upstream.js";

const OPTIONS = { failures: 5, openMs: 1000, maxOpenMs: 4000 };

describe("the breaker's states", () => {
  function breaker() {
    const clock = { now: 0 };
    const changes: BreakerState[] = [];
    let fastFailed = 0;
    const b = new CircuitBreaker("p", OPTIONS, {
      now: () => clock.now,
      changed: (state) => changes.push(state),
      fastFailed: () => fastFailed++,
    });
    return { b, clock, changes, fastFailed: () => fastFailed };
  }

  it("opens at the fifth failure in a row, not before; a success in between starts the count again", () => {
    const { b, changes } = breaker();
    for (let i = 0; i < 4; i++) b.failed("connection refused");
    b.succeeded();
    for (let i = 0; i < 4; i++) b.failed("connection refused");
    assert.equal(b.state, "closed");
    b.failed("connection refused");
    assert.equal(b.state, "open");
    assert.deepEqual(changes, ["open"]);
    assert.deepEqual(b.status(), {
      state: "open",
      consecutiveFailures: 5,
      retryAt: new Date(1000).toISOString(),
      lastFailure: "connection refused",
    });
  });

  it("fails fast during the cool-down, saying why and when it is retried", () => {
    const { b, clock, fastFailed } = breaker();
    for (let i = 0; i < 5; i++) b.failed("HTTP 503");
    clock.now = 200;
    assert.equal(b.admits(), false);
    assert.equal(fastFailed(), 1);
    const refusal = b.refusal();
    assert.equal(refusal.code, "PORTICO_ERR_PROVIDER_UNAVAILABLE");
    assert.equal(
      refusal.message,
      "Provider 'p' is unavailable: it is failing (5 failures in a row, the last: HTTP 503); it will be retried in 1 s",
    );
  });

  it("after the cool-down lets one call through; its success closes the breaker", () => {
    const { b, clock, changes } = breaker();
    for (let i = 0; i < 5; i++) b.failed("timed out");
    clock.now = 1000;
    assert.equal(b.admits(), true);
    assert.equal(b.state, "half-open");
    assert.equal(b.admits(), false, "one probe at a time");
    b.succeeded();
    assert.equal(b.state, "closed");
    assert.equal(b.admits(), true);
    assert.deepEqual(changes, ["open", "half-open", "closed"]);
  });

  it("a failed probe opens it again for twice as long, up to the maximum; a successful call resets the back-off", () => {
    const { b, clock } = breaker();
    for (let i = 0; i < 5; i++) b.failed("timed out");
    const reopen = () => {
      clock.now = Date.parse(b.status().retryAt!);
      assert.equal(b.admits(), true);
      b.failed("timed out");
      return Date.parse(b.status().retryAt!) - clock.now;
    };
    assert.deepEqual([reopen(), reopen(), reopen(), reopen()], [2000, 4000, 4000, 4000]);
    clock.now = Date.parse(b.status().retryAt!);
    b.admits();
    b.succeeded();
    for (let i = 0; i < 5; i++) b.failed("timed out");
    assert.equal(Date.parse(b.status().retryAt!) - clock.now, 1000);
  });

  it("a probe the client cancelled decides nothing: the next call probes", () => {
    const { b, clock } = breaker();
    for (let i = 0; i < 5; i++) b.failed("timed out");
    clock.now = 1000;
    assert.equal(b.admits(), true);
    b.released();
    assert.equal(b.state, "open");
    assert.equal(b.admits(), true);
    assert.equal(b.state, "half-open");
  });

  it("with a background probe: it runs after the cool-down, calls fail fast meanwhile, its verdict decides", async () => {
    const verdicts: Array<(ok: boolean) => void> = [];
    const probe = () =>
      new Promise<void>((resolve, reject) =>
        verdicts.push((ok) => (ok ? resolve() : reject(new Error("connection refused")))),
      );
    const b = new CircuitBreaker("p", { failures: 1, openMs: 20, maxOpenMs: 1000 }, { probe });
    b.failed("connection refused");
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(b.state, "half-open");
    assert.equal(verdicts.length, 1, "one probe");
    assert.equal(b.admits(), false, "calls wait for the probe");
    assert.match(b.refusal().message, /it is being retried now$/);
    b.released(); // a call the client cancelled meanwhile
    assert.equal(b.state, "half-open");
    verdicts[0]!(false);
    await new Promise((r) => setImmediate(r));
    assert.equal(b.state, "open");
    assert.equal(b.status().lastFailure, "connection refused");
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(verdicts.length, 2, "probed again after twice the cool-down");
    verdicts[1]!(true);
    await new Promise((r) => setImmediate(r));
    assert.equal(b.state, "closed");
    b.close();
  });

  it("0 failures turns it off", () => {
    const b = new CircuitBreaker("p", { ...OPTIONS, failures: 0 });
    for (let i = 0; i < 100; i++) b.failed("timed out");
    assert.equal(b.state, "closed");
  });
});

type Mode = "ok" | "isError" | "rpcError" | "401" | "503" | "hang";

/** An upstream whose tools/call answers as `state.mode` says. */
async function startUpstream() {
  const state = { mode: "ok" as Mode };
  const upstream = await startScriptedUpstream((call, res) => {
    switch (state.mode) {
      case "ok":
        return call.reply({ result: { content: [{ type: "text", text: "done" }] } });
      case "isError":
        return call.reply({
          result: { isError: true, content: [{ type: "text", text: "the tool failed" }] },
        });
      case "rpcError":
        return call.reply({ error: { code: -32602, message: "bad arguments" } });
      case "401":
        return void res.writeHead(401, { "www-authenticate": "Bearer" }).end();
      case "503":
        return void res.writeHead(503).end("down for maintenance");
      case "hang":
        return;
    }
  });
  return Object.assign(upstream, { state });
}

/** A log that keeps what it is given. */
function recordingLog() {
  const lines: Array<{ fields: Record<string, any>; msg: string }> = [];
  const record = (fields: unknown, msg?: string) =>
    void lines.push({
      fields: (typeof fields === "object" ? fields : {}) as Record<string, any>,
      msg: msg ?? "",
    });
  const log = {
    level: "info",
    info: record,
    warn: record,
    error: record,
    fatal: record,
    debug: () => undefined,
    trace: () => undefined,
    silent: () => undefined,
    child: () => log,
  };
  return { log: log as unknown as FastifyBaseLogger, lines };
}

const ctx = (): CallContext => ({
  tenantId: "acme",
  sessionId: undefined,
  protocolVersion: "2025-11-25",
  clientCapabilities: {},
  logLevel: undefined,
  signal: new AbortController().signal,
  progress: () => undefined,
  log: () => undefined,
  request: () => Promise.reject(new Error("no client requests here")),
});

const agent = new Agent();
after(() => agent.close());

/** A provider of `tenant` built by the factory, with its metrics and log. */
function build(tenant: TenantConfig, breaker = { failures: 5, openMs: 300, maxOpenMs: 2000 }) {
  const metrics = new Metrics();
  const { log, lines } = recordingLog();
  const provider = providerFactory({
    store: new MemoryStore(),
    keys: createKeys("breaker"),
    log,
    outlet: { notify: async () => undefined, request: async () => ({}) },
    upstreamTimeoutMs: 5000,
    upstreamHealthIntervalMs: 100,
    fetch: globalThis.fetch,
    dispatcher: agent,
    sessionTtlSeconds: 60,
    metrics,
    breaker,
  })(tenant, 0);
  metrics.watch({
    sessionsOpen: async () => 0,
    sseStreamsOpen: () => 0,
    providers: () => [
      {
        tenant: tenant.id,
        provider: provider.id,
        up: provider.healthy,
        breaker: breakerValue(statusOf(provider)),
      },
    ],
    storePing: async () => undefined,
  });
  const sample = async (name: string) => {
    const match = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m").exec(await metrics.scrape());
    return match ? Number(match[1]) : undefined;
  };
  return { provider, lines, sample };
}

async function mcpProvider(url: string, timeoutMs = 5000) {
  const tenant: TenantConfig = {
    id: "acme",
    auth: "none",
    providers: [{ id: "flaky", kind: "mcp", url, era: "session", timeoutMs }],
  };
  const built = build(tenant);
  await built.provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
  return built;
}

const statusOf = (p: Provider) => p.breakerStatus?.();
const stateOf = (p: Provider) => p.breakerStatus?.()?.state;
const textOf = (r: { content: unknown[] }) => (r.content[0] as { text?: string } | undefined)?.text ?? "";

/**
 * A refusal by the breaker is a few ms; a busy machine can add a couple of hundred (a GC, the
 * other test process). The bound stays far under the call timeouts it is compared with.
 */
const FAST_MS = 250;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  for (const end = Date.now() + ms; !check() && Date.now() < end;)
    await new Promise((r) => setTimeout(r, 20));
  return check();
}

describe("an mcp provider whose upstream refuses connections, then comes back", () => {
  it("opens after five failures, fails fast, says so in health, metrics and logs, and closes when the probe succeeds", async () => {
    const upstream = await startUpstream();
    const { provider, lines, sample } = await mcpProvider(upstream.url);
    try {
      assert.equal(textOf(await provider.callTool("work", {}, ctx())), "done");
      await upstream.down();
      for (let i = 0; i < 5; i++) {
        const result = await provider.callTool("work", {}, ctx());
        assert.equal(result.isError, true);
        // The first may find its pooled socket closed (UND_ERR_SOCKET), the rest are refused.
        assert.match(
          textOf(result),
          /^Provider 'flaky' is unavailable: (connection refused|UND_ERR_SOCKET)$/,
        );
      }
      assert.equal(stateOf(provider), "open");
      const { value, ms } = await timed(() => provider.callTool("work", {}, ctx()));
      assert.equal(value.isError, true);
      assert.match(
        textOf(value),
        /^Provider 'flaky' is unavailable: it is failing \(5 failures in a row, the last: connection refused\); it will be retried in 1 s$/,
      );
      assert.ok(ms < FAST_MS, `a refused call takes ${ms} ms`);
      const health = knownHealth(provider);
      assert.equal(health.status, "unhealthy");
      assert.match(
        health.reason!,
        /^circuit breaker open after 5 failures in a row \(the last: connection refused\)/,
      );
      assert.equal(health.breaker?.state, "open");
      assert.equal(await sample("portico_provider_breaker_state"), 2);
      assert.equal(await sample("portico_upstream_fast_failed_total"), 1);
      const opened = lines.filter((l) => l.msg === "upstream circuit breaker opened: calls fail fast");
      assert.equal(opened.length, 1);
      assert.deepEqual([opened[0]!.fields.tenant, opened[0]!.fields.provider], ["acme", "flaky"]);

      // Back: the background probe (the health ping) closes the breaker, no call needed.
      await upstream.up();
      assert.ok(await until(() => stateOf(provider) === "closed"), "closed by the probe");
      assert.equal(await sample("portico_provider_breaker_state"), 0);
      assert.equal(knownHealth(provider).breaker?.state, "closed");
      assert.ok(lines.some((l) => l.msg === "upstream circuit breaker closed"));
      assert.ok(await until(() => provider.healthy));
      assert.equal(textOf(await provider.callTool("work", {}, ctx())), "done");
    } finally {
      await provider.close();
      await upstream.close();
    }
  });
});

describe("an mcp provider whose upstream hangs (accepts, never answers)", () => {
  it("opens after five timeouts; then calls fail far under the call timeout", async () => {
    const upstream = await startUpstream();
    const { provider } = await mcpProvider(upstream.url, 1000);
    try {
      upstream.state.mode = "hang";
      const hung = await Promise.all(Array.from({ length: 5 }, () => provider.callTool("work", {}, ctx())));
      for (const r of hung) assert.match(textOf(r), /did not answer in time/);
      assert.equal(stateOf(provider), "open");
      assert.equal(statusOf(provider)?.lastFailure, "timed out");
      const { value, ms } = await timed(() => provider.callTool("work", {}, ctx()));
      assert.match(textOf(value), /it is failing \(5 failures in a row, the last: timed out\)/);
      assert.ok(ms < FAST_MS, `a refused call takes ${ms} ms (the call timeout is 1000 ms)`);
      assert.equal(upstream.calls, 5, "the refused call never reached the upstream");
    } finally {
      await provider.close();
      await upstream.close();
    }
  });
});

describe("an mcp provider whose upstream flaps", () => {
  it("reopens with a longer cool-down while it keeps failing, and closes once it answers", async () => {
    const upstream = await startUpstream();
    const { provider, lines } = await mcpProvider(upstream.url);
    try {
      upstream.state.mode = "503";
      for (let i = 0; i < 5; i++) await provider.callTool("work", {}, ctx());
      const first = statusOf(provider);
      assert.equal(first?.state, "open");
      assert.equal(first?.lastFailure, "HTTP 503");
      // Ping still answers, so the probe closes it; calls fail again and it opens for longer.
      assert.ok(await until(() => stateOf(provider) === "closed"));
      for (let i = 0; i < 5; i++) await provider.callTool("work", {}, ctx());
      const second = statusOf(provider);
      assert.equal(second?.state, "open");
      const coolDown = Date.parse(second.retryAt!) - Date.now();
      // 600 ms less the time since it opened: anything over the first's 300 ms is longer.
      assert.ok(coolDown > 300 && coolDown <= 600, `second cool-down ${coolDown} ms (the first: 300 ms)`);
      upstream.state.mode = "ok";
      assert.ok(await until(() => stateOf(provider) === "closed"));
      assert.equal(textOf(await provider.callTool("work", {}, ctx())), "done");
      const states = lines.filter((l) => l.fields.breaker).map((l) => l.fields.breaker.state as string);
      assert.deepEqual(states, ["open", "half-open", "closed", "open", "half-open", "closed"]);
    } finally {
      await provider.close();
      await upstream.close();
    }
  });
});

describe("answers that do not open the breaker", () => {
  for (const mode of ["isError", "rpcError", "401"] as const)
    it(`an mcp provider answered with ${mode} twenty times stays closed`, async () => {
      const upstream = await startUpstream();
      const { provider } = await mcpProvider(upstream.url);
      try {
        upstream.state.mode = mode;
        for (let i = 0; i < 20; i++) await provider.callTool("work", {}, ctx()).catch(() => undefined);
        assert.equal(upstream.calls, 20);
        assert.deepEqual(statusOf(provider), { state: "closed", consecutiveFailures: 0 });
        // (A 401 still marks the upstream session unhealthy and reconnects it: health, not the breaker.)
        assert.equal(knownHealth(provider).breaker?.state, "closed");
      } finally {
        await provider.close();
        await upstream.close();
      }
    });
});

describe("an http provider", () => {
  /** An endpoint answering each POST with the status `status()` gives, on `port` (0: any). */
  async function endpoint(status: () => number, port = 0) {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => void res.writeHead(status(), { "content-type": "application/json" }).end("{}"));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    const bound = (server.address() as AddressInfo).port;
    const close = () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { url: `http://127.0.0.1:${bound}/tool`, port: bound, close };
  }

  const httpProvider = (url: string): Provider =>
    build({
      id: "acme",
      auth: "none",
      providers: [{ id: "hooks", kind: "http", tools: [{ name: "hit", url }] }],
    }).provider;

  it("opens after five refused connections; the first call after the cool-down probes and closes it", async () => {
    const first = await endpoint(() => 200, await freePort());
    await first.close();
    const provider = httpProvider(first.url);
    for (let i = 0; i < 5; i++)
      assert.match(textOf(await provider.callTool("hit", {}, ctx())), /could not reach upstream/);
    const { value, ms } = await timed(() => provider.callTool("hit", {}, ctx()));
    assert.equal(value.isError, true);
    assert.match(
      textOf(value),
      /^hooks\/hit: Provider 'hooks' is unavailable: it is failing \(5 failures in a row, the last: .+\); it will be retried in 1 s$/,
    );
    assert.ok(ms < FAST_MS, `${ms} ms`);
    assert.equal(knownHealth(provider).status, "unhealthy");
    const back = await endpoint(() => 200, first.port);
    try {
      await new Promise((r) => setTimeout(r, 320));
      const probe = await provider.callTool("hit", {}, ctx());
      assert.equal(probe.isError, undefined);
      assert.equal(stateOf(provider), "closed");
      assert.equal(knownHealth(provider).status, "healthy");
    } finally {
      await back.close();
    }
  });

  it("opens after five calls to an endpoint that never answers time out; then calls fail far under the timeout", async () => {
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`;
    const { provider } = build({
      id: "acme",
      auth: "none",
      providers: [{ id: "hooks", kind: "http", tools: [{ name: "hit", url, timeoutMs: 1000 }] }],
    });
    try {
      const hung = await Promise.all(Array.from({ length: 5 }, () => provider.callTool("hit", {}, ctx())));
      for (const r of hung) assert.equal(textOf(r), "hooks/hit: upstream timed out after 1000 ms");
      assert.equal(stateOf(provider), "open");
      const { value, ms } = await timed(() => provider.callTool("hit", {}, ctx()));
      assert.match(textOf(value), /it is failing \(5 failures in a row, the last: timed out\)/);
      assert.ok(ms < FAST_MS, `${ms} ms (the timeout is 1000 ms)`);
      assert.equal(held.length, 5, "the refused call never reached the endpoint");
    } finally {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("a 5xx opens it, a 401 or a 404 does not", async () => {
    let status = 401;
    const server = await endpoint(() => status);
    const provider = httpProvider(server.url);
    try {
      for (let i = 0; i < 10; i++) await provider.callTool("hit", {}, ctx());
      status = 404;
      for (let i = 0; i < 10; i++) await provider.callTool("hit", {}, ctx());
      assert.equal(stateOf(provider), "closed");
      status = 502;
      for (let i = 0; i < 5; i++) await provider.callTool("hit", {}, ctx());
      assert.equal(stateOf(provider), "open");
      status = 200;
      await new Promise((r) => setTimeout(r, 320));
      const probe = await provider.callTool("hit", {}, ctx());
      assert.equal(probe.isError, undefined);
      assert.equal(stateOf(provider), "closed");
    } finally {
      await server.close();
    }
  });
});

describe("an mcp provider whose 2026-07-28 upstream goes away and comes back", () => {
  it("opens after five failures, fails fast, and its background probe (server/discover) closes it", async () => {
    // Restarted on the same port: one the kernel does not hand out to other processes meanwhile.
    const port = await freePort();
    let upstream = await startStatelessUpstream({ port });
    const tenant: TenantConfig = {
      id: "acme",
      auth: "none",
      providers: [{ id: "modern", kind: "mcp", url: upstream.url, era: "stateless" }],
    };
    const { provider } = build(tenant);
    await provider.start({ listChanged: () => undefined, healthChanged: () => undefined });
    try {
      const ok = await provider.callTool("test_simple_text", {}, ctx());
      assert.equal(ok.isError, undefined);
      await upstream.close();
      for (let i = 0; i < 5; i++)
        assert.equal((await provider.callTool("test_simple_text", {}, ctx())).isError, true);
      assert.equal(stateOf(provider), "open");
      const { value, ms } = await timed(() => provider.callTool("test_simple_text", {}, ctx()));
      assert.match(textOf(value), /^Provider 'modern' is unavailable: it is failing \(5 failures in a row/);
      assert.ok(ms < FAST_MS, `${ms} ms`);
      upstream = await startStatelessUpstream({ port });
      assert.ok(await until(() => stateOf(provider) === "closed"), "closed by the probe");
      assert.ok(await until(() => provider.healthy));
      assert.equal((await provider.callTool("test_simple_text", {}, ctx())).isError, undefined);
    } finally {
      await provider.close();
      await upstream.close();
    }
  });
});
