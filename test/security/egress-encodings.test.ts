// Egress policy against address encodings (docs/security.md): every spelling of a refused address
// is refused — in the policy, through the real egress fetch before any connect, at every redirect
// hop, whatever DNS answers the second time — and the admin API names a literal one with a 422.
// Only loopback listeners ever receive traffic; "allowed" cases use 127.0.0.0/8.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { canonicalAddress } from "../../src/egress/address.js";
import { egressFetch, type Lookup } from "../../src/egress/fetch.js";
import { EgressPolicy } from "../../src/egress/policy.js";
import { ExternalTokenVerifier } from "../../src/auth/external.js";
import { ClientMetadataFetcher } from "../../src/oauth/client-metadata.js";
import { Federation } from "../../src/oauth/federation.js";
import { ADMIN_TOKEN, AdminClient } from "../support/admin.js";
import { startPortico, staticTenant, type RunningPortico } from "../support/portico.js";
import { openSession, postRpc } from "../support/rpc.js";

/** 169.254.169.254, the cloud metadata service, written every way a URL or DNS answer can. */
const METADATA_SPELLINGS = [
  "169.254.169.254",
  "2852039166", // decimal
  "0251.0376.0251.0376", // octal
  "0xa9.0xfe.0xa9.0xfe", // hex
  "0xa9fea9fe",
  "169.254.43518", // two trailing parts as one 16-bit number
  "169.16689662", // one 24-bit tail
  "169.254.169.254.", // trailing dot
  "[::ffff:169.254.169.254]", // IPv4-mapped
  "[::ffff:a9fe:a9fe]",
  "[0:0:0:0:0:ffff:a9fe:a9fe]",
  "[::a9fe:a9fe]", // IPv4-compatible
  "[::169.254.169.254]",
  "[::ffff:0:a9fe:a9fe]", // SIIT IPv4-translated
  "[64:ff9b::a9fe:a9fe]", // NAT64 well-known prefix
  "[64:ff9b::169.254.169.254]",
  "[64:ff9b:1::a9fe:a9fe]", // NAT64 local-use, /96 layout
  "[64:ff9b:1:a9fe:a9:fe00::]", // NAT64 local-use, /48 layout
  "[2002:a9fe:a9fe::1]", // 6to4
  "[2001:0:4136:e378:8000:63bf:5601:5601]", // Teredo: client 169.254.169.254 XOR ffff:ffff
  "[FE80::1]", // link-local upper case
  "[fd00:ec2::254]", // AWS IPv6 metadata
  "[fd20:ce::254]", // Google Cloud IPv6 metadata
  "[FD20:CE:0:0:0:0:0:254]",
  "[fd00:c1::a9fe:a9fe]", // Oracle Cloud IPv6 metadata
  "[fd00:c1::169.254.169.254]",
];

const refused = (policy: EgressPolicy, host: string) =>
  assert.throws(() => policy.check(host, host), /egress policy refuses/, host);
const allowed = (policy: EgressPolicy, host: string) =>
  assert.doesNotThrow(() => policy.check(host, host), host);

describe("canonical addresses", () => {
  it("every spelling of the metadata address is, or carries, 169.254.169.254 (or is link-local)", () => {
    for (const spelling of METADATA_SPELLINGS.slice(0, -6)) {
      const c = canonicalAddress(spelling);
      assert.ok(c, spelling);
      assert.ok([c.address, ...c.embedded].includes("169.254.169.254"), `${spelling} → ${JSON.stringify(c)}`);
    }
  });
  it("mapped addresses are dialled as IPv4; translated ones keep their IPv6 form and carry the IPv4", () => {
    assert.deepEqual(canonicalAddress("[::FFFF:7F00:1]"), { address: "127.0.0.1", family: 4, embedded: [] });
    assert.deepEqual(canonicalAddress("64:ff9b::0a00:0001"), {
      address: "64:ff9b::a00:1",
      family: 6,
      embedded: ["10.0.0.1"],
    });
    assert.deepEqual(canonicalAddress("::1"), { address: "::1", family: 6, embedded: [] });
    assert.deepEqual(canonicalAddress("fe80::1%eth0")?.address, "fe80::1");
  });
  it("host names and malformed literals are not addresses", () => {
    for (const host of [
      "localhost",
      "localhost.",
      "metadata.google.internal.",
      "1.2.3.4.5",
      "256.0.0.1",
      "09",
      "1:::2",
      "1:2:3:4:5:6:7:8:9",
      "::ffff:1.2.3.04",
      "[::1",
    ])
      assert.equal(canonicalAddress(host), undefined, host);
  });
});

describe("the policy judges the canonical address and every IPv4 address it carries", () => {
  it("refuses every spelling of the metadata address, allow list or not", () => {
    for (const policy of [new EgressPolicy(), new EgressPolicy({ allowCidrs: ["0.0.0.0/0", "::/0"] })])
      for (const spelling of METADATA_SPELLINGS) refused(policy, spelling);
  });
  it("the operator's deny list sees through mapped, compatible, NAT64, 6to4 and Teredo forms", () => {
    const policy = new EgressPolicy({ denyCidrs: ["10.0.0.0/8"] });
    for (const host of [
      "10.1.2.3",
      "012.1.2.3",
      "167838211",
      "::ffff:a01:203",
      "::a01:203",
      "64:ff9b::10.1.2.3",
      "2002:a01:203::",
      "2001:0:1:2:0:0:f5fe:fdfc",
    ])
      refused(policy, host);
    allowed(policy, "11.1.2.3");
    allowed(policy, "64:ff9b::b01:203");
  });
  it("an allow list admits a translated address only if both it and the IPv4 it carries are inside", () => {
    const v4only = new EgressPolicy({ allowCidrs: ["127.0.0.0/8"] });
    allowed(v4only, "::ffff:127.0.0.1"); // mapped is dialled as 127.0.0.1
    refused(v4only, "64:ff9b::7f00:1"); // the NAT64 prefix was not allowed
    refused(v4only, "2002:7f00:1::");
    const withNat64 = new EgressPolicy({ allowCidrs: ["127.0.0.0/8", "64:ff9b::/96"] });
    allowed(withNat64, "64:ff9b::7f00:1");
    refused(withNat64, "64:ff9b::a00:1"); // NAT64 does not open all of IPv4
  });
  it("public-only (client metadata documents) refuses non-public addresses in any spelling", () => {
    const policy = new EgressPolicy({ publicOnly: true });
    for (const host of [
      "0x7f.1",
      "2130706433",
      "::ffff:10.0.0.1",
      "::a00:1",
      "64:ff9b::c0a8:1",
      "2002:c0a8:1::",
    ])
      refused(policy, host);
    allowed(policy, "8.8.8.8");
    allowed(
      new EgressPolicy({ publicOnly: true, publicOnlyExceptCidrs: ["127.0.0.0/8"] }),
      "::ffff:127.0.0.1",
    );
  });
});

// ---- through the real egress fetch -----------------------------------------------------------

let server: Server;
let port: number;
let hits: string[] = [];
before(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const location = new URL(req.url ?? "/", "http://x").searchParams.get("to");
    if (location) res.writeHead(302, { location }).end();
    else res.writeHead(200, { connection: "close" }).end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

/** The egress error a refused fetch rejects with (undici wraps the connector's error in `cause`). */
async function refusedFetch(fetch: typeof globalThis.fetch, url: string): Promise<string> {
  const err = await fetch(url, { signal: AbortSignal.timeout(5_000) }).then(
    () => assert.fail(`${url} was fetched`),
    (e: Error) => e,
  );
  const cause = err.cause as { code?: string; message?: string } | undefined;
  assert.equal(cause?.code, "EGRESS_REFUSED", `${url}: ${String(cause?.message ?? err)}`);
  return cause.message ?? "";
}

describe("the egress fetch refuses before any connect", () => {
  it("every spelling of the metadata address in a URL", async () => {
    const fetch = egressFetch(new EgressPolicy());
    for (const spelling of METADATA_SPELLINGS) await refusedFetch(fetch, `http://${spelling}:${port}/`);
  });
  it("a deny list covering loopback refuses every spelling of 127.0.0.1; nothing reaches the listener", async () => {
    hits = [];
    const fetch = egressFetch(new EgressPolicy({ denyCidrs: ["127.0.0.0/8"] }));
    for (const host of [
      "127.0.0.1",
      "2130706433",
      "0x7f.1",
      "017700000001",
      "127.1",
      "[::ffff:7f00:1]",
      "localhost.",
    ])
      await refusedFetch(fetch, `http://${host}:${port}/`);
    assert.deepEqual(hits, []);
  });
  it("every spelling of 'this host' (0.0.0.0, ::) is refused", async () => {
    const fetch = egressFetch(new EgressPolicy());
    for (const host of ["0", "0.0.0.0", "0x0", "00.0.0.0", "[::]", "[::ffff:0.0.0.0]", "[0:0:0:0:0:0:0:0]"])
      await refusedFetch(fetch, `http://${host}:${port}/`);
  });
  it("allowed loopback spellings are dialled as the canonical address and answered", async () => {
    hits = [];
    const fetch = egressFetch(new EgressPolicy({ allowCidrs: ["127.0.0.0/8"] }));
    for (const host of ["2130706433", "0x7f.0.0.1", "[::ffff:127.0.0.1]", "localhost."]) {
      const res = await fetch(`http://${host}:${port}/ok`);
      assert.equal(await res.text(), "ok", host);
    }
    assert.equal(hits.length, 4);
  });
  it("a redirect hop to an encoded metadata address is refused", async () => {
    const fetch = egressFetch(new EgressPolicy());
    for (const to of [
      "http://[::ffff:a9fe:a9fe]/",
      "http://2852039166/latest/meta-data/",
      "http://[64:ff9b::a9fe:a9fe]/",
    ]) {
      hits = [];
      await refusedFetch(fetch, `http://127.0.0.1:${port}/r?to=${encodeURIComponent(to)}`);
      assert.equal(hits.length, 1, "the first hop was served, the second never connected");
    }
  });
});

describe("DNS answers", () => {
  /** A resolver that answers `answers[i]` to its i-th question (the last one after that). */
  const scripted = (answers: string[][]) => {
    const asked: string[] = [];
    const lookup: Lookup = async (hostname) => {
      asked.push(hostname);
      return (answers[Math.min(asked.length - 1, answers.length - 1)] ?? []).map((address) => ({ address }));
    };
    return { lookup, asked };
  };

  it("rebinding between check and connect cannot reach a refused address: one lookup per connection, dialled as checked", async () => {
    hits = [];
    const dns = scripted([["127.0.0.1"], ["169.254.169.254"]]);
    const fetch = egressFetch(new EgressPolicy(), { lookup: dns.lookup });
    const res = await fetch(`http://rebind.example:${port}/first`);
    assert.equal(await res.text(), "ok");
    // The server closed that connection: the next request connects again and asks DNS again.
    const message = await refusedFetch(fetch, `http://rebind.example:${port}/second`);
    assert.match(message, /rebind\.example \(169\.254\.169\.254\)/);
    assert.deepEqual(dns.asked, ["rebind.example", "rebind.example"]);
    assert.deepEqual(hits, ["/first"]);
  });
  it("a name with one good and one refused answer is refused, in any answer spelling", async () => {
    for (const bad of [
      "169.254.169.254",
      "::ffff:a9fe:a9fe",
      "64:ff9b::a9fe:a9fe",
      "2002:a9fe:a9fe::",
      "fe80::1",
    ]) {
      hits = [];
      const fetch = egressFetch(new EgressPolicy(), { lookup: scripted([["127.0.0.1", bad]]).lookup });
      await refusedFetch(fetch, `http://mixed.example:${port}/`);
      assert.deepEqual(hits, [], bad);
    }
  });
  it("trailing-dot names are resolved without the dot and judged like any other", async () => {
    const dns = scripted([["169.254.169.254"]]);
    const fetch = egressFetch(new EgressPolicy(), { lookup: dns.lookup });
    await refusedFetch(fetch, "http://metadata.google.internal./computeMetadata/v1/");
    assert.deepEqual(dns.asked, ["metadata.google.internal"]);
  });
  it("a DNS answer in IPv4-mapped form is dialled as IPv4", async () => {
    hits = [];
    const fetch = egressFetch(new EgressPolicy({ allowCidrs: ["127.0.0.0/8"] }), {
      lookup: scripted([["::ffff:127.0.0.1"]]).lookup,
    });
    assert.equal(await (await fetch(`http://mapped.example:${port}/m`)).text(), "ok");
    assert.deepEqual(hits, ["/m"]);
  });
});

describe("registration through the admin API", () => {
  let portico: RunningPortico;
  let admin: AdminClient;
  before(async () => {
    portico = await startPortico({ tenants: [], env: { PORTICO_ADMIN_TOKEN: ADMIN_TOKEN } });
    admin = new AdminClient(portico.url);
    assert.equal((await admin.post("/tenants", { id: "acme", auth: "none" })).status, 201);
  });
  after(() => portico?.close());

  it("a literal refused address is a 422 naming the field and the canonical address", async () => {
    for (const host of [
      "2852039166",
      "[::ffff:a9fe:a9fe]",
      "[64:ff9b::a9fe:a9fe]",
      "[2002:a9fe:a9fe::]",
      "0xa9.0xfe.0xa9.0xfe",
    ]) {
      const res = await admin.post("/tenants/acme/providers", {
        id: "meta",
        kind: "mcp",
        url: `http://${host}/mcp`,
      });
      assert.equal(res.status, 422, host);
      assert.match(
        JSON.stringify(res.body),
        /url: is always refused by the egress policy: .*169\.254\.169\.254/,
        host,
      );
    }
    assert.equal((await admin.get("/tenants/acme/providers/meta")).status, 404, "nothing was saved");
  });
  it("an identity provider's issuer and an external JWKS URL are validated the same way", async () => {
    const oidc = await admin.put("/tenants/acme/identity", {
      type: "oidc",
      issuer: "http://[::ffff:a9fe:a9fe]",
      clientId: "c",
      clientSecret: "s",
    });
    assert.equal(oidc.status, 422, JSON.stringify(oidc.body));
    assert.equal(oidc.body.pointer, "/issuer");
    const external = await admin.put("/tenants/acme/identity", {
      type: "external",
      issuer: "https://as.example",
      jwksUrl: "http://2852039166/jwks",
    });
    assert.equal(external.status, 422, JSON.stringify(external.body));
    assert.equal(external.body.pointer, "/jwksUrl");
  });
  it("an http tool and a token endpoint are validated the same way", async () => {
    const tool = await admin.post("/tenants/acme/providers", {
      id: "wx",
      kind: "http",
      tools: [{ name: "t", url: "http://[::a9fe:a9fe]/x" }],
    });
    assert.equal(tool.status, 422);
    assert.equal(tool.body.pointer, "/tools/0/url");
    assert.match(tool.body.detail, /is always refused by the egress policy: .*carrying 169\.254\.169\.254/);
    const token = await admin.post("/tenants/acme/providers", {
      id: "up",
      kind: "mcp",
      url: "http://127.0.0.1:9/mcp",
      auth: {
        type: "client_credentials",
        tokenUrl: "http://[2002:a9fe:a9fe::]/token",
        clientId: "c",
        clientSecret: "s",
      },
    });
    assert.equal(token.status, 422);
    assert.equal(token.body.pointer, "/auth/tokenUrl");
  });
});

/** True when an error, or any error in its cause chain, is the egress policy's refusal. */
function refusedByEgress(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e)
    if (e.code === "EGRESS_REFUSED") return true;
  return false;
}

describe("every outbound client goes through the egress module", () => {
  const denyLoopback = () => egressFetch(new EgressPolicy({ denyCidrs: ["127.0.0.0/8"] }));

  it("federation discovery at an identity provider", async () => {
    hits = [];
    const federation = new Federation({
      redirectUri: "http://127.0.0.1:1/oauth/callback",
      fetch: denyLoopback(),
    });
    const identity = {
      type: "oidc",
      issuer: `http://[::ffff:7f00:1]:${port}`,
      clientId: "c",
      clientSecret: "s",
    } as const;
    const err = await federation.begin(identity).then(
      () => assert.fail("discovery ran"),
      (e: unknown) => e,
    );
    assert.ok(refusedByEgress(err), String(err));
    assert.deepEqual(hits, []);
  });
  it("an external authorization server's JWKS (jose createRemoteJWKSet)", async () => {
    hits = [];
    const verifier = new ExternalTokenVerifier(
      { type: "external", issuer: "https://as.example", jwksUrl: `http://2130706433:${port}/jwks` },
      { fetch: denyLoopback() },
    );
    const token = ["eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0", "eyJzdWIiOiJ4In0", "c2ln"].join(".");
    const err = await verifier.verify(token, "https://x").then(
      () => assert.fail("verified"),
      (e: unknown) => e,
    );
    assert.ok(refusedByEgress(err), String(err));
    assert.deepEqual(hits, []);
  });
  it("client ID metadata documents (public addresses only)", async () => {
    const fetcher = new ClientMetadataFetcher();
    for (const host of ["[::ffff:7f00:1]", "0x7f.1", "2130706433", "[64:ff9b::a9fe:a9fe]"]) {
      const err = await fetcher.resolve(`https://${host}:${port}/client.json`).then(
        () => assert.fail("fetched"),
        (e: Error) => e,
      );
      // A spelling that is not the URL's own serialisation is refused before any fetch.
      assert.match(err.message, /not a public address|must be an https URL/, host);
    }
  });
  it("providers: an http tool behind a deny list answers an error naming the policy, and never connects", async () => {
    hits = [];
    const portico = await startPortico({
      tenants: [
        {
          ...staticTenant("acme"),
          providers: [
            { id: "api", kind: "http", tools: [{ name: "get", url: `http://[::ffff:127.0.0.1]:${port}/t` }] },
          ],
        },
      ],
      env: { PORTICO_PROVIDER_DENY_CIDRS: "127.0.0.0/8" },
    });
    try {
      const sid = await openSession(portico.mcpUrl("acme"));
      const res = await postRpc(
        portico.mcpUrl("acme"),
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get", arguments: {} } },
        sid,
      );
      assert.match(await res.text(), /egress policy refuses/);
      assert.deepEqual(hits, []);
    } finally {
      await portico.close();
    }
  });
});
