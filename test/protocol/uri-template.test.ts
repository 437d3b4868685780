// RFC 6570 level 1: parsing complaints, simple string expansion (§3.2.2) and the reverse match.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expandTemplate, matchTemplate, templateVariables } from "../../src/protocol/uri-template.js";

describe("templateVariables", () => {
  it("lists the variables in order", () => {
    assert.deepEqual(templateVariables("docs://{section}/pages/{page}"), ["section", "page"]);
    assert.deepEqual(templateVariables("docs://static"), []);
  });

  it("rejects expressions beyond level 1, naming them", () => {
    for (const expr of ["{+path}", "{#frag}", "{?q}", "{a,b}", "{x*}", "{x:3}", "{}"])
      assert.throws(() => templateVariables(`docs://${expr}`), {
        message: `"${expr}" is not a simple {name} expression (only RFC 6570 level 1 is supported)`,
      });
  });

  it("rejects unbalanced braces, repeated variables and spaces", () => {
    assert.throws(() => templateVariables("docs://{page"), { message: '"{" without a matching "}"' });
    assert.throws(() => templateVariables("docs://page}"), { message: '"}" without a matching "{"' });
    assert.throws(() => templateVariables("docs://{a}/{a}"), { message: 'variable "a" appears twice' });
    assert.throws(() => templateVariables("docs://my page/{a}"), {
      message: "contains characters not allowed in a URI template",
    });
  });
});

describe("expandTemplate", () => {
  it("keeps unreserved characters and percent-encodes the rest as UTF-8 (RFC 6570 §3.2.2)", () => {
    assert.equal(expandTemplate("docs://{page}", { page: "a-b.c_d~e" }), "docs://a-b.c_d~e");
    assert.equal(expandTemplate("docs://{page}", { page: "a b/c?d" }), "docs://a%20b%2Fc%3Fd");
    assert.equal(expandTemplate("docs://{page}", { page: "!'()*" }), "docs://%21%27%28%29%2A");
    assert.equal(expandTemplate("docs://{page}", { page: "città" }), "docs://citt%C3%A0");
  });

  it("expands an undefined variable to the empty string (RFC 6570 §3.2.1)", () => {
    assert.equal(expandTemplate("docs://{a}/x/{b}", { a: "1" }), "docs://1/x/");
    assert.equal(expandTemplate("docs://{constructor}", {}), "docs://");
  });
});

describe("matchTemplate", () => {
  it("takes each variable from the URI and decodes it", () => {
    assert.deepEqual(matchTemplate("docs://{section}/pages/{page}", "docs://guide/pages/citt%C3%A0%20x"), {
      section: "guide",
      page: "città x",
    });
  });

  it("round-trips what expandTemplate produced", () => {
    const vars = { page: "a b/c?d&é" };
    assert.deepEqual(matchTemplate("docs://p/{page}", expandTemplate("docs://p/{page}", vars)), vars);
  });

  it("does not let a variable span a slash or be empty", () => {
    assert.equal(matchTemplate("docs://pages/{page}", "docs://pages/a/b"), undefined);
    assert.equal(matchTemplate("docs://pages/{page}", "docs://pages/"), undefined);
  });

  it("matches literals exactly, regular-expression characters included", () => {
    assert.equal(matchTemplate("docs://a.b/{x}", "docs://aXb/1"), undefined);
    assert.equal(matchTemplate("docs://pages/{page}", "other://pages/1"), undefined);
    assert.deepEqual(matchTemplate("docs://a.b/{x}", "docs://a.b/1"), { x: "1" });
  });

  it("refuses malformed percent-encoding instead of throwing", () => {
    assert.equal(matchTemplate("docs://pages/{page}", "docs://pages/%E0%A4%A"), undefined);
  });

  it("keeps a variable named __proto__ as a plain value", () => {
    const vars = matchTemplate("docs://{__proto__}", "docs://x");
    assert.equal(vars && Object.hasOwn(vars, "__proto__"), true);
  });
});
