// Parameter serialization of the `openapi` kind (src/providers/openapi/request.ts) against the
// OpenAPI 3.1 specification's "Style Examples" table (color = blue; ["blue","black","brown"];
// {R:100,G:200,B:150}), plus what Portico adds: path values encoded whole, header values without
// line breaks, bodies by media type.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OperationPlan, ParameterPlan } from "../../src/providers/openapi/operations.js";
import { ArgumentError, buildRequest } from "../../src/providers/openapi/request.js";

const string = "blue";
const array = ["blue", "black", "brown"];
const object = { R: 100, G: 200, B: 150 };

function plan(
  p: Partial<ParameterPlan> & Pick<ParameterPlan, "in" | "style" | "explode">,
  path = "/x",
): OperationPlan {
  const parameter: ParameterPlan = { name: "color", argument: "color", ...p };
  return {
    method: "get",
    path: p.in === "path" ? "/x/{color}" : path,
    server: "http://api.test/v1/",
    parameters: [parameter],
    wrapOutput: false,
    security: [],
    hasOutputSchema: false,
  };
}

/** The URL after the server, for a value of the parameter. */
const url = (p: OperationPlan, value: unknown) =>
  buildRequest(p, { color: value }).url.slice("http://api.test/v1".length);

describe("the specification's style examples", () => {
  const rows: Array<[style: string, explode: boolean, location: "path" | "query", string, string, string]> = [
    ["matrix", false, "path", ";color=blue", ";color=blue,black,brown", ";color=R,100,G,200,B,150"],
    ["matrix", true, "path", ";color=blue", ";color=blue;color=black;color=brown", ";R=100;G=200;B=150"],
    ["label", false, "path", ".blue", ".blue,black,brown", ".R,100,G,200,B,150"],
    ["label", true, "path", ".blue", ".blue.black.brown", ".R=100.G=200.B=150"],
    ["simple", false, "path", "blue", "blue,black,brown", "R,100,G,200,B,150"],
    ["simple", true, "path", "blue", "blue,black,brown", "R=100,G=200,B=150"],
    ["form", false, "query", "color=blue", "color=blue,black,brown", "color=R,100,G,200,B,150"],
    ["form", true, "query", "color=blue", "color=blue&color=black&color=brown", "R=100&G=200&B=150"],
    [
      "spaceDelimited",
      false,
      "query",
      "color=blue",
      "color=blue%20black%20brown",
      "color=R%20100%20G%20200%20B%20150",
    ],
    ["pipeDelimited", false, "query", "color=blue", "color=blue|black|brown", "color=R|100|G|200|B|150"],
  ];
  for (const [style, explode, location, one, many, keyed] of rows)
    it(`${style}, explode ${explode}`, () => {
      const p = plan({ in: location, style, explode });
      const at = (value: unknown) => {
        const u = url(p, value);
        return location === "path" ? u.slice("/x/".length) : u.slice("/x?".length);
      };
      assert.equal(at(string), one);
      assert.equal(at(array), many);
      assert.equal(at(object), keyed);
    });

  it("deepObject", () => {
    assert.equal(
      url(plan({ in: "query", style: "deepObject", explode: true }), object),
      "/x?color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150",
    );
  });
});

describe("what Portico adds", () => {
  it("encodes a path value whole: no `/`, `.`, `?` or `#` leaves the operation's path", () => {
    assert.equal(
      url(plan({ in: "path", style: "simple", explode: false }), "../../admin?x#y"),
      "/x/%2E%2E%2F%2E%2E%2Fadmin%3Fx%23y",
    );
  });

  it("refuses a header value with a line break, and sends cookies as one header", () => {
    const header = plan({ in: "header", style: "simple", explode: false });
    assert.throws(() => buildRequest(header, { color: "a\r\nx-injected: 1" }), ArgumentError);
    const cookie = plan({ in: "cookie", style: "form", explode: true });
    assert.equal(buildRequest(cookie, { color: "blue" }).headers.get("cookie"), "color=blue");
  });

  it("sends parameter content as JSON", () => {
    const p = plan({ in: "query", style: "form", explode: true, mediaType: "application/json" });
    assert.equal(url(p, { a: 1 }), "/x?color=%7B%22a%22%3A1%7D");
  });

  it("sends a body by its media type: JSON, a form, multipart with a base64 file", async () => {
    const base: OperationPlan = {
      method: "post",
      path: "/up",
      server: "http://api.test",
      parameters: [],
      wrapOutput: false,
      security: [],
      hasOutputSchema: false,
    };
    const json = buildRequest(
      { ...base, body: { mediaType: "application/json", argument: "body", binaryFields: [] } },
      { body: { a: [1] } },
    );
    assert.equal(json.body, '{"a":[1]}');
    assert.equal(json.headers.get("content-type"), "application/json");
    const form = buildRequest(
      {
        ...base,
        body: { mediaType: "application/x-www-form-urlencoded", argument: "body", binaryFields: [] },
      },
      { body: { q: "a b&c", n: 2 } },
    );
    assert.equal(form.body, "q=a+b%26c&n=2");
    const multi = buildRequest(
      { ...base, body: { mediaType: "multipart/form-data", argument: "body", binaryFields: ["file"] } },
      { body: { note: "hi", file: Buffer.from("bytes").toString("base64") } },
    );
    const data = multi.body as FormData;
    assert.equal(data.get("note"), "hi");
    assert.equal(await (data.get("file") as Blob).text(), "bytes");
    assert.throws(
      () =>
        buildRequest(
          { ...base, body: { mediaType: "multipart/form-data", argument: "body", binaryFields: ["file"] } },
          { body: { file: "%%%" } },
        ),
      /must be base64/,
    );
  });
});

describe("what a hostile document or argument cannot do", () => {
  const op = (path: string, server = "http://api.test/v1"): OperationPlan => ({
    method: "get",
    path,
    server,
    parameters: [
      { name: "a", in: "path", argument: "a", style: "simple", explode: false },
      { name: "b", in: "path", argument: "b", style: "simple", explode: false },
    ],
    wrapOutput: false,
    security: [],
    hasOutputSchema: false,
  });

  it("a dot segment never climbs out of the operation's path, encoded or not", () => {
    assert.throws(
      () => buildRequest(op("/files/{a}/{b}/x"), { a: "..", b: ".." }),
      /must not be "\." or "\.\."/,
    );
    assert.throws(() => buildRequest(op("/files/{a}/{b}/x"), { a: ["x", ".."], b: "y" }), ArgumentError);
    assert.equal(
      buildRequest(op("/files/{a}/{b}/x"), { a: "...", b: ".x" }).url,
      "http://api.test/v1/files/%2E%2E%2E/%2Ex/x",
    );
  });

  it("a path that would leave the server's base path or origin is refused", () => {
    assert.throws(
      () => buildRequest(op("/../admin/{a}{b}"), { a: "1", b: "2" }),
      /would leave http:\/\/api\.test\/v1\//,
    );
    assert.throws(
      () => buildRequest(op("@evil.test/{a}{b}", "http://api.test"), { a: "1", b: "2" }),
      /would leave/,
    );
  });

  it("configured headers win over parameters of the same name; a configured cookie comes first", () => {
    const plan: OperationPlan = {
      method: "get",
      path: "/x",
      server: "http://api.test",
      parameters: [
        { name: "X-Api-Key", in: "header", argument: "key", style: "simple", explode: false },
        { name: "session", in: "cookie", argument: "session", style: "form", explode: true },
      ],
      wrapOutput: false,
      security: [],
      hasOutputSchema: false,
    };
    const request = buildRequest(
      plan,
      { key: "attacker", session: "s1" },
      { "x-api-key": "admin-secret", cookie: "sso=1" },
    );
    assert.equal(request.headers.get("x-api-key"), "admin-secret");
    assert.equal(request.headers.get("cookie"), "sso=1; session=s1");
  });
});
