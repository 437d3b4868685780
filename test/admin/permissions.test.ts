// The admin API's permission matrix on every operation of the table (a new route is covered when it is
// added): no, unknown, malformed, revoked and expired keys get 401 with a Bearer challenge (RFC 6750
// §3); platform keys may do everything; a tenant key works on its own tenant's routes, gets 403 on
// platform routes and, on another tenant's, the 404 a nonexistent tenant gets; its own tenant's
// record it may read, which holds no configuration or secret.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OPERATIONS } from "../../src/admin/openapi/operations.js";
import type { Operation } from "../../src/admin/openapi/operation-kit.js";
import { AccountStore } from "../../src/accounts/account-store.js";
import { GrantStore } from "../../src/oauth/grants.js";
import { Secrets } from "../../src/crypto/secrets.js";
import {
  ADMIN_TOKEN,
  AdminClient,
  concretePath,
  type AdminResponse,
  type CallOptions,
} from "../support/admin.js";
import { startPortico, staticTenant, TEST_SECRET, type RunningPortico } from "../support/portico.js";
import { openSession } from "../support/rpc.js";

/** Who calls: a bearer key (null for none) or a raw Authorization header. */
interface Caller {
  readonly name: string;
  readonly token: string | null;
  readonly authorization?: string;
}

/** One concrete call of an operation, made ready for it. */
interface Target {
  readonly path: string;
  readonly body?: unknown;
  /** For destructive calls: whether what the call removes is still there. */
  readonly exists?: () => Promise<boolean>;
}

type Fixture = (tenant: string, n: string) => Promise<Partial<Target> & { ids?: Record<string, string> }>;

const NO_SUCH_TENANT = "no-such-tenant";
/** Operations whose successful call removes the tenant named in the path: they get a tenant of their own. */
const REMOVES_TENANT = new Set(["deleteTenant"]);

let portico: RunningPortico;
let admin: AdminClient;
let counter = 0;
const sessions: Record<string, string> = {};
const tenantKeys: Record<string, { id: string; token: string }> = {};
let platformApiKey: string;
const bad: Caller[] = [];

const nonce = () => `${process.pid}-${++counter}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createKey(path: string, expiresAt?: string): Promise<{ id: string; token: string }> {
  const res = await admin.post(path, { name: `perm ${nonce()}`, ...(expiresAt ? { expiresAt } : {}) });
  assert.equal(res.status, 201);
  return { id: res.body.id, token: res.body.token };
}

async function createProvider(tenant: string): Promise<string> {
  const id = `p-${nonce()}`;
  assert.equal((await admin.post(`/tenants/${tenant}/providers`, { id, kind: "static" })).status, 201);
  return id;
}

async function createServer(tenant: string): Promise<string> {
  const id = `s-${nonce()}`;
  const res = await admin.post(`/tenants/${tenant}/servers`, { id, providers: [{ provider: "docs" }] });
  assert.equal(res.status, 201);
  return id;
}

async function freshTenant(): Promise<string> {
  const id = `tmp-${nonce()}`;
  assert.equal((await admin.post("/tenants", { id, auth: "none" })).status, 201);
  return id;
}

const keyAlive = (path: string, id: string) => async () => {
  const res = await admin.get(`${path}?limit=200`);
  return res.body.items.some((k: { id: string; revokedAt?: string }) => k.id === id && !k.revokedAt);
};
const found = (path: string) => async () => (await admin.get(path)).status === 200;

async function createUser(tenant: string): Promise<string> {
  const username = `user-${nonce()}`;
  const res = await admin.post(`/tenants/${tenant}/users`, { username, password: "correct horse battery" });
  assert.equal(res.status, 201);
  return username;
}

async function createPlatformUser(): Promise<string> {
  const username = `pu-${nonce()}`;
  const res = await admin.post("/platform-users", { username, password: "correct horse battery" });
  assert.equal(res.status, 201);
  return username;
}

async function createClient(tenant: string): Promise<string> {
  const res = await admin.post(`/tenants/${tenant}/clients`, {
    redirect_uris: ["http://127.0.0.1:9999/callback"],
    token_endpoint_auth_method: "none",
  });
  assert.equal(res.status, 201);
  return res.body.client_id;
}

/** A grant as the authorization server records it after consent (no flow needed to revoke one). */
async function createGrant(tenant: string): Promise<string> {
  const grants = new GrantStore(portico.store, portico.keys);
  const grant = await grants.createGrant({
    tenant,
    client_id: "perm-client",
    sub: "u_perm",
    scope: "mcp:read",
  });
  return grant.id;
}

const grantLive = (tenant: string, id: string) => async () => {
  const res = await admin.get(`/tenants/${tenant}/grants?limit=200`);
  return res.body.items.some((g: { id: string; revokedAt?: string }) => g.id === id && !g.revokedAt);
};

/** A policy that allows everything, as no policy does. */
const OPEN_POLICY = { default: "allow", rules: [] };

/** Safe calls: writes that succeed for an allowed caller; deletes of something made for them. */
const FIXTURES: Readonly<Record<string, Fixture>> = {
  createTenant: async (_t, n) => ({ body: { id: `new-${n}`, auth: "none" } }),
  updateTenant: async (_t, n) => ({ body: { name: `Renamed ${n}` } }),
  deleteTenant: async (tenant) => ({ exists: found(`/tenants/${tenant}`) }),
  createProvider: async (_t, n) => ({ body: { id: `p-${n}`, kind: "static" } }),
  replaceProvider: async (tenant) => {
    const provider = await createProvider(tenant);
    return { ids: { provider }, body: { id: provider, kind: "static", prefix: "put" } };
  },
  patchProvider: async (tenant) => ({
    ids: { provider: await createProvider(tenant) },
    body: { prefix: "patch" },
  }),
  deleteProvider: async (tenant) => {
    const provider = await createProvider(tenant);
    return { ids: { provider }, exists: found(`/tenants/${tenant}/providers/${provider}`) };
  },
  // An mcp provider that pins its tools (unreachable: nothing to approve, an empty set made on save).
  approveProviderPins: async (tenant, n) => {
    const provider = `pin-${n}`;
    const body = { id: provider, kind: "mcp", url: "http://127.0.0.1:9/mcp", pinning: "block" };
    const res = await admin.post(`/tenants/${tenant}/providers`, body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { ids: { provider } };
  },
  createServer: async (_t, n) => ({ body: { id: `s-${n}`, providers: [{ provider: "docs" }] } }),
  getServer: async (tenant) => ({ ids: { server: await createServer(tenant) } }),
  getServerCatalog: async (tenant) => ({ ids: { server: await createServer(tenant) } }),
  replaceServer: async (tenant) => {
    const server = await createServer(tenant);
    return {
      ids: { server },
      body: { id: server, name: "Put", providers: [{ provider: "docs", prompts: [] }] },
    };
  },
  patchServer: async (tenant) => ({ ids: { server: await createServer(tenant) }, body: { name: "Patched" } }),
  deleteServer: async (tenant) => {
    const server = await createServer(tenant);
    return { ids: { server }, exists: found(`/tenants/${tenant}/servers/${server}`) };
  },
  deleteSession: async (tenant) => {
    const session = await openSession(portico.mcpUrl(tenant));
    return { ids: { session }, exists: found(`/tenants/${tenant}/sessions/${session}`) };
  },
  createTenantApiKey: async (_t, n) => ({ body: { name: `key ${n}` } }),
  revokeTenantApiKey: async (tenant) => {
    const { id } = await createKey(`/tenants/${tenant}/api-keys`);
    return { ids: { key: id }, exists: keyAlive(`/tenants/${tenant}/api-keys`, id) };
  },
  createPlatformApiKey: async (_t, n) => ({ body: { name: `platform key ${n}` } }),
  createUser: async (_t, n) => ({ body: { username: `new-${n}`, password: "correct horse battery" } }),
  getUser: async (tenant) => ({ ids: { user: await createUser(tenant) } }),
  updateUser: async (tenant, n) => ({
    ids: { user: await createUser(tenant) },
    body: { email: `u${n}@example.com` },
  }),
  clearUserThrottle: async (tenant) => ({ ids: { user: await createUser(tenant) } }),
  deleteUser: async (tenant) => {
    const user = await createUser(tenant);
    return { ids: { user }, exists: found(`/tenants/${tenant}/users/${user}`) };
  },
  createClient: async () => ({
    body: { redirect_uris: ["http://127.0.0.1:9999/callback"], token_endpoint_auth_method: "none" },
  }),
  getClient: async (tenant) => ({ ids: { client: await createClient(tenant) } }),
  deleteClient: async (tenant) => {
    const client = await createClient(tenant);
    return { ids: { client }, exists: found(`/tenants/${tenant}/clients/${client}`) };
  },
  deleteRegisteredClient: async (tenant) => {
    const client = await createClient(tenant);
    return { ids: { client }, exists: found(`/tenants/${tenant}/clients/${client}`) };
  },
  revokeGrant: async (tenant) => {
    const grant = await createGrant(tenant);
    return { ids: { grant }, exists: grantLive(tenant, grant) };
  },
  replaceIdentity: async () => ({ body: { type: "local" } }),
  getPolicy: async (tenant) => {
    assert.equal((await admin.put(`/tenants/${tenant}/policy`, OPEN_POLICY)).status, 200);
    return {};
  },
  replacePolicy: async () => ({ body: OPEN_POLICY }),
  explainPolicy: async () => ({ body: { subject: { groups: ["eng"] }, entry: { kind: "tool", name: "x" } } }),
  viewPolicy: async () => ({ body: { subject: {} } }),
  dryRunPolicy: async () => ({ body: { policy: OPEN_POLICY, subjects: [{}] } }),
  revokeUserAccount: async (tenant, n) => {
    const records = new AccountStore(portico.store, portico.keys, new Secrets(TEST_SECRET));
    const subject = `sub-${n}`;
    await records.put(tenant, subject, "docs", {
      accessToken: "a",
      issuer: "https://as.example",
      clientId: "c",
      mode: "preregistered",
      connectedAt: new Date().toISOString(),
      destinations: [],
    });
    return {
      ids: { subject },
      exists: async () => (await records.get(tenant, subject, "docs")) !== undefined,
    };
  },
  createPlatformUser: async (_t, n) => ({ body: { username: `pu-${n}`, password: "correct horse battery" } }),
  updatePlatformUser: async () => ({
    ids: { user: await createPlatformUser() },
    body: { password: "new horse battery" },
  }),
  deletePlatformUser: async () => {
    const user = await createPlatformUser();
    return {
      ids: { user },
      exists: async () =>
        (await admin.get("/platform-users")).body.items.some(
          (u: { username: string }) => u.username === user,
        ),
    };
  },
  addTenantAdmin: async (_t, n) => ({ ids: { subject: `admin-${n}` } }),
  removeTenantAdmin: async (tenant, n) => {
    const subject = `admin-${n}`;
    assert.equal((await admin.put(`/tenants/${tenant}/admins/${subject}`, undefined)).status, 204);
    return {
      ids: { subject },
      exists: async () => (await admin.get(`/tenants/${tenant}/admins`)).body.items.includes(subject),
    };
  },
  tryTenant: async () => ({ body: { method: "prompts/list" } }),
  revokePlatformApiKey: async () => {
    const { id } = await createKey("/api-keys");
    return { ids: { key: id }, exists: keyAlive("/api-keys", id) };
  },
};

/** A call of `op` on `tenant`'s resources, with whatever it needs made first (by the platform key). */
async function targetOf(op: Operation, tenant: string): Promise<Target> {
  const made = (await FIXTURES[op.id]?.(tenant, nonce())) ?? {};
  const ids = {
    tenant,
    provider: "docs",
    session: sessions[tenant] ?? "no-session-of-this-tenant",
    key: tenantKeys[tenant]?.id ?? "key_0000000000000000",
    ...made.ids,
  };
  return { path: concretePath(op, ids), body: made.body, exists: made.exists };
}

function send(op: Operation, target: Target, caller: Caller): Promise<AdminResponse> {
  return admin.call(op.method.toUpperCase(), target.path, {
    ...(target.body === undefined ? {} : { body: target.body }),
    token: caller.token,
    ...(caller.authorization ? { headers: { authorization: caller.authorization } } : {}),
  });
}

const where = (op: Operation, caller: Caller, res: AdminResponse) =>
  `${caller.name}: ${op.method.toUpperCase()} ${op.path} → ${res.status} ${JSON.stringify(res.body)}`;

/** The newest entry of each audit log: unchanged means nothing was written. */
async function auditHeads(): Promise<(string | undefined)[]> {
  const logs = ["/audit", "/tenants/acme/audit", "/tenants/other/audit"];
  return Promise.all(logs.map(async (log) => (await admin.get(`${log}?limit=1`)).body.items[0]?.id));
}

/** A 2xx the document lists for the operation. */
function assertSucceeded(op: Operation, caller: Caller, res: AdminResponse): void {
  const documented = Object.keys(op.responses).map(Number);
  assert.ok(res.status < 300 && documented.includes(res.status), where(op, caller, res));
}

/** What a response says, with the tenant id it names made neutral, to compare two responses. */
function shape(res: AdminResponse, tenant: string) {
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    etag: res.headers.get("etag"),
    body: JSON.parse(JSON.stringify(res.body ?? null).replaceAll(tenant, "<tenant>")),
  };
}

before(async () => {
  portico = await startPortico({
    tenants: [staticTenant("acme"), staticTenant("other")],
    redis: true,
    env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  admin = new AdminClient(portico.url);
  // The short-lived key first: the rest of the set-up runs while it expires.
  const expiresAt = Date.now() + 1500;
  const expiring = await createKey("/tenants/acme/api-keys", new Date(expiresAt).toISOString());
  assert.equal((await admin.get("/tenants/acme/providers", { token: expiring.token })).status, 200);

  for (const tenant of ["acme", "other"]) {
    sessions[tenant] = await openSession(portico.mcpUrl(tenant));
    tenantKeys[tenant] = await createKey(`/tenants/${tenant}/api-keys`);
  }
  platformApiKey = (await createKey("/api-keys")).token;
  const revoked = await createKey("/tenants/acme/api-keys");
  assert.equal((await admin.get("/tenants/acme/providers", { token: revoked.token })).status, 200);
  assert.equal((await admin.delete(`/tenants/acme/api-keys/${revoked.id}`)).status, 204);

  bad.push(
    { name: "no key", token: null },
    { name: "a garbage key", token: "garbage" },
    { name: "an unknown key of the right shape", token: `portico_${"A".repeat(43)}` },
    { name: "a Basic Authorization header", token: null, authorization: "Basic YWRtaW46YWRtaW4=" },
    { name: "the platform key in the wrong scheme", token: null, authorization: `Token ${ADMIN_TOKEN}` },
    { name: "a revoked key", token: revoked.token },
    { name: "an expired key", token: expiring.token },
  );
  await sleep(Math.max(0, expiresAt + 50 - Date.now()));
});

after(async () => {
  await portico?.close();
});

it("every operation is public, platform, tenant or any", () => {
  assert.ok(OPERATIONS.length > 20);
  for (const op of OPERATIONS) assert.ok(["public", "platform", "tenant", "any"].includes(op.access), op.id);
});

describe("the public route", () => {
  for (const op of OPERATIONS.filter((o) => o.access === "public"))
    it(`${op.method.toUpperCase()} ${op.path} answers 200 with no key, a bad key or a tenant key`, async () => {
      const target = await targetOf(op, "acme");
      for (const caller of [...bad, { name: "acme's key", token: tenantKeys.acme!.token }]) {
        const res = await send(op, target, caller);
        assert.equal(res.status, 200, where(op, caller, res));
        if (op.id === "getOpenApi") assert.equal(res.body.openapi, "3.1.0");
      }
    });
});

describe("without a valid key: 401 with a Bearer challenge, and nothing done", () => {
  for (const op of OPERATIONS.filter((o) => o.access !== "public"))
    it(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const target = await targetOf(op, REMOVES_TENANT.has(op.id) ? await freshTenant() : "acme");
      const heads = await auditHeads();
      for (const caller of bad) {
        const res = await send(op, target, caller);
        assert.equal(res.status, 401, where(op, caller, res));
        assert.equal(res.body.code, "PORTICO_ERR_ADMIN_UNAUTHENTICATED");
        const challenge = res.headers.get("www-authenticate") ?? "";
        assert.match(challenge, /^Bearer realm="portico-admin"/, where(op, caller, res));
        // RFC 6750 §3.1: a request without credentials gets no error code; a failed key gets invalid_token.
        if (caller.token === null && caller.authorization === undefined)
          assert.doesNotMatch(challenge, /error=/, where(op, caller, res));
        else if (caller.token !== null)
          assert.match(challenge, /error="invalid_token"/, where(op, caller, res));
      }
      if (target.exists) assert.ok(await target.exists(), `${op.id}: the target is still there`);
      assert.deepEqual(await auditHeads(), heads, `${op.id}: no audit entry`);
    });

  it("says why a presented key failed", async () => {
    const [revoked, expired] = [bad.at(-2)!, bad.at(-1)!];
    const r = await admin.get("/tenants/acme/providers", { token: revoked.token });
    assert.match(r.body.detail, /revoked/);
    const e = await admin.get("/tenants/acme/providers", { token: expired.token });
    assert.match(e.body.detail, /expired/);
    assert.match(e.headers.get("www-authenticate") ?? "", /error_description="The key has expired"/);
  });
});

describe("platform keys: every route works", () => {
  for (const op of OPERATIONS.filter((o) => o.access !== "public"))
    it(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const callers: Caller[] = [
        { name: "PORTICO_ADMIN_TOKEN", token: ADMIN_TOKEN },
        { name: "a platform API key", token: platformApiKey },
      ];
      for (const caller of callers) {
        const target = await targetOf(op, REMOVES_TENANT.has(op.id) ? await freshTenant() : "acme");
        const res = await send(op, target, caller);
        assertSucceeded(op, caller, res);
        if (target.exists) assert.equal(await target.exists(), false, `${op.id}: the target is gone`);
      }
    });
});

describe("a tenant key on its own tenant", () => {
  for (const own of ["acme", "other"])
    for (const op of OPERATIONS.filter((o) => o.access !== "public"))
      it(`${own}'s key: ${op.method.toUpperCase()} ${op.path} ${op.access === "platform" ? "is 403" : "works"}`, async () => {
        const caller: Caller = { name: `${own}'s key`, token: tenantKeys[own]!.token };
        const target = await targetOf(op, own);
        if (op.access !== "platform") {
          const res = await send(op, target, caller);
          assertSucceeded(op, caller, res);
          if (target.exists) assert.equal(await target.exists(), false, `${op.id}: the target is gone`);
          return;
        }
        const heads = await auditHeads();
        const res = await send(op, target, caller);
        assert.equal(res.status, 403, where(op, caller, res));
        assert.equal(res.body.code, "PORTICO_ERR_ADMIN_FORBIDDEN");
        if (target.exists) assert.ok(await target.exists(), `${op.id}: the target is still there`);
        assert.deepEqual(await auditHeads(), heads, `${op.id}: no audit entry`);
      });
});

it("a tenant key reads its own tenant's settings: the platform's view of it, no configuration or secret", async () => {
  const own = await admin.get("/tenants/acme", { token: tenantKeys.acme!.token });
  assert.equal(own.status, 200);
  assert.deepEqual(own.body, (await admin.get("/tenants/acme")).body);
  const shown = ["id", "name", "auth", "limits", "pinning", "mcpUrl", "providers", "createdAt", "updatedAt"];
  for (const member of Object.keys(own.body)) assert.ok(shown.includes(member), member);
  assert.equal(typeof own.body.providers, "number", "a count, not the providers' configuration");
});

describe("a tenant key on another tenant: the 404 of a tenant that does not exist", () => {
  for (const [own, foreign] of [
    ["acme", "other"],
    ["other", "acme"],
  ] as const)
    for (const op of OPERATIONS.filter((o) => o.path.includes("{tenant}")))
      it(`${own}'s key: ${op.method.toUpperCase()} ${op.path} of ${foreign}`, async () => {
        const caller: Caller = { name: `${own}'s key`, token: tenantKeys[own]!.token };
        const tenant = REMOVES_TENANT.has(op.id) ? await freshTenant() : foreign;
        const target = await targetOf(op, tenant);
        const heads = await auditHeads();
        const res = await send(op, target, caller);
        assert.equal(res.status, 404, where(op, caller, res));
        // Existence is not revealed: the answer is the one for a tenant that was never created.
        const ghostPath = target.path.replace(`/tenants/${tenant}`, `/tenants/${NO_SUCH_TENANT}`);
        const ghost = await send(op, { ...target, path: ghostPath }, caller);
        assert.deepEqual(shape(res, tenant), shape(ghost, NO_SUCH_TENANT), where(op, caller, res));
        if (target.exists) assert.ok(await target.exists(), `${op.id}: the target is still there`);
        assert.deepEqual(await auditHeads(), heads, `${op.id}: no audit entry`);
      });
});

describe("the key is checked before the body is read", () => {
  for (const op of OPERATIONS.filter((o) => o.body))
    it(`${op.method.toUpperCase()} ${op.path} with a malformed or non-JSON body`, async () => {
      const path = concretePath(op, { tenant: "other", provider: "docs", key: "key_0000000000000000" });
      const bodies: CallOptions[] = [
        { raw: "{bad" },
        { raw: "x", headers: { "content-type": "text/plain" } },
      ];
      const acme = tenantKeys.acme!.token;
      for (const body of bodies) {
        for (const caller of bad) {
          const auth: Record<string, string> = caller.authorization
            ? { authorization: caller.authorization }
            : {};
          const res = await admin.call(op.method.toUpperCase(), path, {
            ...body,
            token: caller.token,
            headers: { ...body.headers, ...auth },
          });
          assert.equal(res.status, 401, `${caller.name}: ${op.id} → ${res.status}`);
        }
        // A tenant key learns nothing from another tenant's routes, and is refused platform routes.
        const res = await admin.call(op.method.toUpperCase(), path, { ...body, token: acme });
        assert.equal(res.status, path.includes("/tenants/other") ? 404 : 403, `${op.id} → ${res.status}`);
      }
    });
});

describe("tenant keys and ids of another scope", () => {
  it("acme's key cannot reach other's session through acme's path", async () => {
    const token = tenantKeys.acme!.token;
    const sid = sessions.other!;
    assert.equal((await admin.get(`/tenants/acme/sessions/${sid}`, { token })).status, 404);
    assert.equal((await admin.delete(`/tenants/acme/sessions/${sid}`, { token })).status, 404);
    assert.equal((await admin.get(`/tenants/other/sessions/${sid}`)).status, 200, "still live");
  });

  it("acme's key cannot revoke other's key or a platform key through acme's path", async () => {
    const token = tenantKeys.acme!.token;
    const platform = await createKey("/api-keys");
    for (const id of [tenantKeys.other!.id, platform.id]) {
      const res = await admin.delete(`/tenants/acme/api-keys/${id}`, { token });
      assert.equal(res.status, 404);
    }
    assert.equal(
      (await admin.get("/tenants/other/providers", { token: tenantKeys.other!.token })).status,
      200,
    );
    assert.equal((await admin.get("/tenants", { token: platform.token })).status, 200);
  });

  it("a tenant key is no platform key: /api-keys cannot revoke it", async () => {
    const res = await admin.delete(`/api-keys/${tenantKeys.acme!.id}`);
    assert.equal(res.status, 404);
    assert.equal((await admin.get("/tenants/acme/providers", { token: tenantKeys.acme!.token })).status, 200);
  });

  it("a key made with acme's key is acme's, and its writes are audited under the key", async () => {
    const { token, id } = tenantKeys.acme!;
    const made = await admin.post("/tenants/acme/api-keys", { name: "made by acme" }, { token });
    assert.equal(made.status, 201);
    assert.equal(made.body.tenant, "acme");
    assert.match(made.body.createdBy, new RegExp(`^api-key:${id} `));
    assert.equal((await admin.get("/tenants/other/providers", { token: made.body.token })).status, 404);
    assert.equal((await admin.get("/tenants", { token: made.body.token })).status, 403);
    const audit = await admin.get("/tenants/acme/audit?limit=1");
    assert.equal(audit.body.items[0].action, "api-key.create");
    assert.match(audit.body.items[0].actor, new RegExp(`^api-key:${id} `));
  });

  it("a deleted tenant's keys stop working, even when a tenant of that id is created again", async () => {
    const tenant = await freshTenant();
    const key = await createKey(`/tenants/${tenant}/api-keys`);
    assert.equal((await admin.get(`/tenants/${tenant}/providers`, { token: key.token })).status, 200);
    assert.equal((await admin.delete(`/tenants/${tenant}`)).status, 204);
    assert.equal((await admin.get(`/tenants/${tenant}/providers`, { token: key.token })).status, 401);
    assert.equal((await admin.post("/tenants", { id: tenant, auth: "none" })).status, 201);
    const res = await admin.get(`/tenants/${tenant}/providers`, { token: key.token });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  });
});
