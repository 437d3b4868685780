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
}

/** A fetch bound to the policy, for provider traffic (http tools, upstream MCP servers). */
export function egressFetch(policy: EgressPolicy, fetchOptions: EgressFetchOptions = {}): Fetch {
  const extra = fetchOptions.extraCaCertificates ?? [];
  const resolve = fetchOptions.lookup ?? systemLookup;
  const connect = buildConnector({
    timeout: 10_000,
    ...(extra.length > 0 && { ca: [...rootCertificates, ...extra] }),
  });
  const dispatcher = new Agent({
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
  const fetch = (input: Parameters<Fetch>[0], init?: Parameters<Fetch>[1]) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as object), dispatcher });
  return fetch;
}

/** TLS server name: the host name without a trailing dot, never an IP literal. */
function serverName(hostname: string): string | undefined {
  return canonicalAddress(hostname) ? undefined : hostname.replace(/\.$/, "");
}
