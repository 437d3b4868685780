// The documents of `openapi` providers that name a `documentUrl` (docs/openapi.md): fetched through
// the egress policy when the provider is saved and when an admin asks for a refresh, never on a
// call, and kept in the store so every replica serves the same copy (and none fetches it again on
// start). A copy is good for the URL it was fetched from only.
import type { Fetch } from "../../egress/fetch.js";
import type { Keys } from "../../store/keys.js";
import type { Store } from "../../store/store.js";
import { DEFAULT_MAX_DOCUMENT_BYTES, DocumentError } from "./document.js";
import { readBody, reason } from "../http-answers.js";

const FETCH_TIMEOUT_MS = 15_000;
const ACCEPT =
  "application/json, application/yaml;q=0.9, application/x-yaml;q=0.9, text/yaml;q=0.9, */*;q=0.1";

/** A kept copy: the document's text, and the servers its credentials are bound to. */
export interface Copy {
  readonly url: string;
  readonly fetchedAt: string;
  readonly text: string;
  /**
   * The servers the operations were called at when an admin last saved the provider with its
   * secrets (or it had none): a refresh that moves an operation elsewhere disables it.
   */
  readonly bound?: readonly string[];
}

/** Whether a fetch binds the credentials to the servers it finds, or keeps the binding there was. */
export type Binding = "bind" | "keep";

export class DocumentCopies {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    /** The egress-policy fetch, redirects kept to the same origin. */
    private readonly fetch: Fetch,
    private readonly maxBytes = DEFAULT_MAX_DOCUMENT_BYTES,
  ) {}

  /** The stored copy of `url`'s document, if there is one for that URL. */
  async read(tenant: string, provider: string, url: string): Promise<Copy | undefined> {
    const raw = await this.store.get(this.keys.openapiDocument(tenant, provider));
    if (raw === null) return undefined;
    const copy = JSON.parse(raw) as Copy;
    return copy.url === url ? copy : undefined;
  }

  /**
   * Fetches `url` now and keeps the copy once `check` accepted it, answering the servers its
   * operations are called at (a document that cannot be served never replaces the copy before
   * it); throws DocumentError when it cannot be had. `binding` "keep" keeps the servers the copy
   * before it was bound to.
   */
  async fetchAndKeep(
    tenant: string,
    provider: string,
    url: string,
    check: (text: string) => Promise<readonly string[]>,
    binding: Binding,
  ): Promise<Copy> {
    const text = await this.#fetch(url);
    const servers = await check(text);
    const before = binding === "keep" ? await this.read(tenant, provider, url) : undefined;
    const copy: Copy = {
      url,
      fetchedAt: new Date().toISOString(),
      text,
      bound: before?.bound ?? [...new Set(servers)],
    };
    await this.store.set(this.keys.openapiDocument(tenant, provider), JSON.stringify(copy));
    return copy;
  }

  /** The stored copy, else one fetched now and kept (a provider saved before its copy was). */
  async readOrFetch(
    tenant: string,
    provider: string,
    url: string,
    check: (text: string) => Promise<readonly string[]>,
  ): Promise<Copy> {
    return (
      (await this.read(tenant, provider, url)) ??
      (await this.fetchAndKeep(tenant, provider, url, check, "bind"))
    );
  }

  /** How to put back the copy kept now (or its absence), for a save that fails after fetching. */
  async undoer(tenant: string, provider: string): Promise<() => Promise<void>> {
    const key = this.keys.openapiDocument(tenant, provider);
    const raw = await this.store.get(key);
    return async () => {
      if (raw === null) await this.store.del(key);
      else await this.store.set(key, raw);
    };
  }

  async forget(tenant: string, provider: string): Promise<void> {
    await this.store.del(this.keys.openapiDocument(tenant, provider));
  }

  #fetch(url: string): Promise<string> {
    return fetchDocument(this.fetch, url, this.maxBytes);
  }
}

/**
 * The text at `url` (a document, or one its `$ref`s name), fetched with `fetch` (the egress
 * policy's, redirects kept within the origin): a 200 within `maxBytes`, else a DocumentError.
 */
export async function fetchDocument(fetch: Fetch, url: string, maxBytes: number): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: ACCEPT },
      redirect: "manual",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    throw new DocumentError(`could not be fetched from ${url}: ${reason(err)}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new DocumentError(`could not be fetched from ${url}: it answered HTTP ${response.status}`);
  }
  const { bytes, complete } = await readBody(response, maxBytes);
  if (!complete)
    throw new DocumentError(`is larger than ${maxBytes} bytes (PORTICO_OPENAPI_MAX_DOCUMENT_BYTES)`);
  return bytes.toString("utf8");
}
