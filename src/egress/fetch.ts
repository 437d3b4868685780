// A fetch whose every connection — first request and each redirect hop — goes to an address the
// egress policy allows. The check runs in the connector on the resolved address, and the socket
// connects to that same address (no second DNS lookup an attacker could rebind); TLS still
// verifies the original host name.
import { lookup } from "node:dns/promises";
import { rootCertificates } from "node:tls";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import { canonicalAddress } from "./address.js";
import type { EgressPolicy } from "./policy.js";

export type Fetch = typeof globalThis.fetch;

/** A DNS lookup returning every address (node:dns/promises `lookup` with `all: true`). */
export type Lookup = (hostname: string) => Promise<ReadonlyArray<{ readonly address: string }>>;

const systemLookup: Lookup = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a host once and returns the canonical address to dial, after checking every address it
 * resolves to. IP literals in any spelling are judged and dialled in canonical form.
 */
async function resolveChecked(policy: EgressPolicy, hostname: string, resolve: Lookup): Promise<string> {
  const literal = canonicalAddress(hostname);
  if (literal) {
    policy.check(literal.address, hostname);
    return literal.address;
  }
  // "localhost." and "localhost" are one name (an absolute FQDN); resolvers disagree on the dot.
  const addresses = await resolve(hostname.endsWith(".") ? hostname.slice(0, -1) : hostname);
  // Every answer is vetted: a name that resolves to one good and one forbidden address is refused.
  for (const { address } of addresses) policy.check(address, hostname);
  const first = addresses[0];
  if (!first) throw new Error(`${hostname} did not resolve`);
  return canonicalAddress(first.address)!.address;
}

export interface EgressFetchOptions {
  /** PEM certificates trusted in addition to Node's bundled roots (tests, private PKI). */
  readonly extraCaCertificates?: readonly string[];
  /** The resolver (tests inject one that answers differently each time). Default: the system's. */
  readonly lookup?: Lookup;
  /** How long a connection (TCP and TLS) may take to open; default 10 s. */
  readonly connectTimeoutMs?: number;
  /** How long an answer's headers may take; 0 (the default) waits as long as the caller does. */
  readonly headersTimeoutMs?: number;
}

/**
 * The undici Agent bound to the policy, for provider traffic: it keeps one keep-alive pool per
 * origin (no pipelining, connections as many as calls in flight). Upstream MCP clients use it
 * directly (docs/upstream-mcp.md); egressFetch wraps it for the rest. A connection that does not
 * open, or an answer whose headers do not come, is bounded here (PORTICO_UPSTREAM_CONNECT_TIMEOUT_MS,
 * PORTICO_UPSTREAM_HEADERS_TIMEOUT_MS); a body never is (bodyTimeout 0): an SSE answer may wait on
 * the user and a GET stream may be quiet for hours. The rest is the callers' (call deadlines).
 */
export function egressDispatcher(policy: EgressPolicy, fetchOptions: EgressFetchOptions = {}): Agent {
  const extra = fetchOptions.extraCaCertificates ?? [];
  const resolve = fetchOptions.lookup ?? systemLookup;
  const connect = buildConnector({
    timeout: fetchOptions.connectTimeoutMs ?? 10_000,
    ...(extra.length > 0 && { ca: [...rootCertificates, ...extra] }),
  });
  return new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    pipelining: 1,
    headersTimeout: fetchOptions.headersTimeoutMs ?? 0,
    bodyTimeout: 0,
    connect: (options, callback) => {
      resolveChecked(policy, options.hostname, resolve).then(
        (address) =>
          connect(
            { ...options, hostname: address, servername: options.servername ?? serverName(options.hostname) },
            callback,
          ),
        (err: Error) => callback(err, null),
      );
    },
  });
}

/** A fetch bound to the policy (or to an egressDispatcher already built), for provider traffic. */
export function egressFetch(policy: EgressPolicy | Agent, fetchOptions: EgressFetchOptions = {}): Fetch {
  const dispatcher = policy instanceof Agent ? policy : egressDispatcher(policy, fetchOptions);
  const fetch = (input: Parameters<Fetch>[0], init?: Parameters<Fetch>[1]) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as object), dispatcher });
  return fetch;
}

/** The statuses a redirect answers with. */
export const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

export class CrossOriginRedirect extends Error {
  override readonly name = "CrossOriginRedirect";
  readonly code = "EGRESS_CROSS_ORIGIN_REDIRECT";
}

/**
 * `fetch` for provider traffic, whose requests carry secrets bound to their destination
 * (docs/security.md, "Write-only secrets"): redirects are followed only within the request's
 * origin (scheme, host, port). fetch itself drops only `Authorization` on a cross-origin hop and
 * would carry every custom header (an API key) to wherever an upstream, or an open redirect below
 * a kept URL, points; such a hop fails instead, before anything is sent to the other origin. A
 * caller's own `redirect: "manual"` or `"error"` is left as it is.
 */
export function sameOriginRedirects(fetch: Fetch): Fetch {
  return async (input, init) => {
    if (init?.redirect === "manual" || init?.redirect === "error") return fetch(input, init);
    // A Request is not taken apart: its redirects are answered, not followed.
    if (input instanceof Request) return fetch(input, { ...init, redirect: "manual" });
    let hopInit: RequestInit = { ...init, redirect: "manual" };
    let response = await fetch(input, hopInit);
    // The URL is parsed only when a redirect comes back: an answer costs what it did.
    if (!REDIRECTS.has(response.status)) return response;
    let url = new URL(String(input));
    for (let hop = 0; ; hop++) {
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || location === null) return response;
      await response.body?.cancel().catch(() => undefined);
      const method = (hopInit.method ?? "GET").toUpperCase();
      const next = sameOriginHop(url, response.status, location, method, hop);
      if (!replayable(hopInit.body))
        throw new Error(`${url.origin} redirected a request whose body cannot be sent again`);
      if (next.method !== method) {
        const { body: _body, ...rest } = hopInit;
        hopInit = { ...rest, method: next.method };
      }
      url = next.url;
      response = await fetch(url, hopInit);
    }
  };
}

/**
 * One redirect hop of provider traffic, whose requests carry credentials bound to their origin
 * (docs/security.md, "Write-only secrets"): where it goes and with which method. Throws for
 * another origin, or past MAX_REDIRECTS hops. Fetch standard, HTTP-redirect fetch step 12: 303
 * (not HEAD), and 301/302 of a POST, become a GET without body.
 */
export function sameOriginHop(
  from: URL,
  status: number,
  location: string,
  method: string,
  hop: number,
): { readonly url: URL; readonly method: string } {
  const url = new URL(location, from);
  if (url.origin !== from.origin)
    throw new CrossOriginRedirect(
      `${from.origin} redirected to another origin (${url.origin}); not followed: the request carries credentials bound to ${from.origin}`,
    );
  if (hop >= MAX_REDIRECTS) throw new Error(`${from.origin}: more than ${MAX_REDIRECTS} redirects`);
  const toGet =
    (status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST");
  return { url, method: toGet ? "GET" : method };
}

/** A body that can be sent again on a redirect hop (the MCP SDK's and the http provider's are strings). */
function replayable(body: RequestInit["body"]): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === "string" ||
    body instanceof URLSearchParams ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer
  );
}

/** TLS server name: the host name without a trailing dot, never an IP literal. */
function serverName(hostname: string): string | undefined {
  return canonicalAddress(hostname) ? undefined : hostname.replace(/\.$/, "");
}
