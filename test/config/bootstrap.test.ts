// The bootstrap file (PORTICO_CONFIG): a valid file loads; every broken one names the file and the
// JSON path (or the parser's complaint) in its message.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadBootstrap, loadBootstrapFile } from "../../src/config/bootstrap.js";
import { hashPassword } from "../../src/oauth/users.js";
import { isPorticoError } from "../../src/protocol/errors.js";

let dir: string;
let count = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "portico-bootstrap-"));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(content: unknown): Promise<string> {
  const path = join(dir, `config-${++count}.json`);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

async function rejects(path: string, message: string | RegExp): Promise<void> {
  await assert.rejects(loadBootstrapFile(path), (err) => {
    assert.ok(isPorticoError(err));
    assert.equal(err.code, "PORTICO_ERR_CONFIG_INVALID");
    if (typeof message === "string") assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

const open = { id: "demo", auth: "none" };
const weather = {
  id: "weather",
  kind: "http",
  tools: [{ name: "forecast", url: "http://127.0.0.1:9/forecast" }],
};

describe("loadBootstrapFile", () => {
  it("loads the tenants of a valid file", async () => {
    const path = await file({
      $schema: "./portico.schema.json",
      tenants: [
        { ...open, providers: [weather] },
        { id: "acme", auth: "oauth" },
      ],
    });
    assert.deepEqual(await loadBootstrapFile(path), [
      { ...open, providers: [weather] },
      { id: "acme", auth: "oauth", providers: [] },
    ]);
  });

  it("accepts an empty tenant list", async () => {
    assert.deepEqual(await loadBootstrapFile(await file({ tenants: [] })), []);
  });

  it("names a file it cannot read", async () => {
    const path = join(dir, "missing.json");
    await rejects(path, `${path}: cannot read the bootstrap file (ENOENT)`);
  });

  it("names the file and the parser's complaint for broken JSON", async () => {
    const path = await file('{ "tenants": [ { "id": "demo", } ] }');
    await rejects(path, new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not valid JSON: .+`));
  });

  it("requires an object with a tenants array", async () => {
    const list = await file([open]);
    await rejects(list, `${list}: must hold a JSON object: { "tenants": [...] }`);
    const typo = await file({ tenant: [open] });
    await rejects(typo, `${typo}: tenant: unknown key (the file holds "tenants" and "platformUsers")`);
    const missing = await file({});
    await rejects(missing, `${missing}: tenants: must be an array of tenant records`);
  });

  it("names the file and the JSON path of an invalid value", async () => {
    const bad = { ...weather, tools: [{ name: "forecast", url: "file:///etc/passwd" }] };
    const path = await file({ tenants: [open, { id: "acme", auth: "none", providers: [weather, bad] }] });
    await rejects(path, `${path}: tenants[1].providers[1].tools[0].url: must be an http(s) URL`);
  });

  it("requires an explicit auth mode", async () => {
    const path = await file({ tenants: [{ id: "acme" }] });
    await rejects(path, `${path}: tenants[0].auth: is required: set "auth": "oauth" or "none" (no sign-in)`);
  });

  it("rejects duplicate tenant ids", async () => {
    const path = await file({ tenants: [open, { id: "acme", auth: "oauth" }, { ...open, auth: "oauth" }] });
    await rejects(path, `${path}: tenants[2].id: duplicate tenant id "demo" (also tenants[0])`);
  });

  it("loads virtual servers, and names the path of one that selects a provider the tenant lacks", async () => {
    const eng = { id: "eng", providers: [{ provider: "weather", tools: ["forecast"] }] };
    const path = await file({ tenants: [{ ...open, providers: [weather], servers: [eng] }] });
    assert.deepEqual(await loadBootstrapFile(path), [{ ...open, providers: [weather], servers: [eng] }]);
    const stray = await file({
      tenants: [{ ...open, providers: [weather], servers: [{ id: "x", providers: [{ provider: "wx" }] }] }],
    });
    await rejects(
      stray,
      `${stray}: tenants[0].servers[0].providers[0].provider: the tenant has no provider "wx"`,
    );
    const reserved = await file({
      tenants: [{ ...open, providers: [weather], servers: [{ ...eng, id: "sse" }] }],
    });
    await rejects(reserved, /tenants\[0\]\.servers\[0\]\.id: "sse" is reserved/);
  });
});

describe("platform users", () => {
  it("loads users with a password or a password hash", async () => {
    const hash = await hashPassword("root correct horse");
    const path = await file({
      tenants: [],
      platformUsers: [
        { username: "root", password: "root correct horse" },
        { username: "ops@example.com", passwordHash: hash },
      ],
    });
    assert.deepEqual((await loadBootstrap(path)).platformUsers, [
      { username: "root", password: "root correct horse" },
      { username: "ops@example.com", passwordHash: hash },
    ]);
    assert.deepEqual((await loadBootstrap(await file({ tenants: [] }))).platformUsers, []);
  });

  it("names the path of a broken user", async () => {
    const cases: Array<[unknown, string | RegExp]> = [
      [{ username: "root" }, 'platformUsers[0]: give exactly one of "password" and "passwordHash"'],
      [
        { username: "root", password: "x", passwordHash: "y" },
        'platformUsers[0]: give exactly one of "password" and "passwordHash"',
      ],
      [{ username: "root", password: "short" }, "platformUsers[0].password: 8 to 1024 characters"],
      [{ username: "root", passwordHash: "plain text" }, /platformUsers\[0\]\.passwordHash: a scrypt hash/],
      [{ username: "../root", password: "long enough" }, /platformUsers\[0\]\.username: 1–64 characters/],
      [{ username: "root", password: "long enough", admin: true }, "platformUsers[0].admin: unknown key"],
    ];
    for (const [user, message] of cases) {
      const path = await file({ tenants: [], platformUsers: [user] });
      await assert.rejects(loadBootstrap(path), (err) => {
        assert.ok(isPorticoError(err));
        const text = err.message.slice(path.length + 2);
        if (typeof message === "string") assert.equal(text, message);
        else assert.match(text, message);
        return true;
      });
    }
    const twice = await file({
      tenants: [],
      platformUsers: [
        { username: "root", password: "long enough" },
        { username: "root", password: "long enough" },
      ],
    });
    await assert.rejects(
      loadBootstrap(twice),
      /platformUsers\[1\]\.username: duplicate platform user "root"/,
    );
  });
});
