// Ranking short texts (tool definitions) for a query in plain words (docs/tool-search.md). Two
// signals, blended: BM25 over the texts' words (MiniSearch; stop words dropped, Porter stems,
// prefixes and one typo for longer words), which rewards the query's own words; and meaning, from
// word vectors (word-vectors.ts), which finds "reboot the backend" in "Restarts a service". The
// meaning of a query against a text is half soft matching — each query word's closest word in the
// text, weighted by how rare the query word is in the catalog — and half the cosine of their
// rarity-weighted mean vectors. BM25 alone missed half of the paraphrased queries it was measured
// on; the blend's weights are the middle of the range that did best there.
import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import { eng as ENGLISH_STOPWORDS } from "stopword";
import { wordVectors, type WordVectors } from "./word-vectors.js";

/** The blend: this much BM25 (scaled to the best hit), the rest meaning. */
const WORDS_WEIGHT = 0.1;
/** Of meaning: this much soft word matching, the rest mean vectors. */
const SOFT_WEIGHT = 0.5;
/** Of a query, what is searched: the work grows with its words times the catalog's. */
const MAX_QUERY_CHARS = 1024;
const MAX_QUERY_WORDS = 32;
/** A text that matches no query word is a hit only with at least this much meaning. */
const MIN_MEANING = 0.45;

const STOPWORDS: ReadonlySet<string> = new Set(ENGLISH_STOPWORDS);

/** Words of a name or text: camelCase and snake_case split, lower case. */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])(?=[A-Z][a-z])/g, "$1 ")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** A word as indexed and searched: stop words dropped, the rest stemmed (Porter). */
function term(word: string): string | null {
  return STOPWORDS.has(word) ? null : stemmer(word);
}

/** Prefix matches for longer words only: a short one would match half the catalog. */
function matchOptions(word: string) {
  return { prefix: word.length >= 4, fuzzy: word.length >= 6 ? 1 : 0 };
}

export interface Ranked {
  /** The text's position in the list the index was built from. */
  readonly index: number;
  readonly score: number;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** The rarity-weighted mean of vectors, unit length (zero when there are none). */
function meanOf(weighted: ReadonlyArray<readonly [Float32Array, number]>, dims: number): Float32Array {
  const sum = new Float32Array(dims);
  for (const [vector, weight] of weighted) for (let i = 0; i < dims; i++) sum[i]! += weight * vector[i]!;
  const norm = Math.sqrt(dot(sum, sum)) || 1;
  for (let i = 0; i < dims; i++) sum[i]! /= norm;
  return sum;
}

/** The meaning side of an index: the catalog's own vocabulary, and each text's words in it. */
class Meaning {
  /** The catalog's distinct words that have vectors: word → slot. */
  readonly #slots = new Map<string, number>();
  readonly #vectors: Float32Array[] = [];
  /** Per slot: how rare the word is among the texts (inverse document frequency). */
  readonly #idf: number[] = [];
  /** The rarity of a query word no text has. */
  readonly #unseenIdf: number;
  /** Per text: the slots of its distinct words. */
  readonly #texts: Int32Array[];
  /** Per text: its rarity-weighted mean vector. */
  readonly #means: Float32Array[];

  constructor(
    readonly words: WordVectors,
    texts: readonly string[],
  ) {
    const df: number[] = [];
    this.#texts = texts.map((text) => {
      const own = new Set<number>();
      for (const word of wordsOf(text)) {
        if (STOPWORDS.has(word)) continue;
        let slot = this.#slots.get(word);
        if (slot === undefined) {
          const vector = words.vector(word);
          if (!vector) continue;
          slot = this.#vectors.push(vector) - 1;
          this.#slots.set(word, slot);
          df.push(0);
        }
        own.add(slot);
      }
      for (const slot of own) df[slot]!++;
      return Int32Array.from(own);
    });
    for (const n of df) this.#idf.push(Math.log((texts.length + 1) / (n + 0.5)));
    this.#unseenIdf = Math.log((texts.length + 1) / 0.5);
    this.#means = this.#texts.map((slots) =>
      meanOf(
        Array.from(slots, (s) => [this.#vectors[s]!, this.#idf[s]!] as const),
        words.dims,
      ),
    );
  }

  /** The meaning score of every text for the query's words, or null when none has a vector. */
  scores(queryWords: readonly string[]): Float32Array | null {
    const query: Array<{ vector: Float32Array; idf: number }> = [];
    for (const word of new Set(queryWords)) {
      if (STOPWORDS.has(word)) continue;
      const vector = this.words.vector(word);
      if (!vector) continue;
      const slot = this.#slots.get(word);
      query.push({ vector, idf: slot === undefined ? this.#unseenIdf : this.#idf[slot]! });
    }
    if (query.length === 0) return null;
    const idfSum = query.reduce((sum, q) => sum + q.idf, 0);
    // Each query word against each catalog word once; the texts then only take maxima.
    const close = query.map((q) => Float32Array.from(this.#vectors, (v) => dot(q.vector, v)));
    const queryMean = meanOf(
      query.map((q) => [q.vector, q.idf] as const),
      this.words.dims,
    );
    return Float32Array.from(this.#texts, (slots, t) => {
      let soft = 0;
      query.forEach((q, k) => {
        let best = 0;
        for (const slot of slots) best = Math.max(best, close[k]![slot]!);
        soft += q.idf * best;
      });
      return SOFT_WEIGHT * (soft / idfSum) + (1 - SOFT_WEIGHT) * dot(this.#means[t]!, queryMean);
    });
  }
}

/** An index of texts, built once; search ranks them for a query. */
export class TextIndex {
  readonly #words: MiniSearch;
  readonly #meaning: Meaning | null;
  readonly #size: number;

  constructor(texts: readonly string[]) {
    this.#size = texts.length;
    this.#words = new MiniSearch({
      idField: "i",
      fields: ["text"],
      tokenize: wordsOf,
      processTerm: term,
      searchOptions: {
        prefix: (word) => matchOptions(word).prefix,
        fuzzy: (word) => matchOptions(word).fuzzy,
      },
    });
    this.#words.addAll(texts.map((text, i) => ({ i, text })));
    const vectors = wordVectors();
    this.#meaning = vectors && new Meaning(vectors, texts);
  }

  /** Every text that matches, best first; of a long query, its first MAX_QUERY_WORDS words. */
  search(text: string): Ranked[] {
    const query = wordsOf(text.slice(0, MAX_QUERY_CHARS)).slice(0, MAX_QUERY_WORDS).join(" ");
    const words = new Map<number, number>();
    let best = 0;
    for (const hit of this.#words.search(query, { combineWith: "OR" })) {
      words.set(hit.id as number, hit.score);
      best = Math.max(best, hit.score);
    }
    const meaning = this.#meaning?.scores(query.split(" "));
    if (!meaning) return [...words].map(([index, score]) => ({ index, score })).sort(byScore);
    const out: Ranked[] = [];
    for (let index = 0; index < this.#size; index++) {
      const bm25 = words.get(index);
      if (bm25 === undefined && meaning[index]! < MIN_MEANING) continue;
      out.push({
        index,
        score: WORDS_WEIGHT * ((bm25 ?? 0) / best || 0) + (1 - WORDS_WEIGHT) * meaning[index]!,
      });
    }
    return out.sort(byScore);
  }
}

function byScore(a: Ranked, b: Ranked): number {
  return b.score - a.score || a.index - b.index;
}
