// Login brute force (docs/security.md "Login brute force"): a back-off per (username, address) and
// an account-wide one, kept in Redis so replicas agree, checked before the password is hashed; one
// answer for a wrong password, an unknown user and a back-off; an audit entry, a metric, and an
// admin call that clears it; a stranger cannot lock the user out of a clean address. Plus the
// per-IP rate limits of /oauth/login, /oauth/consent and /oauth/token, in each surface's format.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { UserStore } from "../../src/oauth/users.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { formOf, TestOAuthClient } from "../support/oauth.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { parseExposition, sumOf } from "../support/prometheus.js";
import { freePort, uniquePrefix } from "../support/redis.js";

const PASSWORD = "correct horse battery staple";
const GENERIC = /Wrong username or password, or too many attempts/;
const tenants = [{ ...staticTenant("acme"), auth: "oauth" as const }];
const env = {
  PORTICO_TRUSTED_PROXIES: "127.0.0.1/32",
  PORTICO_ADMIN_TOKEN: ADMIN_TOKEN,
  PORTICO_LOGIN_THROTTLE_FAILURES: "5",
  PORTICO_LOGIN_THROTTLE_ACCOUNT_FAILURES: "12",
  // Out of the way here; their own block below sets them low.
  PORTICO_RATE_LIMIT_OAUTH_LOGIN_REQUESTS_PER_MINUTE: "1000",
  PORTICO_RATE_LIMIT_OAUTH_CONSENT_REQUESTS_PER_MINUTE: "1000",
};

let one: RunningPortico;
let two: RunningPortico;
let client: TestOAuthClient;
let users: UserStore;
/** Reads of each user record: UserStore.verify reads it before it hashes, so no read, no hash. */
const userReads = new Map<string, number>();

before(async () => {
  const redisPrefix = uniquePrefix();
  // Two replicas behind one public URL, sharing Redis.
  const port = await freePort();
  const shared = { ...env, PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` };
  one = await startPortico({ tenants, redisPrefix, env: { ...shared, PORT: String(port) } });
  two = await startPortico({ tenants, redisPrefix, env: shared });
  users = new UserStore(one.store, one.keys);
  const names = ["ada", "bob", "cyd", "dee", "dee2", "dee3", "eve", "fay", "gus", "hal", "ivy", "jan"];
  for (const username of [...names, "lou", "max"])
    await users.create("acme", { username, password: PASSWORD });
  for (const portico of [one, two]) {
    const get = portico.store.get.bind(portico.store);
    portico.store.get = (key: string) => {
      const user = /:user:(.+)$/.exec(key)?.[1];
      if (user !== undefined) userReads.set(user, (userReads.get(user) ?? 0) + 1);
      return get(key);
    };
  }
  client = await TestOAuthClient.register(one.url);
});
after(async () => {
  await one?.close();
  await two?.close();
});

/** A login form of a fresh authorization request on `portico`: its cookie and hidden fields. */
async function loginForm(portico: RunningPortico) {
  const { url } = await client.authorizationUrl("acme");
  const page = await fetch(new URL(url.pathname + url.search, portico.url), { redirect: "manual" });
  assert.equal(page.status, 200);
  return { cookie: page.headers.get("set-cookie")!.split(";")[0]!, fields: formOf(await page.text()) };
}

type Form = Awaited<ReturnType<typeof loginForm>>;

/** Posts the login form from client address `ip`. */
async function login(portico: RunningPortico, form: Form, ip: string, username: string, password: string) {
  const res = await fetch(`${portico.url}/oauth/login`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: form.cookie,
      "x-forwarded-for": ip,
    },
    body: new URLSearchParams({ ...form.fields, username, password }),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** Signed in: the consent page (200) or straight back to the client (303). */
const signedIn = (r: { status: number; body: string }) =>
  r.status === 303 || (r.status === 200 && /decision/.test(r.body));

/** The page without the per-request parts (flow id, CSRF token, CSP nonce-free anyway). */
const shape = (html: string) => html.replace(/value="[A-Za-z0-9_-]{22}"/g, 'value="…"');

async function throttled(portico: RunningPortico, scope: "address" | "account") {
  return sumOf(parseExposition(await portico.metrics.scrape()), "portico_oauth_login_throttled_total", {
    scope,
  });
}

describe("per-address back-off", () => {
  it("after 5 failures the address is refused, with the wrong-password page and without hashing", async () => {
    const form = await loginForm(one);
    const ip = "203.0.113.10";
    for (let i = 0; i < 5; i++) {
      const wrong = await login(one, form, ip, "ada", `guess-${i}`);
      assert.equal(wrong.status, 401);
      assert.match(wrong.body, GENERIC);
    }
    const readsBefore = userReads.get("ada") ?? 0;
    const metricBefore = await throttled(one, "address");
    // Even the right password: the back-off is checked before the password is.
    const refused = await login(one, form, ip, "ada", PASSWORD);
    assert.equal(refused.status, 401);
    assert.match(refused.body, GENERIC);
    assert.doesNotMatch(refused.body, /locked|throttl|blocked|seconds/i);
    assert.equal(userReads.get("ada") ?? 0, readsBefore, "the user was not read, the password not hashed");
    assert.equal(await throttled(one, "address"), metricBefore + 1);
  });

  it("is shared by replicas: failures on one, refusal on the other", async () => {
    const ip = "203.0.113.11";
    const formOne = await loginForm(one);
    for (let i = 0; i < 5; i++) assert.equal((await login(one, formOne, ip, "bob", `x${i}`)).status, 401);
    const formTwo = await loginForm(two);
    const readsBefore = userReads.get("bob") ?? 0;
    const refused = await login(two, formTwo, ip, "bob", PASSWORD);
    assert.equal(refused.status, 401);
    assert.match(refused.body, GENERIC);
    assert.equal(userReads.get("bob") ?? 0, readsBefore, "replica two did not hash either");
    // The user, from their own address, still gets in on either replica.
    assert.ok(signedIn(await login(two, formTwo, "198.51.100.7", "bob", PASSWORD)));
  });

  it("reads the same for a user that does not exist: same status, same page", async () => {
    const ip = "203.0.113.12";
    const form = await loginForm(one);
    for (let i = 0; i < 5; i++) await login(one, form, ip, "nobody-here", `x${i}`);
    for (let i = 0; i < 5; i++) await login(one, form, ip, "cyd", `x${i}`);
    const ghost = await login(one, form, ip, "nobody-here", "whatever");
    const real = await login(one, form, ip, "cyd", PASSWORD);
    const wrong = await login(one, form, "203.0.113.13", "cyd", "not it");
    assert.deepEqual([ghost.status, real.status, wrong.status], [401, 401, 401]);
    assert.equal(shape(ghost.body).replace("nobody-here", "cyd"), shape(real.body));
    assert.equal(shape(real.body), shape(wrong.body), "a back-off reads exactly like a wrong password");
    assert.equal(real.headers.get("retry-after"), null);
  });

  it("a refusal takes about as long as a password check (its timing does not tell)", async () => {
    const form = await loginForm(one);
    // One sample of each, up to three times with other names: a test process starved of CPU
    // during one check must not fail it, while a refusal that skips the work fails all three.
    const seen: string[] = [];
    for (const [n, username] of ["dee", "dee2", "dee3"].entries()) {
      const ip = `203.0.113.${140 + 2 * n}`;
      for (let i = 0; i < 5; i++) await login(one, form, ip, username, `x${i}`);
      let t = performance.now();
      await login(one, form, `203.0.113.${141 + 2 * n}`, username, "wrong");
      const checked = performance.now() - t;
      t = performance.now();
      await login(one, form, ip, username, "wrong");
      const refused = performance.now() - t;
      if (refused > checked * 0.3) return;
      seen.push(`refused in ${refused.toFixed(0)} ms, a check took ${checked.toFixed(0)} ms`);
    }
    assert.fail(seen.join("; "));
  });

  it("a burst of parallel guesses gets no more password checks than the threshold", async () => {
    const ip = "203.0.113.17";
    const form = await loginForm(one);
    const readsBefore = userReads.get("hal") ?? 0;
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => login(i % 2 ? one : two, form, ip, "hal", `burst-${i}`)),
    );
    assert.ok(answers.every((a) => a.status === 401 && GENERIC.test(a.body)));
    const checks = (userReads.get("hal") ?? 0) - readsBefore;
    // 5 checks (the threshold), and 1 read of the record to audit the back-off's start.
    assert.ok(checks <= 6, `${checks} user reads for 24 parallel guesses on two replicas`);
  });

  it("the back-off ends (1 s after the 5th failure, 2 s after the 6th), however often the address was refused", async () => {
    const ip = "203.0.113.18";
    const form = await loginForm(one);
    for (let i = 0; i < 5; i++) await login(one, form, ip, "ivy", `x${i}`);
    const refused = await Promise.all(
      Array.from({ length: 10 }, () => login(two, form, ip, "ivy", PASSWORD)),
    );
    assert.deepEqual(new Set(refused.map((r) => r.status)), new Set([401]));
    await new Promise((r) => setTimeout(r, 1100));
    // One more guess is checked (the 6th): a 2 s back-off, not one grown by the 10 refusals.
    const reads = userReads.get("ivy") ?? 0;
    assert.equal((await login(one, form, ip, "ivy", "x5")).status, 401);
    assert.equal(userReads.get("ivy"), reads + 1, "checked");
    await new Promise((r) => setTimeout(r, 2100));
    assert.ok(signedIn(await login(two, form, ip, "ivy", PASSWORD)), "refusals did not lengthen it");
  });

  it("a success resets the address's count", async () => {
    const ip = "203.0.113.16";
    const form = await loginForm(one);
    for (let i = 0; i < 4; i++) await login(one, form, ip, "eve", `x${i}`);
    assert.ok(signedIn(await login(one, form, ip, "eve", PASSWORD)));
    const again = await loginForm(one);
    for (let i = 0; i < 4; i++) assert.equal((await login(one, again, ip, "eve", `y${i}`)).status, 401);
    assert.ok(signedIn(await login(one, again, ip, "eve", PASSWORD)), "4 new failures: not yet in back-off");
  });
});

describe("hostile input at the login form", () => {
  it("odd usernames get the same generic 401, never a 500", async () => {
    const form = await loginForm(one);
    for (const username of [
      "x".repeat(5000),
      "ada\u0000",
      "ädä 🙂",
      "../../etc",
      "ada:ip:1.2.3.4",
      "{t:other}",
    ]) {
      const res = await login(one, form, "203.0.113.40", username, "pw");
      assert.equal(res.status, 401, username.slice(0, 20));
      assert.match(res.body, GENERIC);
    }
  });

  it("an overlong username is not echoed back into the page (usernames have at most 64 characters)", async () => {
    const form = await loginForm(one);
    const page = await login(one, form, "203.0.113.42", "u".repeat(200_000), "pw");
    assert.equal(page.status, 401);
    assert.match(page.body, GENERIC);
    assert.ok(page.body.length < 10_000, `${page.body.length} characters answered`);
    const typo = await login(one, form, "203.0.113.42", "ada-typo", "pw");
    assert.match(typo.body, /value="ada-typo"/, "a plausible username is kept in the form");
  });

  it("an empty password is refused without a check and counts toward nothing", async () => {
    const form = await loginForm(one);
    const reads = userReads.get("jan") ?? 0;
    for (let i = 0; i < 8; i++) assert.equal((await login(one, form, "203.0.113.41", "jan", "")).status, 401);
    assert.equal(userReads.get("jan") ?? 0, reads);
    assert.ok(signedIn(await login(one, form, "203.0.113.41", "jan", PASSWORD)));
  });

  it("without trusted proxies, X-Forwarded-For does not give a guesser new addresses", async () => {
    const port = await freePort();
    const direct = await startPortico({
      tenants,
      redis: true,
      env: { PORT: String(port), PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}` },
    });
    try {
      await new UserStore(direct.store, direct.keys).create("acme", { username: "kim", password: PASSWORD });
      const other = await TestOAuthClient.register(direct.url);
      const { url } = await other.authorizationUrl("acme");
      const page = await fetch(url, { redirect: "manual" });
      const form = {
        cookie: page.headers.get("set-cookie")!.split(";")[0]!,
        fields: formOf(await page.text()),
      };
      for (let i = 0; i < 5; i++) await login(direct, form, `198.18.0.${i + 1}`, "kim", `x${i}`);
      const refused = await login(direct, form, "198.18.0.99", "kim", PASSWORD);
      assert.equal(refused.status, 401, "the peer address is the one counted");
    } finally {
      await direct.close();
    }
  });
});

describe("account-wide back-off", () => {
  it("slows addresses that failed on the name, never a clean one: the user is not locked out", async () => {
    const form = await loginForm(one);
    // A spray from 12 addresses, 1 guess each: the account-wide ceiling (12) is reached.
    for (let i = 0; i < 12; i++) await login(one, form, `192.0.2.${i + 1}`, "fay", `spray-${i}`);
    const readsBefore = userReads.get("fay") ?? 0;
    const metricBefore = await throttled(one, "account");
    // A sprayed address, even with the right password, is refused without a hash.
    const sprayed = await login(one, form, "192.0.2.3", "fay", PASSWORD);
    assert.equal(sprayed.status, 401);
    assert.match(sprayed.body, GENERIC);
    assert.equal(userReads.get("fay") ?? 0, readsBefore);
    assert.equal(await throttled(one, "account"), metricBefore + 1);
    // The user, from an address with no failure on the name, signs in, on either replica.
    assert.ok(signedIn(await login(two, await loginForm(two), "198.51.100.20", "fay", PASSWORD)));
  });

  it("spares an address the user signed in from, even after a typo there during the spray", async () => {
    const home = "198.51.100.40";
    assert.ok(signedIn(await login(one, await loginForm(one), home, "lou", PASSWORD)));
    const form = await loginForm(one);
    for (let i = 0; i < 12; i++) await login(one, form, `192.0.2.${i + 101}`, "lou", `spray-${i}`);
    // The user mistypes once at home while the spray goes on, then types it right: signed in.
    assert.equal((await login(two, await loginForm(two), home, "lou", "typo")).status, 401);
    await login(one, form, "192.0.2.200", "lou", "spray-more");
    assert.ok(signedIn(await login(two, await loginForm(two), home, "lou", PASSWORD)));
    // A sprayed address that never signed in is still refused, right password or not.
    assert.equal((await login(one, form, "192.0.2.101", "lou", PASSWORD)).status, 401);
  });
});

describe("account-wide back-off and IPv6", () => {
  it("a stranger hopping /64s of one /48 is refused at a new /64; another site and the user are not", async () => {
    const form = await loginForm(one);
    for (let i = 0; i < 12; i++) await login(one, form, `2001:db8:aa:${i + 1}::7`, "max", `spray-${i}`);
    const readsBefore = userReads.get("max") ?? 0;
    // A /64 of the same /48 that has not tried yet: refused, right password or not, with no hash.
    const hop = await login(two, await loginForm(two), "2001:db8:aa:99::7", "max", PASSWORD);
    assert.equal(hop.status, 401);
    assert.match(hop.body, GENERIC);
    assert.equal(userReads.get("max") ?? 0, readsBefore);
    // Another /48, and an IPv4 address, that never failed on the name: signed in.
    assert.ok(signedIn(await login(one, await loginForm(one), "2001:db8:bb:1::7", "max", PASSWORD)));
    assert.ok(signedIn(await login(one, await loginForm(one), "198.51.100.77", "max", PASSWORD)));
  });
});

describe("audit and the admin clear", () => {
  const admin = () => new AdminClient(one.url);

  it("records a back-off's start once, for users that exist only", async () => {
    const ip = "203.0.113.30";
    const form = await loginForm(one);
    // Passwords with a "!", which no MAC or id in the log (base64url, hex) can contain by chance.
    for (let i = 0; i < 8; i++) await login(one, form, ip, "gus", `pw!${i}`);
    for (let i = 0; i < 6; i++) await login(one, form, ip, "ghost-user", `pw!${i}`);
    const audit = await admin().get("/tenants/acme/audit");
    assert.equal(audit.status, 200);
    const entries = (
      audit.body.items as { action: string; target: string; actor: string; after: any }[]
    ).filter((e) => e.action === "user.login-throttled");
    const gus = entries.filter((e) => e.target === "gus");
    assert.equal(gus.length, 1, "one entry per back-off, not one per attempt");
    assert.deepEqual(gus[0]!.after, { scope: "address", address: `ip:${ip}`, failures: 5 });
    assert.equal(gus[0]!.actor, "portico");
    assert.ok(!entries.some((e) => e.target === "ghost-user"), "made-up names stay out of the log");
    assert.ok(!JSON.stringify(audit.body).includes("pw!"), "no password in the audit log");
  });

  it("DELETE …/users/{user}/throttle clears every address's back-off at once", async () => {
    const ip = "203.0.113.31";
    const form = await loginForm(one);
    for (let i = 0; i < 6; i++) await login(one, form, ip, "ada", `x${i}`);
    assert.equal((await login(one, form, ip, "ada", PASSWORD)).status, 401);
    const cleared = await admin().delete("/tenants/acme/users/ada/throttle");
    assert.equal(cleared.status, 204);
    assert.ok(
      signedIn(await login(two, await loginForm(two), ip, "ada", PASSWORD)),
      "cleared for every replica",
    );
    const audit = await admin().get("/tenants/acme/audit");
    assert.ok(
      (audit.body.items as { action: string; target: string }[]).some(
        (e) => e.action === "user.throttle-clear" && e.target === "ada",
      ),
    );
  });

  it("the clear needs the tenant's admin and an existing user", async () => {
    assert.equal((await admin().delete("/tenants/acme/users/nobody/throttle")).status, 404);
    const anonymous = await admin().delete("/tenants/acme/users/ada/throttle", { token: "" });
    assert.equal(anonymous.status, 401);
  });
});

describe("rate limits of the login, consent and token endpoints", () => {
  let limited: RunningPortico;
  before(async () => {
    const port = await freePort();
    limited = await startPortico({
      tenants,
      redis: true,
      env: {
        PORT: String(port),
        PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
        PORTICO_TRUSTED_PROXIES: "127.0.0.1/32",
        PORTICO_RATE_LIMIT_OAUTH_LOGIN_REQUESTS_PER_MINUTE: "3",
        PORTICO_RATE_LIMIT_OAUTH_CONSENT_REQUESTS_PER_MINUTE: "2",
        PORTICO_RATE_LIMIT_OAUTH_REQUESTS_PER_MINUTE: "2",
        PORTICO_RATE_LIMIT_OAUTH_AUTHORIZE_REQUESTS_PER_MINUTE: "3",
      },
    });
  });
  after(() => limited?.close());
  // The limits count per fixed minute: a test that crossed into the next one would start over
  // mid-test. Each starts at least 10 s before a minute ends.
  beforeEach(async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 50));
  });

  const post = (path: string, ip: string, body: string, type = "application/x-www-form-urlencoded") =>
    fetch(`${limited.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": type, "x-forwarded-for": ip },
      body,
    });

  it("/oauth/login: 429 with Retry-After and an HTML page, per address", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await post("/oauth/login", "203.0.113.50", "flow=x&csrf=y")).status);
    assert.deepEqual(statuses, [400, 400, 400, 429]);
    const refused = await post("/oauth/login", "203.0.113.50", "flow=x&csrf=y");
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    assert.match(refused.headers.get("content-type")!, /text\/html/);
    assert.equal(refused.headers.get("x-frame-options"), "DENY");
    assert.match(await refused.text(), /Too many requests/);
    assert.equal(
      (await post("/oauth/login", "203.0.113.51", "flow=x&csrf=y")).status,
      400,
      "another address",
    );
  });

  it("/oauth/consent: 429 page past its own limit", async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await post("/oauth/consent", "203.0.113.52", "flow=x")).status);
    assert.deepEqual(statuses, [400, 400, 429]);
  });

  it("/oauth/authorize: each request holds a pending sign-in, so past its limit a 429 page and no flow", async () => {
    const { url } = await (await TestOAuthClient.register(limited.url)).authorizationUrl("acme");
    const get = (ip: string) =>
      fetch(new URL(url.pathname + url.search, limited.url), {
        redirect: "manual",
        headers: { "x-forwarded-for": ip },
      });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get("203.0.113.55")).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const refused = await get("203.0.113.55");
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("set-cookie"), null, "no flow was created");
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    assert.match(refused.headers.get("content-type")!, /text\/html/);
    assert.equal(refused.headers.get("x-frame-options"), "DENY");
    assert.equal((await get("203.0.113.56")).status, 200, "another address");
  });

  it("the accounts pages start a sign-in (a pending flow) too: limited like /oauth/authorize", async () => {
    const get = (ip: string) =>
      fetch(`${limited.url}/accounts/tenant/acme`, {
        redirect: "manual",
        headers: { "x-forwarded-for": ip },
      });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get("203.0.113.59")).status);
    assert.deepEqual(statuses, [303, 303, 303, 429]);
    const refused = await get("203.0.113.59");
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("set-cookie"), null, "no flow was created");
    assert.match(refused.headers.get("content-type")!, /text\/html/);
    assert.equal((await get("203.0.113.60")).status, 303, "another address");
  });

  it("/oauth/token: 429 with RFC 6749 JSON", async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await post("/oauth/token", "203.0.113.53", "grant_type=authorization_code")).status);
    assert.deepEqual(statuses, [401, 401, 429]);
    const refused = await post("/oauth/token", "203.0.113.53", "grant_type=authorization_code");
    assert.equal(refused.headers.get("cache-control"), "no-store");
    assert.equal(((await refused.json()) as { error: string }).error, "temporarily_unavailable");
  });

  it("/oauth/revoke: limited like the token endpoint (it authenticates the same client secrets)", async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push(
        (await post("/oauth/revoke", "203.0.113.57", "token=x&client_id=c&client_secret=guess")).status,
      );
    assert.deepEqual(statuses, [401, 401, 429]);
    const refused = await post("/oauth/revoke", "203.0.113.57", "token=x&client_id=c&client_secret=guess");
    assert.equal(((await refused.json()) as { error: string }).error, "temporarily_unavailable");
    assert.equal(
      (await post("/oauth/revoke", "203.0.113.58", "token=x&client_id=c&client_secret=guess")).status,
      401,
      "another address",
    );
  });

  it("0 turns a limit off", async () => {
    const open = await startPortico({
      tenants,
      env: {
        PORTICO_TRUSTED_PROXIES: "127.0.0.1/32",
        PORTICO_RATE_LIMIT_OAUTH_LOGIN_REQUESTS_PER_MINUTE: "0",
      },
    });
    try {
      for (let i = 0; i < 40; i++) {
        const res = await fetch(`${open.url}/oauth/login`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "203.0.113.54" },
          body: "flow=x",
        });
        assert.equal(res.status, 400);
      }
    } finally {
      await open.close();
    }
  });
});

it("the default limits are on", async () => {
  const { loadConfig } = await import("../../src/config/env.js");
  const config = loadConfig({});
  assert.equal(config.oauthLoginRequestsPerMinute, 30);
  assert.equal(config.oauthConsentRequestsPerMinute, 30);
  assert.equal(config.oauthAuthorizeRequestsPerMinute, 300);
  assert.equal(config.oauthRequestsPerMinute, 60);
  assert.equal(config.loginThrottleFailures, 5);
  assert.equal(config.loginThrottleAccountFailures, 50);
  assert.equal(config.loginThrottleMaxSeconds, 900);
});
