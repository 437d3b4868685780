// Client ID Metadata Documents (MCP 2025-11-25, draft-ietf-oauth-client-id-metadata-document),
// fetched from a real HTTPS server on loopback through the SSRF-safe egress fetch.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { EgressPolicy } from "../../src/egress/policy.js";
import {
  ClientMetadataFetcher,
  isClientIdUrl,
  type ClientMetadataFetcherOptions,
} from "../../src/oauth/client-metadata.js";
import { OAuthClientError } from "../../src/oauth/clients.js";
import { startMetadataServer, type MetadataServer } from "../fixtures/client-metadata-server.js";

/** RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E. */
const DESCRIPTION_CHARS = /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/;

async function refused(promise: Promise<unknown>, description: RegExp): Promise<OAuthClientError> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    assert.ok(err instanceof OAuthClientError, String(err));
    assert.equal(err.error, "invalid_client");
    assert.match(err.description, /^client metadata document: /);
    assert.match(err.description, description);
    assert.match(err.description, DESCRIPTION_CHARS);
    assert.ok(err.description.length < 200, "short, whatever the document held");
    return true;
  });
  return caught as OAuthClientError;
}

describe("isClientIdUrl (draft section 3, MCP: https with a path)", () => {
  const table: Array<[string, boolean]> = [
    ["https://app.example.com/oauth/client-metadata.json", true],
    ["https://app.example.com:8443/client", true],
    ["https://app.example.com/client?v=2", true],
    ["https://app.example.com/", false], // no path
    ["https://app.example.com", false],
    ["http://app.example.com/client.json", false],
    ["HTTPS://app.example.com/client.json", false],
    ["https://app.example.com/client.json#x", false],
    ["https://user:pw@app.example.com/client.json", false],
    ["https://user@app.example.com/client.json", false],
    ["https://app.example.com/a/../client.json", false],
    ["https://app.example.com/./client.json", false],
    ["https://app.example.com/a/%2e%2e/client.json", false],
    ["https://app.example.com/a/.%2E/client.json", false],
    ["https://APP.example.com/client.json", false], // not canonical: the document could never match
    ["https://app.example.com:443/client.json", false],
    ["https://app.example.com/client json", false],
    ["https://app.example.com/cli\tent.json", false],
    ["https://app.example.com\\client.json", false],
    ["client-id-from-dcr", false],
    ["", false],
    [`https://app.example.com/${"a".repeat(2100)}`, false],
  ];
  for (const [url, expected] of table)
    it(`${expected ? "accepts" : "refuses"} ${JSON.stringify(url.slice(0, 60))}`, () =>
      assert.equal(isClientIdUrl(url), expected));
});

describe("the public-only egress policy used for documents", () => {
  const policy = new EgressPolicy({
    publicOnly: true,
    publicOnlyExceptCidrs: ["10.20.0.0/16", "169.254.0.0/16"],
  });
  const allowed = (ip: string) => {
    try {
      policy.check(ip, "h");
      return true;
    } catch {
      return false;
    }
  };
  const table: Array<[string, boolean]> = [
    ["8.8.8.8", true],
    ["1.1.1.1", true],
    ["2606:4700:4700::1111", true],
    ["::ffff:8.8.8.8", true],
    ["10.20.3.4", true], // excepted by the operator
    ["10.1.2.3", false],
    ["127.0.0.1", false],
    ["172.16.5.5", false],
    ["192.168.1.1", false],
    ["100.64.0.1", false],
    ["198.18.0.1", false],
    ["192.0.2.1", false],
    ["169.254.169.254", false], // the exception cannot reopen metadata addresses
    ["0.0.0.0", false],
    ["::1", false],
    ["::", false],
    ["fc00::1", false],
    ["fd00:ec2::254", false],
    ["fe80::1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:7f00:1", false],
    ["64:ff9b::a00:1", false],
    ["2002:a00:1::1", false],
    ["2001:db8::1", false],
    ["ff02::1", false],
  ];
  for (const [ip, expected] of table)
    it(`${expected ? "allows" : "refuses"} ${ip}`, () => assert.equal(allowed(ip), expected));
  it("says why", () =>
    assert.throws(
      () => policy.check("10.1.2.3", "intranet"),
      /refuses intranet \(10.1.2.3\): not a public address/,
    ));
  it("the provider policy is unchanged: private addresses allowed by default", () =>
    assert.doesNotThrow(() => new EgressPolicy().check("10.1.2.3", "h")));
});

describe("ClientMetadataFetcher against a local HTTPS server", () => {
  let server: MetadataServer;
  let now = Date.UTC(2026, 0, 1);
  before(async () => (server = await startMetadataServer()));
  after(() => server.close());

  /** The loopback server is not a public address: the happy paths need the operator allowlist. */
  const fetcher = (options: ClientMetadataFetcherOptions = {}) =>
    new ClientMetadataFetcher({
      allowCidrs: ["127.0.0.0/8"],
      extraCaCertificates: [server.ca],
      now: () => now,
      ...options,
    });
  const url = (path: string) => `${server.origin}${path}`;
  const hits = (path: string) => server.hits.get(path) ?? 0;

  it("resolves a good document to its validated metadata, and caches it per max-age", async () => {
    const f = fetcher();
    const metadata = await f.resolve(url("/good.json"));
    assert.deepEqual(metadata, {
      client_id: url("/good.json"),
      client_name: "Example MCP Client",
      client_uri: "https://app.example.com",
      redirect_uris: ["http://127.0.0.1:3000/callback", "http://localhost:3000/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    assert.equal(hits("/good.json"), 1);
    now += 119_000;
    assert.deepEqual(await f.resolve(url("/good.json")), metadata);
    assert.equal(hits("/good.json"), 1, "served from the cache within max-age=120");
    now += 2000;
    await f.resolve(url("/good.json"));
    assert.equal(hits("/good.json"), 2, "fetched again once max-age has passed");
  });

  it("accepts application/<name>+json", async () => {
    assert.equal((await fetcher().resolve(url("/vendor.json"))).client_id, url("/vendor.json"));
  });

  it("shares one fetch among concurrent requests", async () => {
    const f = fetcher();
    const before = hits("/no-headers.json");
    await Promise.all([1, 2, 3].map(() => f.resolve(url("/no-headers.json"))));
    assert.equal(hits("/no-headers.json") - before, 1);
  });

  const cacheCases: Array<[string, number, string]> = [
    ["/short-max-age.json", 60, "max-age=5 is raised to the 60 s minimum"],
    ["/long-max-age.json", 86_400, "max-age=999999 is cut to the 24 h maximum"],
    ["/no-store.json", 60, "no-store still gets the minimum, so nobody can make Portico hammer a host"],
    ["/expires.json", 600, "Expires minus Date"],
    ["/no-headers.json", 300, "no cache headers: the 300 s default"],
  ];
  for (const [path, seconds, why] of cacheCases)
    it(`caches ${path} for ${seconds} s: ${why}`, async () => {
      const f = fetcher();
      const start = hits(path);
      await f.resolve(url(path));
      now += seconds * 1000 - 1000;
      await f.resolve(url(path));
      assert.equal(hits(path) - start, 1, "still cached a second before");
      now += 2000;
      await f.resolve(url(path));
      assert.equal(hits(path) - start, 2, "fetched again a second after");
    });

  it("keeps at most maxEntries documents, dropping the least recently used", async () => {
    const f = fetcher({ maxEntries: 2 });
    const before = { a: hits("/a.json"), b: hits("/b.json"), c: hits("/c.json") };
    await f.resolve(url("/a.json"));
    await f.resolve(url("/b.json"));
    await f.resolve(url("/a.json")); // a is now the most recent
    await f.resolve(url("/c.json")); // drops b
    await f.resolve(url("/a.json"));
    await f.resolve(url("/b.json"));
    assert.equal(hits("/a.json") - before.a, 1);
    assert.equal(hits("/b.json") - before.b, 2);
    assert.equal(hits("/c.json") - before.c, 1);
  });

  it("refuses a document whose client_id is not the URL", async () => {
    await refused(fetcher().resolve(url("/mismatch.json")), /client_id does not equal the URL/);
  });

  it("refuses an oversized body, declared or streamed, without reading it all", async () => {
    await refused(fetcher().resolve(url("/big-declared.json")), /larger than 5120 bytes/);
    await refused(fetcher().resolve(url("/big-chunked.json")), /larger than 5120 bytes/);
    await refused(fetcher({ maxBytes: 100 }).resolve(url("/good.json")), /larger than 100 bytes/);
  });

  it("gives up on a slow server after timeoutMs, headers or body", async () => {
    const started = Date.now();
    await refused(fetcher({ timeoutMs: 300 }).resolve(url("/slow.json")), /took longer than 300 ms/);
    await refused(fetcher({ timeoutMs: 300 }).resolve(url("/slow-body.json")), /took longer than 300 ms/);
    assert.ok(Date.now() - started < 3000);
  });

  it("does not follow redirects (draft section 4)", async () => {
    const before = hits("/good.json");
    await refused(
      fetcher().resolve(url("/redirect.json")),
      /answered HTTP 302 \(redirects are not followed\)/,
    );
    assert.equal(hits("/good.json"), before);
  });

  const refusals: Array<[string, RegExp]> = [
    ["/missing.json", /answered HTTP 404/],
    ["/html.json", /content-type application\/json/],
    ["/not-json.json", /not valid JSON/],
    ["/latin1.json", /not valid UTF-8/],
    ["/array.json", /must be a JSON object/],
    ["/no-name.json", /client_name is required/],
    ["/secret.json", /must not carry a client secret/],
    ["/private-key-jwt.json", /private_key_jwt is not supported/],
    ["/basic.json", /token_endpoint_auth_method must be none/],
    ["/bad-redirect.json", /redirect_uris\[0\] http is allowed only to a loopback host/],
    ["/no-redirects.json", /redirect_uris must be a non-empty array/],
  ];
  for (const [path, description] of refusals)
    it(`refuses ${path}`, async () => {
      await refused(fetcher().resolve(url(path)), description);
    });

  it("does not cache refusals: a fixed document is used on the next request", async () => {
    const f = fetcher();
    const before = hits("/missing.json");
    await refused(f.resolve(url("/missing.json")), /404/);
    await refused(f.resolve(url("/missing.json")), /404/);
    assert.equal(hits("/missing.json") - before, 2);
  });

  describe("SSRF: public addresses only unless allowlisted (docs/architecture.md §5)", () => {
    const strict = () => new ClientMetadataFetcher({ extraCaCertificates: [server.ca], timeoutMs: 2000 });
    const notPublic = /host is not a public address/;

    it("refuses the loopback server by IP and by a name that resolves to it", async () => {
      const before = hits("/good.json");
      const err = await refused(strict().resolve(url("/good.json")), notPublic);
      assert.match(err.reason ?? "", /egress policy refuses 127\.0\.0\.1/);
      const port = new URL(server.origin).port;
      await refused(strict().resolve(`https://localhost:${port}/good.json`), notPublic);
      assert.equal(hits("/good.json"), before, "no connection was made");
    });

    it("refuses private, metadata and mapped addresses before connecting", async () => {
      for (const host of [
        "10.1.2.3",
        "192.168.0.10",
        "169.254.169.254",
        "[::1]",
        "[::ffff:7f00:1]",
        "[fd00::1]",
      ])
        await refused(strict().resolve(`https://${host}/client.json`), notPublic);
    });

    it("an allowlist opens only its ranges, and never metadata addresses", async () => {
      const f = new ClientMetadataFetcher({ allowCidrs: ["127.0.0.0/8", "169.254.0.0/16"], timeoutMs: 2000 });
      await refused(f.resolve("https://169.254.169.254/latest/meta-data/client.json"), notPublic);
      await refused(f.resolve("https://10.1.2.3/client.json"), notPublic);
    });

    it("refuses http and malformed client_id URLs without fetching", async () => {
      const port = new URL(server.origin).port;
      for (const clientId of [
        `http://127.0.0.1:${port}/good.json`,
        `${server.origin}/good.json#x`,
        `${server.origin}/`,
        `https://u:p@127.0.0.1:${port}/good.json`,
        `${server.origin}/x/../good.json`,
      ])
        await refused(fetcher().resolve(clientId), /client_id must be an https URL with a path/);
    });

    it("the certificate is checked: without the test CA the server is not trusted", async () => {
      const err = await refused(
        new ClientMetadataFetcher({ allowCidrs: ["127.0.0.0/8"] }).resolve(url("/good.json")),
        /could not be fetched/,
      );
      assert.match(err.reason ?? "", /certificate/i);
    });
  });
});
