// The ranking of texts for a query (src/search/text-index.ts): words and meaning blended, so a
// query finds a text by what it means as well as by the words they share, and a query of nothing
// known finds nothing.
import assert from "node:assert/strict";
import { it } from "node:test";
import { TextIndex } from "../../src/search/text-index.js";
import { wordVectors } from "../../src/search/word-vectors.js";

const TEXTS = [
  "restart_service Restarts every instance of a running service",
  "silence_alert Silences a monitoring alert for a while",
  "convert_currency Converts an amount between two currencies at today's rate",
  "list_payments Lists the payments of the workspace",
];
const index = new TextIndex(TEXTS);
const best = (query: string) => TEXTS[index.search(query)[0]?.index ?? -1]?.split(" ")[0];

it("reads the word vectors shipped in src/search/", () => {
  const vectors = wordVectors();
  assert.ok(vectors, "word-vectors.bin is readable");
  const reboot = vectors.vector("reboot")!;
  const cosine = (word: string) => vectors.vector(word)!.reduce((sum, x, i) => sum + x * reboot[i]!, 0);
  assert.ok(cosine("restart") > cosine("payment"), "reboot is nearer restart than payment");
  assert.ok(vectors.vector("euros"), "a plural is found in its plain form");
  assert.equal(vectors.vector("xqzzyv"), undefined);
});

it("finds a text by meaning when the query shares none of its words", () => {
  assert.equal(best("the alarm keeps ringing"), "silence_alert");
  assert.equal(best("mute the alarm"), "silence_alert");
  assert.equal(best("how many euros is a dollar"), "convert_currency");
});

it("still ranks a text with the query's own words first", () => {
  assert.equal(best("list payments"), "list_payments");
  assert.equal(best("currency"), "convert_currency");
});

it("finds nothing for a query of unknown words, and scores in [0, 1]", () => {
  assert.deepEqual(index.search("xqzzyv blorptang"), []);
  for (const hit of index.search("restart the service"))
    assert.ok(hit.score >= 0 && hit.score <= 1, String(hit.score));
});
