// A fetch whose every connection — first request and each redirect hop — goes to an address the
// egress policy allows. The check runs in the connector on the resolved address, and the socket
// connects to that same address (no second DNS lookup an attacker could rebind); TLS still
// verifies the original host name.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import type { EgressPolicy } from "./policy.js";

export type Fetch = typeof globalThis.fetch;

/** Resolves a host and returns the first address, after checking every address it resolves to. */
async function resolveChecked(policy: EgressPolicy, hostname: string): Promise<string> {
  const bare = hostname.replace(/^\[|\]$/g, "");
  if (isIP(bare)) {
    policy.check(bare, hostname);
    return bare;
  }
  const addresses = await lookup(bare, { all: true, verbatim: true });
  // Every answer is vetted: a name that resolves to one good and one forbidden address is refused.
  for (const { address } of addresses) policy.check(address, hostname);
  const first = addresses[0];
  if (!first) throw new Error(`${hostname} did not resolve`);
  return first.address;
}

export interface EgressFetchOptions {
  /** PEM certificates trusted in addition to Node's bundled roots (tests, private PKI). */
  readonly extraCaCertificates?: readonly string[];
}

/** A fetch bound to the policy, for provider traffic (http tools, upstream MCP servers). */
export function egressFetch(policy: EgressPolicy, fetchOptions: EgressFetchOptions = {}): Fetch {
  const extra = fetchOptions.extraCaCertificates ?? [];
  const connect = buildConnector({
    timeout: 10_000,
    ...(extra.length > 0 && { ca: [...rootCertificates, ...extra] }),
  });
  const dispatcher = new Agent({
    connect: (options, callback) => {
      resolveChecked(policy, options.hostname).then(
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

/** TLS server name: the host name, never an IP literal. */
function serverName(hostname: string): string | undefined {
  return isIP(hostname.replace(/^\[|\]$/g, "")) ? undefined : hostname;
}
