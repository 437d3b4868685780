import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keepRewritten, keepText, resultJson, textOf } from "../../src/protocol/verbatim.js";

/** Parses `text` as the answer to request 7 and keeps its result when it may be passed on. */
function read(text: string) {
  const message = JSON.parse(text) as { result: Record<string, unknown> };
  keepText(text, 7, message, message.result);
  return message.result;
}

describe("results passed on as the upstream wrote them", () => {
  it("keeps the result of both SDKs' compact envelopes, spelled as sent", () => {
    const python = read('{"jsonrpc":"2.0","id":7,"result":{"n":1.0,"s":"\\u00e9 }\\" ]"}}\n');
    assert.equal(textOf(python), '{"n":1.0,"s":"\\u00e9 }\\" ]"}');
    const typescript = read('{"result":{"content":[{"type":"text","text":"}{"}]},"jsonrpc":"2.0","id":7}');
    assert.equal(textOf(typescript), '{"content":[{"type":"text","text":"}{"}]}');
  });

  it("writes a kept result under the client's id, and serializes any other", () => {
    const kept = read('{"jsonrpc":"2.0","id":7,"result":{"n":1.0}}');
    assert.equal(resultJson("abc", kept), '{"jsonrpc":"2.0","id":"abc","result":{"n":1.0}}');
    assert.equal(resultJson(3, { n: 1.0 }), '{"jsonrpc":"2.0","id":3,"result":{"n":1}}');
  });

  it("freezes a kept result: a change in place fails instead of going unsent", () => {
    const kept = read('{"jsonrpc":"2.0","id":7,"result":{"n":1}}');
    assert.throws(() => ((kept as { n: number }).n = 2), TypeError);
  });

  it("a copy made from a kept result (a change by spreading) has no text of its own", () => {
    const kept = read('{"jsonrpc":"2.0","id":7,"result":{"n":1,"m":2}}');
    const changed = { ...kept, n: 3 };
    const { m: _m, ...rest } = kept;
    assert.equal(textOf(changed), undefined);
    assert.equal(textOf(rest), undefined);
    assert.equal(resultJson(1, changed), '{"jsonrpc":"2.0","id":1,"result":{"n":3,"m":2}}');
  });

  const refused: Array<[string, string]> = [
    ["spaced out", '{"jsonrpc": "2.0", "id": 7, "result": {"n": 1}}'],
    ["another member beside them", '{"jsonrpc":"2.0","id":7,"result":{"n":1},"x":1}'],
    ["the result twice (jsonrpc first)", '{"jsonrpc":"2.0","id":7,"result":{"n":1},"result":{"n":2}}'],
    ["the result twice (result first)", '{"result":{"n":1},"result":{"n":2},"jsonrpc":"2.0","id":7}'],
    ["a member repeated after the result", '{"jsonrpc":"2.0","id":7,"result":{"n":1},"jsonrpc":"2.0"}'],
    ["the id spelled otherwise", '{"jsonrpc":"2.0","id":7.0,"result":{"n":1}}'],
    ["another order", '{"id":7,"jsonrpc":"2.0","result":{"n":1}}'],
  ];
  for (const [what, text] of refused)
    it(`is serialized again for an answer with ${what}`, () => {
      const result = read(text);
      assert.equal(textOf(result), undefined);
      assert.equal(Object.isFrozen(result), false);
    });
});

describe("a kept result with members written in (the 2026-07-28 lane's stamps)", () => {
  /** `after` of the kept result of `text`, its text or undefined when serialized again. */
  function rewrite(text: string, change: (r: Record<string, unknown>) => Record<string, unknown>) {
    const before = read(`{"jsonrpc":"2.0","id":7,"result":${text}}`);
    const after = change(before);
    keepRewritten(before, after);
    const out = textOf(after);
    if (out !== undefined) assert.deepEqual(JSON.parse(out), JSON.parse(JSON.stringify(after)));
    return out;
  }

  it("replaces a changed member's value in place and appends new ones in order", () => {
    assert.equal(
      rewrite('{"a":[1,{"_meta":0}],"_meta":{"s":"x"},"n":1.0}', (r) => ({
        ...r,
        _meta: { s: "P" },
        t: "c",
        u: 2,
      })),
      '{"a":[1,{"_meta":0}],"_meta":{"s":"P"},"n":1.0,"t":"c","u":2}',
    );
  });

  it("finds members however they are spaced, after strings with escapes and literals", () => {
    assert.equal(
      rewrite('{ "s" : "a\\"}" , "b" : true , "_meta" : null , "n" : -1.5e3 }', (r) => ({ ...r, _meta: {} })),
      '{ "s" : "a\\"}" , "b" : true , "_meta" : {} , "n" : -1.5e3 }',
    );
  });

  it("appends to an empty object", () => {
    assert.equal(
      rewrite("{}", (r) => ({ ...r, resultType: "complete" })),
      '{"resultType":"complete"}',
    );
    assert.equal(
      rewrite("{ }", (r) => ({ ...r, resultType: "complete" })),
      '{"resultType":"complete"}',
    );
  });

  it("leaves members that are the same value alone, and skips added undefined ones", () => {
    assert.equal(
      rewrite('{"n":1.0,"t":"c"}', (r) => ({ ...r, t: "c", u: undefined })),
      '{"n":1.0,"t":"c"}',
    );
  });

  const serialized: Array<[string, string, (r: Record<string, unknown>) => Record<string, unknown>]> = [
    ["a member removed", '{"n":1,"ttlMs":5}', ({ ttlMs: _t, ...rest }) => rest],
    ["a member set to undefined", '{"n":1,"ttlMs":5}', (r) => ({ ...r, ttlMs: undefined })],
    ["the member written twice", '{"_meta":{},"n":1,"_meta":{"s":1}}', (r) => ({ ...r, _meta: { s: 2 } })],
    [
      "the member's name spelled with an escape",
      '{"\\u005fmeta":{"s":1}}',
      (r) => ({ ...r, _meta: { s: 2 } }),
    ],
    [
      "the member written twice, once with an escape (the escaped one is what a client keeps)",
      '{"_meta":{"s":1},"_\\u006deta":{"s":"evil"}}',
      (r) => ({ ...r, _meta: { s: 2 } }),
    ],
    ["any member's name with an escape", '{"a\\"b":1,"_meta":{"s":1}}', (r) => ({ ...r, _meta: { s: 2 } })],
  ];
  for (const [what, text, change] of serialized)
    it(`is serialized again for ${what}`, () => assert.equal(rewrite(text, change), undefined));

  it("a result without text gives its copy none", () => {
    const after = { n: 1, t: "c" };
    keepRewritten({ n: 1 }, after);
    assert.equal(textOf(after), undefined);
    assert.equal(Object.isFrozen(after), false);
  });
});
