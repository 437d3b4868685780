// Class 8, the secret key can rotate (docs/operations.md "Rotating PORTICO_SECRET_KEY"): with the
// old key in PORTICO_SECRET_KEY_PREVIOUS, everything it sealed or MACed still opens and verifies,
// POST /admin/v1/secrets/reseal moves every stored secret to the new key, and then the old key
// can go. Three Portico generations share one Redis, as replicas across a rollout would.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { AccountStore, userKey } from "../../src/accounts/account-store.js";
import { ConfigError, loadConfig } from "../../src/config/env.js";
import { SigningKeys } from "../../src/oauth/signing-keys.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { digestOf, RequestStates } from "../../src/mcp/stateless/request-state.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { emptyTally, isSealed, openSealed, seal } from "../../src/tenants/sealed.js";
import { TenantStore } from "../../src/tenants/tenant-store.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, type RunningPortico } from "../support/portico.js";
import { uniquePrefix } from "../support/redis.js";
import { openSession, postRpc } from "../support/rpc.js";

const K0 = "rotation-key-zero-never-configured-0123456789";
const K1 = "rotation-key-one-the-old-key-0123456789abcdef";
const K2 = "rotation-key-two-the-new-key-0123456789abcdef";

describe("PORTICO_SECRET_KEY_PREVIOUS is checked at boot", () => {
  const base = { PORTICO_SECRET_KEY: K2 };
  const fails = (env: Record<string, string>, pattern: RegExp) =>
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
    );

  it("takes a comma-separated list of former keys, newest first", () => {
    assert.deepEqual(
      loadConfig({ ...base, PORTICO_SECRET_KEY_PREVIOUS: ` ${K1} , ${K0}` }).previousSecretKeys,
      [K1, K0],
    );
    assert.deepEqual(loadConfig(base).previousSecretKeys, []);
  });

  it("refuses a previous key equal to the current one, repeated, too short, or without a current key", () => {
    fails({ ...base, PORTICO_SECRET_KEY_PREVIOUS: K2 }, /entry 1 equals PORTICO_SECRET_KEY/);
    fails({ ...base, PORTICO_SECRET_KEY_PREVIOUS: `${K1},${K1}` }, /entry 2 repeats entry 1/);
    fails({ ...base, PORTICO_SECRET_KEY_PREVIOUS: `${K1},short` }, /entry 2 is too short/);
    fails({ PORTICO_SECRET_KEY_PREVIOUS: K1 }, /without PORTICO_SECRET_KEY/);
  });
});

describe("what a previous key made still opens; what no key made does not", () => {
  const binding = {
    tenant: "acme",
    principal: "",
    method: "tools/call",
    digest: digestOf("tools/call", { name: "t" }),
  };

  it("requestState sealed under the old key opens after the rotation, not after the old key is dropped", () => {
    const state = new RequestStates(new Secrets(K1), 60_000).seal(binding, { upstream: "u-state" });
    assert.deepEqual(new RequestStates(new Secrets(K2, [K1]), 60_000).open(binding, state), {
      upstream: "u-state",
      held: undefined,
    });
    assert.throws(
      () => new RequestStates(new Secrets(K2), 60_000).open(binding, state),
      /Invalid requestState/,
    );
    assert.throws(
      () => new RequestStates(new Secrets(K2, [K0]), 60_000).open(binding, state),
      /Invalid requestState/,
    );
    // New states are sealed under the current key only.
    const fresh = new RequestStates(new Secrets(K2, [K1]), 60_000).seal(binding, {});
    assert.throws(
      () => new RequestStates(new Secrets(K1), 60_000).open(binding, fresh),
      /Invalid requestState/,
    );
  });

  it("MACs: the current key signs, the previous ones verify, a stranger's do not", () => {
    const rotated = new Secrets(K2, [K1]);
    const old = new Secrets(K1).mac("cursor", "data");
    assert.ok(rotated.verify("cursor", "data", old));
    assert.ok(rotated.verify("cursor", "data", rotated.mac("cursor", "data")));
    assert.equal(rotated.mac("cursor", "data"), new Secrets(K2).mac("cursor", "data"));
    assert.ok(!rotated.verify("cursor", "data", new Secrets(K0).mac("cursor", "data")));
    assert.ok(!rotated.verify("etag", "data", new Secrets(K1).mac("cursor", "data")), "purposes stay apart");
  });

  it("a reseal leaves a value no key opens as it is and names where it is", async () => {
    const store = new MemoryStore();
    const keys = createKeys(uniquePrefix());
    const provider = (id: string) => ({
      id,
      kind: "mcp" as const,
      url: "http://127.0.0.1:9/mcp",
      headers: { "x-key": `secret-of-${id}` },
    });
    await new TenantStore(store, keys, new Secrets(K1)).mutate("acme", () => ({
      id: "acme",
      auth: "none",
      providers: [provider("one"), provider("two")],
    }));
    // The second provider's secret was sealed under a key nobody configured.
    const raw = JSON.parse((await store.get(keys.tenant("acme")))!) as {
      providers: { headers: Record<string, string> }[];
    };
    raw.providers[1]!.headers["x-key"] = seal(new Secrets(K0), "secret-of-two");
    const lost = raw.providers[1]!.headers["x-key"];
    await store.set(keys.tenant("acme"), JSON.stringify(raw));

    const tally = emptyTally();
    await new TenantStore(store, keys, new Secrets(K2, [K1])).reseal("acme", tally);
    assert.deepEqual(tally, {
      resealed: 1,
      alreadyCurrent: 0,
      failed: [{ tenant: "acme", pointer: "/providers/1/headers/x-key" }],
    });
    const after = JSON.parse((await store.get(keys.tenant("acme")))!) as typeof raw;
    assert.equal(after.providers[1]!.headers["x-key"], lost, "left as it was");
    assert.equal(
      openSealed(new Secrets(K2), after.providers[0]!.headers["x-key"]!)?.plaintext,
      "secret-of-one",
    );
  });
});

describe("a reseal racing admin writes", () => {
  it("loses no write and leaves every value under the new key", async () => {
    const store = new MemoryStore();
    const keys = createKeys(uniquePrefix());
    const provider = (id: string) => ({
      id,
      kind: "mcp" as const,
      url: "http://127.0.0.1:9/mcp",
      headers: { "x-key": `secret-of-${id}` },
    });
    const old = new TenantStore(store, keys, new Secrets(K1));
    await old.mutate("acme", () => ({ id: "acme", auth: "none", providers: [provider("p0")] }));
    // Replicas on the new key (the old one as previous) write while the reseal runs.
    const replicas = [0, 1, 2].map(() => new TenantStore(store, keys, new Secrets(K2, [K1])));
    const tally = emptyTally();
    await Promise.all([
      ...Array.from({ length: 12 }, (_, i) =>
        replicas[i % 3]!.mutate("acme", (current) => ({
          ...current!.config,
          providers: [...current!.config.providers, provider(`p${i + 1}`)],
        })),
      ),
      replicas[0]!.reseal("acme", tally),
      replicas[1]!.reseal("acme", emptyTally()),
    ]);
    await replicas[2]!.reseal("acme", emptyTally());
    const raw = (await store.get(keys.tenant("acme")))!;
    const record = JSON.parse(raw) as { providers: { id: string; headers: Record<string, string> }[] };
    assert.equal(record.providers.length, 13, "every write kept");
    const newOnly = new Secrets(K2);
    for (const p of record.providers)
      assert.equal(openSealed(newOnly, p.headers["x-key"]!)?.plaintext, `secret-of-${p.id}`, p.id);
    assert.deepEqual(tally.failed, []);
  });
});

interface Recorder {
  readonly url: string;
  readonly headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startRecorder(): Promise<Recorder> {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      headers.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    headers,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Starts one replica of a deployment on `prefix` with these keys, remembered in `running`. */
async function startReplica(
  prefix: string,
  running: RunningPortico[],
  current: string,
  previous?: string,
): Promise<RunningPortico> {
  const portico = await startPortico({
    tenants: [],
    redisPrefix: prefix,
    env: {
      PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
      PORTICO_SECRET_KEY: current,
      PORTICO_PAGE_SIZE: "1",
      ...(previous ? { PORTICO_SECRET_KEY_PREVIOUS: previous } : {}),
    },
  });
  running.push(portico);
  return portico;
}

describe("rotating the key of a running deployment", () => {
  const prefix = uniquePrefix();
  const secret = `upstream-secret-${Date.now()}`;
  const oidcSecret = `oidc-secret-${Date.now()}`;
  let upstream: Recorder;
  const running: RunningPortico[] = [];

  const start = (current: string, previous?: string) => startReplica(prefix, running, current, previous);

  const rpc = async (portico: RunningPortico, method: string, params: Record<string, unknown>) => {
    const url = portico.mcpUrl("acme");
    const res = await postRpc(url, { jsonrpc: "2.0", id: 1, method, params }, await openSession(url));
    assert.equal(res.status, 200);
    return (await res.json()) as { result?: { nextCursor?: string }; error?: { code: number } };
  };

  const sealedValues = async (portico: RunningPortico): Promise<string[]> => {
    const records = [
      await portico.store.get(portico.keys.tenant("acme")),
      await portico.store.get(portico.keys.tenant("sso")),
      await portico.store.get(portico.keys.oauthSigningKeys()),
    ];
    const out: string[] = [];
    JSON.stringify(
      records.map((r) => JSON.parse(r!) as unknown),
      (_k, v: unknown) => (isSealed(v) && out.push(v), v),
    );
    return out;
  };

  before(async () => {
    upstream = await startRecorder();
  });
  after(async () => {
    for (const portico of running) await portico.close().catch(() => undefined);
    await upstream.close();
  });

  it("old seals, cursors and ETags keep working; reseal moves everything to the new key; then the old key can go", async () => {
    // Generation 1: the old key.
    const first = await start(K1);
    const admin1 = new AdminClient(first.url);
    assert.equal((await admin1.post("/tenants", { id: "acme", auth: "none" })).status, 201);
    assert.equal((await admin1.post("/tenants", { id: "sso", auth: "oauth" })).status, 201);
    const tools = ["a", "b", "c"].map((name) => ({
      name,
      url: `${upstream.url}/${name}`,
      headers: { "x-key": secret },
    }));
    const created = await admin1.post("/tenants/acme/providers", { id: "wx", kind: "http", tools });
    assert.equal(created.status, 201);
    const oldEtag = created.headers.get("etag")!;
    const identity = {
      type: "oidc",
      issuer: "https://login.acme.example",
      clientId: "portico",
      clientSecret: oidcSecret,
    };
    assert.equal((await admin1.put("/tenants/sso/identity", identity)).status, 200);
    // A user's connected account at the provider: sealed as a whole, under the old key.
    await new AccountStore(first.store, first.keys, new Secrets(K1)).put("acme", "alice", "wx", {
      accessToken: secret,
      issuer: "https://as.example",
      clientId: "portico",
      mode: "preregistered",
      connectedAt: new Date().toISOString(),
      destinations: [],
    });
    const oldAdminCursor = (await admin1.get("/tenants?limit=1")).body.nextCursor as string;
    const oldMcpCursor = (await rpc(first, "tools/list", {})).result?.nextCursor;
    assert.ok(oldAdminCursor && oldMcpCursor);
    await first.close();

    // Generation 2: the new key, the old one as previous.
    const second = await start(K2, K1);
    const admin2 = new AdminClient(second.url);
    const seen = upstream.headers.length;
    assert.equal((await rpc(second, "tools/call", { name: "a", arguments: {} })).error, undefined);
    assert.equal(upstream.headers.at(-1)?.["x-key"], secret, "a secret sealed under the old key still opens");
    assert.equal(upstream.headers.length, seen + 1);
    assert.ok(
      (await rpc(second, "tools/list", { cursor: oldMcpCursor })).result,
      "an old MCP cursor still verifies",
    );
    assert.equal(
      (await admin2.get(`/tenants?limit=1&cursor=${encodeURIComponent(oldAdminCursor)}`)).status,
      200,
    );
    const patched = await admin2.patch(
      "/tenants/acme/providers/wx",
      { prefix: "wx" },
      { headers: { "if-match": oldEtag } },
    );
    assert.equal(patched.status, 200, "an ETag under the old key still matches");
    assert.notEqual(patched.headers.get("etag"), oldEtag);

    // Only a platform key may reseal.
    const tenantKey = (await admin2.post("/tenants/acme/api-keys", { name: "tenant" })).body.token as string;
    assert.equal(typeof tenantKey, "string");
    assert.equal((await admin2.post("/secrets/reseal", undefined, { token: tenantKey })).status, 403);
    assert.equal((await admin2.post("/secrets/reseal", undefined, { token: null })).status, 401);

    // Before the reseal, a replica that knows only the new key could not even start: the OAuth
    // signing keys are sealed under the old one.
    await assert.rejects(
      new SigningKeys(second.store, second.keys, new Secrets(K2)).current(),
      /sealed under another PORTICO_SECRET_KEY/,
    );
    const before = await sealedValues(second);
    const underOld = before.filter((v) => openSealed(new Secrets(K2, [K1]), v)?.keyIndex === 1).length;
    assert.ok(underOld >= 2, "the identity secret and signing key are still under the old key");
    const resealed = await admin2.post("/secrets/reseal");
    assert.equal(resealed.status, 200);
    assert.deepEqual(resealed.body, {
      resealed: underOld + 1, // and the connected account
      alreadyCurrent: before.length - underOld,
      failed: [],
    });
    const account = (await second.store.get(second.keys.account("acme", userKey("alice"), "wx")))!;
    assert.equal(openSealed(new Secrets(K2), account, "accounts")?.keyIndex, 0);
    const now = await sealedValues(second);
    assert.equal(now.length, before.length);
    for (const value of now) {
      assert.equal(openSealed(new Secrets(K2), value)?.keyIndex, 0, "sealed under the new key");
      assert.equal(openSealed(new Secrets(K1), value), undefined, "the old key opens nothing");
    }
    const again = await admin2.post("/secrets/reseal");
    assert.deepEqual(again.body, { resealed: 0, alreadyCurrent: before.length + 1, failed: [] });
    const audit = JSON.stringify((await admin2.get("/audit?limit=20")).body);
    assert.match(audit, /"action":"secrets.reseal"/);
    for (const text of [audit, JSON.stringify(resealed.body)])
      assert.ok(!text.includes(secret) && !text.includes(oidcSecret), text);
    await second.close();

    // Generation 3: the old key dropped. Every secret still opens; old cursors no longer verify.
    const third = await start(K2);
    assert.equal((await rpc(third, "tools/call", { name: "wx__b", arguments: {} })).error, undefined);
    assert.equal(upstream.headers.at(-1)?.["x-key"], secret);
    assert.equal(
      (third.registry.get("sso")?.config.identity as { clientSecret: string }).clientSecret,
      oidcSecret,
    );
    assert.equal((await rpc(third, "tools/list", { cursor: oldMcpCursor })).error?.code, -32602);
    const accounts = new AccountStore(third.store, third.keys, new Secrets(K2));
    assert.equal((await accounts.get("acme", "alice", "wx"))?.accessToken, secret, "still connected");
    const admin3 = new AdminClient(third.url);
    assert.equal(
      (await admin3.get(`/tenants?limit=1&cursor=${encodeURIComponent(oldAdminCursor)}`)).status,
      400,
    );
  });
});

describe("docs/operations.md's rotation, followed step by step with replicas overlapping", () => {
  const prefix = uniquePrefix();
  const first = `first-secret-${Date.now()}`;
  const second = `second-secret-${Date.now()}`;
  let upstream: Recorder;
  const running: RunningPortico[] = [];

  const start = (current: string, previous?: string) => startReplica(prefix, running, current, previous);
  /** Calls tool `name` of acme on a replica; the header its upstream request carried. */
  const call = async (portico: RunningPortico, name: string): Promise<unknown> => {
    const url = portico.mcpUrl("acme");
    const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {} } };
    const res = await postRpc(url, body, await openSession(url));
    assert.equal(res.status, 200);
    const reply = (await res.json()) as { error?: unknown };
    assert.equal(reply.error, undefined, JSON.stringify(reply));
    return upstream.headers.at(-1)?.["x-key"];
  };
  /** Waits until a replica's registry holds what another replica wrote (the tenants channel). */
  const settled = async (portico: RunningPortico, ok: () => boolean) => {
    for (let i = 0; i < 250 && !ok(); i++) await new Promise((r) => setTimeout(r, 20)); // 5 s at least
    assert.ok(ok(), "the write reached the other replica");
  };

  before(async () => {
    upstream = await startRecorder();
  });
  after(async () => {
    for (const portico of running) await portico.close().catch(() => undefined);
    await upstream.close();
  });

  it("steps 2 to 5 keep every replica serving, with the old and new settings side by side", async () => {
    // Before: every replica on OLD.
    const old = await start(K1);
    const adminOld = new AdminClient(old.url);
    assert.equal((await adminOld.post("/tenants", { id: "acme", auth: "none" })).status, 201);
    const tool = { name: "a", url: `${upstream.url}/a`, headers: { "x-key": first } };
    assert.equal(
      (await adminOld.post("/tenants/acme/providers", { id: "wx", kind: "http", tools: [tool] })).status,
      201,
    );

    // Step 2: a replica with PORTICO_SECRET_KEY=OLD, PREVIOUS=NEW beside the old one.
    const learning = await start(K1, K2);
    assert.equal(await call(learning, "a"), first);
    await old.close();

    // Step 3: a replica with NEW, PREVIOUS=OLD beside one still on the step-2 settings.
    const switched = await start(K2, K1);
    const adminNew = new AdminClient(switched.url);
    const adminLearning = new AdminClient(learning.url);
    assert.equal(await call(switched, "a"), first, "the new replica opens what OLD sealed");
    const read = await adminNew.get("/tenants/acme/providers/wx");
    const patched = await adminLearning.put(
      "/tenants/acme/providers/wx",
      { id: "wx", kind: "http", tools: [{ ...tool, headers: { "x-key": second } }] },
      { headers: { "if-match": read.headers.get("etag")! } },
    );
    assert.equal(patched.status, 200, "an ETag the new replica made matches on the step-2 replica");
    await settled(switched, () => JSON.stringify(switched.registry.get("acme")?.config).includes(second));
    assert.equal(await call(switched, "a"), second);
    const sealedByNew = await adminNew.put(
      "/tenants/acme/providers/wx",
      { id: "wx", kind: "http", tools: [{ ...tool, headers: { "x-key": first } }] },
      { headers: { "if-match": patched.headers.get("etag")! } },
    );
    assert.equal(sealedByNew.status, 200, "an ETag the step-2 replica made matches on the new one");
    await settled(learning, () => JSON.stringify(learning.registry.get("acme")?.config).includes(first));
    assert.equal(await call(learning, "a"), first, "the step-2 replica opens what NEW sealed");
    const cursor = (await adminNew.get("/tenants?limit=1")).body.nextCursor as string | undefined;
    if (cursor !== undefined)
      assert.equal(
        (await adminLearning.get(`/tenants?limit=1&cursor=${encodeURIComponent(cursor)}`)).status,
        200,
      );
    await learning.close();

    // Step 4: every replica on NEW, PREVIOUS=OLD; reseal.
    const resealed = await adminNew.post("/secrets/reseal");
    assert.equal(resealed.status, 200);
    assert.deepEqual(resealed.body.failed, []);

    // Step 5: OLD dropped. Every secret opens, the OAuth signing keys too (the replica started).
    const dropped = await start(K2);
    assert.equal(await call(dropped, "a"), first);
    await switched.close();
    await dropped.close();
  });
});
