import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keepText, resultJson, textOf } from "../../src/protocol/verbatim.js";

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
