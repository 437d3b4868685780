// Local users: passwords stored only as scrypt hashes; a wrong username and a wrong password fail alike.
import assert from "node:assert/strict";
import { after, it } from "node:test";
import { passwordMatches, UserStore } from "../../src/oauth/users.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";

const store = new MemoryStore();
const keys = createKeys("t");
const users = new UserStore(store, keys);
after(() => store.close());

it("creates users with a stable sub, verifies passwords, refuses duplicates", async () => {
  const ada = await users.create("acme", {
    username: "ada",
    password: "correct horse battery",
    email: "ada@example.com",
  });
  assert.ok(ada?.sub.startsWith("u_"));
  assert.equal(await users.create("acme", { username: "ada", password: "other" }), undefined);
  assert.deepEqual(await users.verify("acme", "ada", "correct horse battery"), ada);
  assert.equal(await users.verify("acme", "ada", "wrong"), undefined);
  assert.equal(await users.verify("acme", "nobody", "correct horse battery"), undefined);
  assert.equal(
    await users.verify("other", "ada", "correct horse battery"),
    undefined,
    "users belong to one tenant",
  );
  const raw = (await store.get(keys.user("acme", "ada")))!;
  assert.ok(!raw.includes("correct horse battery"));
  assert.match(raw, /"password":"scrypt\$32768\$8\$1\$/);
  assert.deepEqual(
    (await users.list("acme")).map((u) => u.username),
    ["ada"],
  );
  assert.ok(!JSON.stringify(await users.list("acme")).includes("scrypt"));
});

it("changes passwords and deletes users", async () => {
  await users.create("acme", { username: "bob", password: "first password" });
  assert.ok(await users.setPassword("acme", "bob", "second password"));
  assert.equal(await users.verify("acme", "bob", "first password"), undefined);
  assert.ok(await users.verify("acme", "bob", "second password"));
  assert.ok(await users.delete("acme", "bob"));
  assert.equal(await users.get("acme", "bob"), undefined);
  assert.equal(await passwordMatches("x", "not-a-hash"), false);
});
