// Client ID Metadata Documents (MCP 2025-11-25 "Client ID Metadata Documents",
// draft-ietf-oauth-client-id-metadata-document): an https client_id is fetched, through an
// SSRF-safe fetch that reaches public addresses only, with size and time limits, validated, and
// cached per its HTTP cache headers within bounds.
import { egressFetch, type Fetch } from "../egress/fetch.js";
import { EgressPolicy } from "../egress/policy.js";
import { OAuthClientError, validateRegistration, type ClientMetadata } from "./clients.js";

/** The metadata of a client identified by its document URL. */
export type ClientIdMetadata = ClientMetadata & { readonly client_id: string; readonly client_name: string };

export interface ClientMetadataFetcherOptions {
  /** The fetch to use. Default: the egress fetch under a public-addresses-only policy. */
  readonly fetch?: Fetch;
  /** Non-public CIDRs an operator opens to document fetches (metadata addresses stay refused). */
  readonly allowCidrs?: readonly string[];
  /** PEM CA certificates trusted besides Node's roots (private PKI, tests). */
  readonly extraCaCertificates?: readonly string[];
  /** Largest document accepted. Default 5120: the draft suggests 5 KB; real documents are < 1 KB. */
  readonly maxBytes?: number;
  /** Whole fetch, body included. Default 5000. */
  readonly timeoutMs?: number;
  /** Cache lifetime bounds applied to the document's headers. Defaults 60 and 86400. */
  readonly minCacheSeconds?: number;
  readonly maxCacheSeconds?: number;
  /** Lifetime when the response has no Cache-Control max-age or Expires. Default 300. */
  readonly defaultCacheSeconds?: number;
  /** Documents kept in memory; the least recently used is dropped first. Default 1000. */
  readonly maxEntries?: number;
  readonly now?: () => number;
  /** Documents this server publishes itself (connect-client.ts): resolved without a fetch. */
  readonly builtIn?: readonly ClientIdMetadata[];
}

const MAX_CLIENT_ID_URL = 2048;
const URI_CHARS = /^[A-Za-z0-9\-._~:/?[\]@!$&'()*+,;=%]+$/;
/** "." and "..", also percent-encoded: URL parsers resolve %2e like a dot. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Whether a client_id is a metadata document URL: https, a path beyond "/", no fragment,
 * credentials or dot segments (draft section 3), written in canonical form so that the URL
 * fetched is the string the document must repeat.
 */
export function isClientIdUrl(clientId: string): boolean {
  if (clientId.length > MAX_CLIENT_ID_URL || !clientId.startsWith("https://")) return false;
  if (!URI_CHARS.test(clientId) || !URL.canParse(clientId)) return false;
  const url = new URL(clientId);
  if (url.href !== clientId || url.username !== "" || url.password !== "") return false;
  const rawPath = clientId.slice(url.origin.length).split("?", 1)[0] ?? "";
  return url.pathname !== "/" && !rawPath.split("/").some((s) => DOT_SEGMENT.test(s));
}

interface CacheEntry {
  readonly metadata: ClientIdMetadata;
  readonly expiresAtMs: number;
}

const refuse = (description: string, reason?: string, cause?: unknown) =>
  new OAuthClientError("invalid_client", `client metadata document: ${description}`, reason, { cause });

export class ClientMetadataFetcher {
  readonly #fetch: Fetch;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inflight = new Map<string, Promise<ClientIdMetadata>>();
  readonly #maxBytes: number;
  readonly #timeoutMs: number;
  readonly #minCache: number;
  readonly #maxCache: number;
  readonly #defaultCache: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #builtIn: ReadonlyMap<string, ClientIdMetadata>;

  constructor(options: ClientMetadataFetcherOptions = {}) {
    const policy = new EgressPolicy({ publicOnly: true, publicOnlyExceptCidrs: options.allowCidrs ?? [] });
    this.#fetch =
      options.fetch ?? egressFetch(policy, { extraCaCertificates: options.extraCaCertificates ?? [] });
    this.#maxBytes = options.maxBytes ?? 5120;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#minCache = options.minCacheSeconds ?? 60;
    this.#maxCache = options.maxCacheSeconds ?? 86_400;
    this.#defaultCache = options.defaultCacheSeconds ?? 300;
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#now = options.now ?? Date.now;
    this.#builtIn = new Map((options.builtIn ?? []).map((doc) => [doc.client_id, doc]));
  }

  /** Whether a client_id names a metadata document: a URL isClientIdUrl accepts, or a built-in one. */
  isClientId(clientId: string): boolean {
    return this.#builtIn.has(clientId) || isClientIdUrl(clientId);
  }

  /** The validated metadata of a URL client_id, from the cache or fetched; throws invalid_client. */
  async resolve(clientIdUrl: string): Promise<ClientIdMetadata> {
    const own = this.#builtIn.get(clientIdUrl);
    if (own) return own;
    if (!isClientIdUrl(clientIdUrl))
      throw refuse(
        "client_id must be an https URL with a path, without fragment, credentials or dot segments",
      );
    const cached = this.#cache.get(clientIdUrl);
    if (cached && cached.expiresAtMs > this.#now()) {
      this.#cache.delete(clientIdUrl); // re-inserted: Map order is recency order
      this.#cache.set(clientIdUrl, cached);
      return cached.metadata;
    }
    // Concurrent authorization requests for one client share a single fetch.
    let pending = this.#inflight.get(clientIdUrl);
    if (!pending) {
      pending = this.#fetchAndCache(clientIdUrl).finally(() => this.#inflight.delete(clientIdUrl));
      this.#inflight.set(clientIdUrl, pending);
    }
    return pending;
  }

  async #fetchAndCache(url: string): Promise<ClientIdMetadata> {
    const { body, ttlSeconds } = await this.#download(url);
    const metadata = validateDocument(url, body);
    this.#cache.delete(url);
    this.#cache.set(url, { metadata, expiresAtMs: this.#now() + ttlSeconds * 1000 });
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= this.#maxEntries) break;
      this.#cache.delete(oldest);
    }
    return metadata;
  }

  /** GET with the limits the draft asks for: no redirects, 200 only, JSON only, bounded size and time. */
  async #download(url: string): Promise<{ body: string; ttlSeconds: number }> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    let response: Response;
    try {
      response = await this.#fetch(url, {
        headers: { accept: "application/json" },
        redirect: "manual",
        signal,
      });
    } catch (err) {
      throw this.#networkError(err, signal);
    }
    try {
      // Draft section 4: MUST NOT automatically follow redirects; any status but 200 is an error.
      if (response.status !== 200) {
        const redirect =
          response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
        throw refuse(`the URL answered HTTP ${response.status}${redirect}`);
      }
      if (!isJsonType(response.headers.get("content-type")))
        throw refuse("the response must have content-type application/json");
      const declared = Number(response.headers.get("content-length") ?? "0");
      if (declared > this.#maxBytes) throw refuse(`the document is larger than ${this.#maxBytes} bytes`);
      const body = await readLimited(response, this.#maxBytes);
      if (body === undefined) throw refuse(`the document is larger than ${this.#maxBytes} bytes`);
      return { body, ttlSeconds: this.#lifetime(response.headers) };
    } catch (err) {
      await response.body?.cancel().catch(() => undefined);
      if (err instanceof OAuthClientError) throw err;
      throw this.#networkError(err, signal);
    }
  }

  #networkError(err: unknown, signal: AbortSignal): OAuthClientError {
    const detail = describeCause(err);
    if (signal.aborted) return refuse(`fetching it took longer than ${this.#timeoutMs} ms`, detail, err);
    if (causes(err).some((e) => (e as { code?: unknown }).code === "EGRESS_REFUSED"))
      return refuse("its host is not a public address, and only public addresses are fetched", detail, err);
    return refuse("it could not be fetched", detail, err);
  }

  /** Seconds to cache: max-age, else Expires, else the default; then bounded. */
  #lifetime(headers: Headers): number {
    const cacheControl = (headers.get("cache-control") ?? "").toLowerCase();
    const directives = cacheControl.split(",").map((d) => d.trim());
    let seconds: number | undefined;
    // no-store / no-cache still get the minimum: refetching on every request would let anyone
    // make Portico hammer a host, and the minimum is short.
    if (directives.some((d) => d === "no-store" || d === "no-cache")) seconds = 0;
    const maxAge = directives.map((d) => /^max-age=(\d+)$/.exec(d)?.[1]).find((v) => v !== undefined);
    if (seconds === undefined && maxAge !== undefined)
      seconds = Number(maxAge) - Number(headers.get("age") ?? 0);
    const expires = Date.parse(headers.get("expires") ?? "");
    if (seconds === undefined && !Number.isNaN(expires)) {
      const date = Date.parse(headers.get("date") ?? "");
      seconds = (expires - (Number.isNaN(date) ? this.#now() : date)) / 1000;
    }
    const value = Number.isFinite(seconds) ? (seconds as number) : this.#defaultCache;
    return Math.min(this.#maxCache, Math.max(this.#minCache, Math.floor(value)));
  }
}

/** Checks the document (draft sections 4.1 and 5; MCP: client_id, client_name, redirect_uris). */
function validateDocument(url: string, body: string): ClientIdMetadata {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw refuse("the response is not valid JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw refuse("the document must be a JSON object");
  const d = doc as Record<string, unknown>;
  // MCP: the authorization server MUST check that client_id equals the URL exactly.
  if (d["client_id"] !== url) throw refuse("its client_id does not equal the URL it was fetched from");
  if (typeof d["client_name"] !== "string" || d["client_name"] === "")
    throw refuse("client_name is required");
  if ("client_secret" in d || "client_secret_expires_at" in d)
    throw refuse("a metadata document must not carry a client secret");
  const method = d["token_endpoint_auth_method"] ?? "none";
  if (method === "private_key_jwt") throw refuse("private_key_jwt is not supported: use none");
  if (method !== "none") throw refuse("token_endpoint_auth_method must be none (no shared secrets)");
  let metadata: ClientMetadata;
  try {
    metadata = validateRegistration({ ...d, token_endpoint_auth_method: "none" });
  } catch (err) {
    if (err instanceof OAuthClientError) throw refuse(err.description);
    throw err;
  }
  return { ...metadata, client_id: url, client_name: metadata.client_name ?? "" };
}

/** application/json, or a more specific application/<name>+json (draft section 4). */
function isJsonType(contentType: string | null): boolean {
  const type = (contentType ?? "").split(";", 1)[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

/** The body as UTF-8, or undefined once it passes maxBytes (the rest is never read). */
async function readLimited(response: Response, maxBytes: number): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw refuse("the response is not valid UTF-8");
  }
}

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 5; e = (e as { cause?: unknown }).cause)
    chain.push(e);
  return chain;
}

/** For the log: the innermost error's message. */
function describeCause(err: unknown): string {
  const last = causes(err).at(-1);
  return last instanceof Error ? last.message : String(last);
}
