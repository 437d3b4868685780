// Redirect URI registration rules and matching (OAuth 2.1 §2.3, RFC 8252 §7, OIDC Registration §2).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  checkRedirectUri,
  redirectUriMatches,
  type ApplicationType,
  type RedirectUriKind,
} from "../../src/oauth/redirect-uris.js";

const accepted: Array<[string, RedirectUriKind]> = [
  ["https://app.example.com/callback", "https"],
  ["https://app.example.com:8443/cb?tenant=a", "https"],
  ["https://localhost/cb", "https"],
  ["http://127.0.0.1/callback", "loopback"],
  ["http://127.0.0.1:3000/callback", "loopback"],
  ["http://[::1]:53682/oauth/callback", "loopback"],
  ["http://localhost:6274/oauth/callback", "loopback"],
  ["http://localhost", "loopback"],
  ["http://127.0.0.1:65535?x=1", "loopback"],
  ["cursor://anysphere.cursor-retrieval/oauth/callback", "private-use"],
  ["vscode://vscode.github-authentication/did-authenticate", "private-use"],
  ["com.example.app:/oauth2redirect/example-provider", "private-use"],
];

const refused: Array<[string, RegExp]> = [
  ["", /non-empty string/],
  ["http://localhost.evil.com/cb", /only to a loopback host/],
  ["http://127.0.0.1.nip.io/cb", /only to a loopback host/],
  ["http://evil.com/cb", /only to a loopback host/],
  ["http://127.1/cb", /only to a loopback host/],
  ["http://LOCALHOST/cb", /only to a loopback host/],
  ["http://localhost./cb", /only to a loopback host/],
  ["http://[0:0:0:0:0:0:0:1]/cb", /only to a loopback host/],
  ["http://127.0.0.1:80@evil.com/cb", /only to a loopback host/],
  ["http://user@127.0.0.1/cb", /only to a loopback host/],
  ["http://127.0.0.1:0/cb", /invalid port/],
  ["http://127.0.0.1:65536/cb", /invalid port|not a valid URI/],
  ["http://127.0.0.1:080/cb", /invalid port/],
  ["https://x#frag", /fragment/],
  ["https://app.example.com/cb#", /fragment/],
  ["http://127.0.0.1:3000/cb#x", /fragment/],
  ["https://user:pw@app.example.com/cb", /user information/],
  ["https://@app.example.com/cb", /user information/],
  ["https:/app.example.com/cb", /https:\/\/host\/path/],
  ["javascript:alert(1)", /javascript: scheme/],
  ["JAVASCRIPT:alert(1)", /lowercase/],
  ["JavaScript:alert(1)", /lowercase/],
  ["java\tscript:alert(1)", /RFC 3986 characters/],
  [" https://app.example.com/cb", /RFC 3986 characters/],
  ["https://app.example.com/cb\n", /RFC 3986 characters/],
  ["https://app.example.com\\@evil.com/cb", /RFC 3986 characters/],
  ["https://app.ex\u00e4mple.com/cb", /RFC 3986 characters/],
  ["HTTPS://app.example.com/cb", /lowercase/],
  ["HTTP://127.0.0.1/cb", /lowercase/],
  ["data:text/html,<script>alert(1)</script>", /RFC 3986 characters/],
  ["data:text/html;base64,PHNjcmlwdD4=", /data: scheme/],
  ["file:///etc/passwd", /file: scheme/],
  ["vbscript:msgbox(1)", /vbscript: scheme/],
  ["about:blank", /about: scheme/],
  ["cursor:", /something after the scheme/],
  ["/relative/cb", /with a scheme/],
  ["1app:/cb", /with a scheme/],
  ["https://" + "a".repeat(2040) + ".com/", /at most 2048/],
];

describe("checkRedirectUri without application_type (RFC 7591 clients rarely send one)", () => {
  for (const [uri, kind] of accepted)
    it(`accepts ${uri} as ${kind}`, () => assert.deepEqual(checkRedirectUri(uri), { ok: true, kind }));
  for (const [uri, reason] of refused)
    it(`refuses ${JSON.stringify(uri.slice(0, 60))}`, () => {
      const check = checkRedirectUri(uri);
      assert.equal(check.ok, false);
      assert.match(check.ok ? "" : check.reason, reason);
    });
  it("refuses non-strings", () => {
    for (const value of [undefined, null, 42, ["https://a.example/cb"], {}])
      assert.deepEqual(checkRedirectUri(value), { ok: false, reason: "must be a non-empty string" });
  });
  it("never quotes the URI in its reason, and reasons fit RFC 6749 error_description", () => {
    for (const [uri] of refused) {
      const check = checkRedirectUri(uri);
      const reason = check.ok ? "" : check.reason;
      if (uri.length > 3) assert.ok(!reason.includes(uri), reason);
      assert.match(reason, /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/);
    }
  });
});

describe("checkRedirectUri with application_type (OIDC Registration §2)", () => {
  const web: ApplicationType = "web";
  it("web clients: https to a non-loopback host only", () => {
    assert.deepEqual(checkRedirectUri("https://app.example.com/cb", web), { ok: true, kind: "https" });
    for (const uri of [
      "https://localhost/cb",
      "https://127.0.0.1/cb",
      "https://[::1]/cb",
      "https://app.localhost/cb",
      "http://127.0.0.1/cb",
      "http://localhost:3000/cb",
      "cursor://anysphere.cursor-retrieval/oauth/callback",
    ])
      assert.equal(checkRedirectUri(uri, web).ok, false, uri);
  });
  it("native clients: https (claimed URLs, RFC 8252 §7.2), loopback http and private-use schemes", () => {
    for (const [uri, kind] of accepted)
      assert.deepEqual(checkRedirectUri(uri, "native"), { ok: true, kind }, uri);
    assert.equal(checkRedirectUri("http://evil.com/cb", "native").ok, false);
    assert.equal(checkRedirectUri("javascript:alert(1)", "native").ok, false);
  });
});

describe("redirectUriMatches (exact, loopback port may differ, RFC 8252 §7.3)", () => {
  const registered = [
    "https://app.example.com/callback",
    "http://127.0.0.1/callback",
    "http://localhost:3000/cb?x=1",
    "http://[::1]:8080/cb",
    "cursor://anysphere.cursor-retrieval/oauth/callback",
  ];
  const table: Array<[string, boolean]> = [
    ["https://app.example.com/callback", true],
    ["http://127.0.0.1:53421/callback", true],
    ["http://127.0.0.1/callback", true],
    ["http://localhost:3000/cb?x=1", true],
    ["http://localhost:49152/cb?x=1", true],
    ["http://localhost/cb?x=1", true],
    ["http://[::1]:9/cb", true],
    ["cursor://anysphere.cursor-retrieval/oauth/callback", true],
    // everything but the loopback port is exact
    ["https://app.example.com:443/callback", false],
    ["https://APP.example.com/callback", false],
    ["HTTPS://app.example.com/callback", false],
    ["https://app.example.com/callback/", false],
    ["https://app.example.com/callback?x=1", false],
    ["https://app.example.com/Callback", false],
    ["https://app.example.com/callback#x", false],
    ["https://app.example.com:8443/callback", false],
    ["http://app.example.com/callback", false],
    ["http://127.0.0.1:53421/callback/../callback", false],
    ["http://127.0.0.1:53421/Callback", false],
    ["http://127.0.0.1:53421/callback?x=1", false],
    ["http://127.0.0.1:53421/callback#frag", false],
    ["http://localhost:53421/callback", false], // host differs: localhost is not 127.0.0.1
    ["http://[::1]:53421/callback", false],
    ["http://localhost:3000/cb?x=2", false],
    ["http://localhost:3000/cb", false],
    ["http://127.0.0.1:0/callback", false],
    ["http://127.0.0.1:99999/callback", false],
    ["http://127.0.0.1:0080/callback", false],
    ["http://127.0.0.1:1@evil.com/callback", false],
    ["http://127.0.0.1.nip.io:3000/callback", false],
    ["https://127.0.0.1:53421/callback", false],
    ["cursor://anysphere.cursor-retrieval/oauth/callback2", false],
    ["cursor://anysphere.cursor-retrieval:1/oauth/callback", false],
    ["", false],
  ];
  for (const [presented, expected] of table)
    it(`${expected ? "matches" : "does not match"} ${JSON.stringify(presented)}`, () =>
      assert.equal(redirectUriMatches(registered, presented), expected));
  it("a registered https URI with a port does not flex", () =>
    assert.equal(
      redirectUriMatches(["https://app.example.com:8443/cb"], "https://app.example.com:9443/cb"),
      false,
    ));
  it("nothing registered matches nothing", () =>
    assert.equal(redirectUriMatches([], "http://127.0.0.1/callback"), false));
});
