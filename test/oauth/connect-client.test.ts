// The Client ID Metadata Document Portico serves for `portico connect` (src/oauth/connect-client.ts):
// served at its fixed path, resolved without a fetch, and holding the bridge to loopback redirect
// URIs on any port (RFC 8252 §7.3) — nothing else.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as oauth from "oauth4webapi";
import { ClientMetadataFetcher } from "../../src/oauth/client-metadata.js";
import { CONNECT_CLIENT_PATH, connectClientDocument } from "../../src/oauth/connect-client.js";
import { startIssuer, type RunningPortico } from "../support/portico.js";

describe("the bridge's metadata document", () => {
  it("is resolved from memory: the fetch is never called, and no other http URL counts as a document", async () => {
    const doc = connectClientDocument("http://127.0.0.1:8080");
    const fetcher = new ClientMetadataFetcher({
      builtIn: [doc],
      fetch: () => Promise.reject(new Error("fetched")),
    });
    assert.equal(doc.client_id, "http://127.0.0.1:8080/oauth/clients/portico-connect.json");
    assert.equal(fetcher.isClientId(doc.client_id), true);
    assert.equal(fetcher.isClientId("http://127.0.0.1:8080/oauth/clients/other.json"), false);
    assert.equal(fetcher.isClientId("http://127.0.0.1:9090/oauth/clients/portico-connect.json"), false);
    assert.deepEqual(await fetcher.resolve(doc.client_id), doc);
    await assert.rejects(fetcher.resolve("http://127.0.0.1:8080/oauth/clients/other.json"), /https URL/);
  });
});

describe("the bridge's client at Portico's authorization endpoint", () => {
  let portico: RunningPortico;
  let issuer: string;
  let clientId: string;

  before(async () => {
    ({ portico, issuer } = await startIssuer({ tenant: "acme", users: [] }));
    clientId = `${issuer}${CONNECT_CLIENT_PATH}`;
  });
  after(() => portico?.close());

  it("serves the document at its path: a public native client whose client_id is that URL", async () => {
    const res = await fetch(clientId);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const doc = (await res.json()) as Record<string, unknown>;
    assert.equal(doc.client_id, clientId);
    assert.equal(doc.client_name, "portico connect");
    assert.equal(doc.token_endpoint_auth_method, "none");
    assert.equal(doc.application_type, "native");
    assert.deepEqual(doc.redirect_uris, ["http://127.0.0.1/callback"]);
    assert.deepEqual(doc.grant_types, ["authorization_code", "refresh_token"]);
    assert.equal("client_secret" in doc, false);
  });

  const authorize = async (redirectUri: string) => {
    const url = new URL(`${issuer}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      state: "s",
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: "S256",
      resource: `${issuer}/mcp/acme`,
    }).toString();
    return fetch(url, { redirect: "manual" });
  };

  for (const port of [1024, 49152, 65535])
    it(`shows the sign-in page for the loopback redirect on port ${port}`, async () => {
      const res = await authorize(`http://127.0.0.1:${port}/callback`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /portico connect/);
    });

  for (const uri of [
    "https://attacker.example/callback",
    "http://localhost:5000/callback",
    "http://127.0.0.1:5000/other",
    "http://127.0.0.1:5000/callback?x=1",
    "cursor://anysphere.cursor-retrieval/oauth/callback",
  ])
    it(`refuses ${uri} without redirecting there`, async () => {
      const res = await authorize(uri);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("location"), null);
      await res.body?.cancel();
    });
});
