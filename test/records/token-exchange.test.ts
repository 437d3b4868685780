// `auth: {"type": "token_exchange"}` (RFC 8693): what an operator may write, and the message for
// what they may not (JSON path first, the client secret never echoed).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isPorticoError } from "../../src/protocol/errors.js";
import { validateTenant } from "../../src/records/validate.js";

const P = "tenants[0].providers[0]";
const SECRET = "sts-secret-do-not-echo";
const exchange = (auth: object, kind = "mcp") =>
  validateTenant(
    {
      id: "acme",
      auth: "oauth",
      providers: [
        kind === "mcp"
          ? { id: "notes", kind, url: "https://notes.test/mcp", auth }
          : { id: "notes", kind, tools: [{ name: "t", url: "https://notes.test/t" }], auth },
      ],
    },
    "tenants[0]",
  );
const base = {
  type: "token_exchange",
  tokenUrl: "https://sts.test/token",
  clientId: "portico",
  clientSecret: SECRET,
};

function rejects(auth: object, message: string, kind?: string) {
  assert.throws(
    () => exchange(auth, kind),
    (err) => {
      assert.ok(isPorticoError(err));
      assert.equal(err.message, message);
      assert.ok(!err.message.includes(SECRET));
      return true;
    },
  );
}

describe("validateProvider: token exchange auth", () => {
  it("accepts the STS, the client and what the token is for", () => {
    const full = {
      ...base,
      audience: "notes-api",
      resource: "https://notes.test/",
      scope: "notes:read notes:write",
      authMethod: "client_secret_post",
    };
    const tenant = exchange(full);
    assert.deepEqual((tenant.providers[0] as { auth: unknown }).auth, full);
  });

  it("requires the token endpoint and the client", () => {
    rejects({ ...base, tokenUrl: undefined }, `${P}.auth.tokenUrl: is required`);
    rejects({ ...base, clientSecret: undefined }, `${P}.auth.clientSecret: is required`);
    rejects({ ...base, clientId: "" }, `${P}.auth.clientId: must be a non-empty string`);
  });

  it("refuses a fragment, a relative resource, a bad scope, an unknown method or field", () => {
    rejects(
      { ...base, tokenUrl: "https://sts.test/token#x" },
      `${P}.auth.tokenUrl: must not include a fragment (RFC 6749 §3.2)`,
    );
    rejects(
      { ...base, resource: "/notes" },
      `${P}.auth.resource: must be an absolute URI without a fragment (RFC 8707 §2)`,
    );
    rejects(
      { ...base, scope: 'a "b"' },
      `${P}.auth.scope: "a \\"b\\"" must be space-separated scope tokens (RFC 6749 §3.3)`,
    );
    rejects(
      { ...base, authMethod: "private_key_jwt" },
      `${P}.auth.authMethod: must be one of "client_secret_basic", "client_secret_post"`,
    );
    assert.throws(() => exchange({ ...base, subjectToken: "x" }), /subjectToken/);
  });

  it("is served for http providers too", () => {
    assert.equal(
      (exchange(base, "http").providers[0] as { auth: { type: string } }).auth.type,
      "token_exchange",
    );
  });

  it("needs a tenant with sign-in", () => {
    assert.throws(
      () =>
        validateTenant(
          {
            id: "open",
            auth: "none",
            providers: [{ id: "notes", kind: "mcp", url: "https://notes.test/mcp", auth: base }],
          },
          "tenants[0]",
        ),
      (err) =>
        isPorticoError(err) &&
        err.message ===
          `${P}.auth: "token_exchange" acts for each signed-in user: the tenant needs "auth": "oauth"`,
    );
  });

  it("takes a reference user for per-user providers only", () => {
    const pinned = (auth?: object) =>
      validateTenant(
        {
          id: "acme",
          auth: "oauth",
          providers: [
            {
              id: "notes",
              kind: "mcp",
              url: "https://notes.test/mcp",
              referenceUser: "u_admin",
              ...(auth && { auth }),
            },
          ],
        },
        "tenants[0]",
      );
    assert.equal((pinned(base).providers[0] as { referenceUser?: string }).referenceUser, "u_admin");
    assert.throws(
      () => pinned(),
      (err) =>
        isPorticoError(err) &&
        err.message ===
          `${P}.referenceUser: applies to per-user providers only ("auth.type" "user_oauth" or "token_exchange")`,
    );
  });
});
