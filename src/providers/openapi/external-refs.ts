// External `$ref`s of an OpenAPI document (docs/openapi.md, "External references"): the documents
// they name are fetched through the egress policy — http(s) only, never a file, redirects only
// within the origin, a bounded number of bounded documents — and bundled into the document, so
// the rest of Portico sees one document with internal references only. A reference another
// document makes is relative to that document's URL; a relative one in an inline document, with
// no URL to be relative to, is refused.
import { DocumentError, type Json } from "./document.js";

/** How many other documents one document may pull in, all told. */
export const MAX_EXTERNAL_DOCUMENTS = 20;
/** Where the fetched documents go in the bundle: `#/x-portico-external/<n>/…`. */
const BUNDLE_KEY = "x-portico-external";

export interface ExternalSources {
  /** The document's own URL (a `documentUrl`), which its relative references are relative to. */
  readonly base?: string;
  /** The text at an http(s) URL, fetched through the egress policy; throws DocumentError. */
  readonly fetchText: (url: string) => Promise<string>;
  /** Parses a fetched document (JSON or YAML, aliases bounded). */
  readonly parse: (text: string) => unknown;
  /** What the fetched documents may hold together, in bytes. */
  readonly maxBytes: number;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Every `$ref` string of a parsed document, replaced by `map(ref)`. Each node once: YAML anchors
 * share nodes, and an alias inside its own anchor makes a cycle (which checkRefs then refuses).
 */
function rewriteRefs(value: unknown, map: (ref: string) => string): void {
  const stack: unknown[] = [value];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) stack.push(...node);
    else if (isObject(node))
      for (const [key, child] of Object.entries(node)) {
        if (key === "$ref" && typeof child === "string") node.$ref = map(child);
        else if (typeof child === "object" && child !== null) stack.push(child);
      }
  }
}

function hasExternal(value: unknown): boolean {
  let found = false;
  rewriteRefs(value, (ref) => ((found ||= !ref.startsWith("#")), ref));
  return found;
}

/** The absolute http(s) URL a reference names (fragment apart), or a DocumentError. */
function target(ref: string, base: string | undefined): { url: string; fragment: string } {
  const hash = ref.indexOf("#");
  const address = hash < 0 ? ref : ref.slice(0, hash);
  const fragment = hash < 0 ? "" : ref.slice(hash + 1);
  const shown = JSON.stringify(ref.slice(0, 200));
  let url: URL;
  try {
    url = base === undefined ? new URL(address) : new URL(address, base);
  } catch {
    throw new DocumentError(
      `has a relative $ref ${shown} and no URL to resolve it against: give the document as a documentUrl, or bundle it into one document`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new DocumentError(
      `has a $ref ${shown} to a ${url.protocol} URL: Portico fetches only http(s) documents, through the egress policy, and reads no file`,
    );
  url.hash = "";
  return { url: url.href, fragment };
}

/**
 * `document` with the documents its external references name (and theirs) fetched and bundled
 * under `x-portico-external`, every reference made internal; the document itself when it has
 * none. Throws DocumentError for a reference Portico will not follow or a document it cannot get.
 */
export async function bundleExternalRefs(document: Json, sources: ExternalSources): Promise<Json> {
  if (!hasExternal(document)) return document;
  // References are rewritten in place: in a copy, so the admin's record stays as given.
  const root = structuredClone(document);
  const fetched: unknown[] = [];
  const index = new Map<string, number>();
  let bytes = 0;
  // Breadth first: each fetched document's own references are relative to its URL.
  const queue: Array<{ node: unknown; base: string | undefined; self?: number }> = [
    { node: root, base: sources.base },
  ];
  while (queue.length > 0) {
    const { node, base, self } = queue.shift()!;
    const pending: Array<{ url: string }> = [];
    rewriteRefs(node, (ref) => {
      if (ref.startsWith("#"))
        // Within a fetched document, "#/…" is that document's own.
        return self === undefined ? ref : `#/${BUNDLE_KEY}/${self}${ref.slice(1)}`;
      const { url, fragment } = target(ref, base);
      let n = index.get(url);
      if (n === undefined) {
        if (index.size >= MAX_EXTERNAL_DOCUMENTS)
          throw new DocumentError(
            `has $refs to more than ${MAX_EXTERNAL_DOCUMENTS} other documents: bundle them into fewer`,
          );
        n = index.size;
        index.set(url, n);
        pending.push({ url });
      }
      return `#/${BUNDLE_KEY}/${n}${fragment.startsWith("/") || fragment === "" ? fragment : `/${fragment}`}`;
    });
    for (const { url } of pending) {
      let text: string;
      try {
        text = await sources.fetchText(url);
      } catch (err) {
        if (err instanceof DocumentError) throw new DocumentError(`has a $ref whose document ${err.message}`);
        throw err;
      }
      bytes += Buffer.byteLength(text);
      if (bytes > sources.maxBytes)
        throw new DocumentError(
          `and the documents its $refs name are larger than ${sources.maxBytes} bytes together (PORTICO_OPENAPI_MAX_DOCUMENT_BYTES)`,
        );
      let parsed: unknown;
      try {
        parsed = sources.parse(text);
      } catch (err) {
        throw new DocumentError(`has a $ref to ${url}, which ${(err as Error).message}`);
      }
      const n = index.get(url)!;
      fetched[n] = parsed;
      queue.push({ node: parsed, base: url, self: n });
    }
  }
  return { ...root, [BUNDLE_KEY]: fetched };
}
