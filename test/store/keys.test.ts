// Redis Cluster readiness of the key layout (store/keys.ts, docs/storage.md): every key of a
// tenant carries the hash tag {t:<tenant>}, the authorization server's {oauth}, admin keys {admin},
// so that the keys one command, transaction or script names always share a cluster slot.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createKeys } from "../../src/store/keys.js";
import { hashTag } from "../../src/store/redis-connection.js";

const keys = createKeys("portico");

describe("hash tags", () => {
  it("follow Redis's rule: the first {…} with something inside, else the whole key", () => {
    assert.equal(hashTag("portico:{t:acme}:s:1"), "t:acme");
    assert.equal(hashTag("a:{x}:{y}"), "x");
    assert.equal(hashTag("a:{}:{y}"), "a:{}:{y}");
    assert.equal(hashTag("a:{x"), "a:{x");
    assert.equal(hashTag("portico:tenants"), "portico:tenants");
  });

  it("every key of a tenant carries {t:<tenant>}, whatever the ids in it", () => {
    const ids = ["abc", "with{brace}", "with:colon"];
    const tenantKeys = (t: string) => [
      ...ids.flatMap((id) => [
        keys.session(t, id),
        keys.upstreamSessions(t, id),
        keys.subscriptions(t, id),
        keys.eventLog(t, id, "g"),
        keys.eventLogIds(t, id),
        keys.rerunClaim(t, id, id),
        keys.clientAnswer(t, id, id),
        keys.sessionChannel(t, id),
        keys.user(t, id),
        keys.grant(t, id),
        keys.authCode(t, id),
        keys.refreshToken(t, id),
        keys.consents(t, id, id),
        keys.mcpRateLimit(t, `c:${id}`, 29_000_000),
        keys.account(t, id, "gh"),
        keys.accountProviders(t, id),
        keys.accountUsers(t, id),
        keys.accountRegistration(t, id, "d"),
        keys.accountRefreshLock(t, id, "gh"),
        keys.task(t, id),
        keys.callerTasks(t, `s:${id}`),
        keys.liveTasks(t, `p:${id}`),
        keys.taskPolls(t, `s:${id}`, 29_000_000),
      ]),
      keys.liveTasks(t, undefined),
      keys.sessionIndex(t),
      keys.tenantAudit(t),
      keys.conflictNoted(t, "d{x}"),
      keys.userIndex(t),
      keys.grantIndex(t),
      keys.tenant(t),
      keys.oauthTenantClients(t),
    ];
    for (const t of ["acme", "a-b_c"])
      for (const key of tenantKeys(t)) assert.equal(hashTag(key), `t:${t}`, key);
  });

  it("the authorization server's keys carry {oauth}, admin keys {admin}", () => {
    for (const key of [
      keys.oauthFlow("f{1}"),
      keys.oauthSigningKeys(),
      keys.revokedToken("j"),
      keys.revokedTokens(),
      keys.oauthClient("c{x}"),
      keys.oauthRateLimit("token", "ip:1.2.3.4", 1),
    ])
      assert.equal(hashTag(key), "oauth", key);
    for (const key of [
      keys.platformAudit(),
      keys.apiKey("h"),
      keys.apiKeyIndex("platform"),
      keys.apiKeyIndex("acme"),
    ])
      assert.equal(hashTag(key), "admin", key);
  });

  it("the connected-accounts pages' keys carry {accounts}", () => {
    for (const key of [keys.accountFlow("s{1}"), keys.accountSession("h"), keys.accountsChannel()])
      assert.equal(hashTag(key), "accounts", key);
  });

  it("the keys deleted together share one tag (users, grants, API keys, a session's leftovers)", () => {
    // The multi-key DELs of oauth/users.ts, oauth/grants.ts, admin/api-keys.ts and mcp/sessions.ts.
    const together = [
      [keys.userIndex("acme"), keys.user("acme", "ada"), keys.user("acme", "bob")],
      [keys.grantIndex("acme"), keys.grant("acme", "g1"), keys.grant("acme", "g2")],
      [keys.apiKeyIndex("acme"), keys.apiKey("h1"), keys.apiKey("h2")],
      [keys.upstreamSessions("acme", "s"), keys.subscriptions("acme", "s")],
    ];
    for (const group of together) assert.equal(new Set(group.map(hashTag)).size, 1, group.join(" "));
  });
});
