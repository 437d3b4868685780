// Where outbound requests may go (docs/security.md, "Egress policy and address encodings"). Provider URLs usually name internal services, so
// loopback and private ranges are allowed; link-local and cloud metadata addresses never are, and
// operators narrow the rest with allow and deny CIDR lists. Decisions are on resolved addresses,
// in canonical form (address.ts).
import { BlockList, isIP } from "node:net";
import { canonicalAddress } from "./address.js";

/** Refused whatever the configuration says: metadata services, link-local, "this host", multicast. */
const ALWAYS_REFUSED: ReadonlyArray<[string, number, "ipv4" | "ipv6"]> = [
  ["0.0.0.0", 8, "ipv4"], // "this network": 0.0.0.0 reaches the local host on Linux
  ["169.254.0.0", 16, "ipv4"], // link-local, incl. the AWS/GCP/Azure/OCI metadata service
  ["100.100.100.200", 32, "ipv4"], // Alibaba Cloud metadata
  ["224.0.0.0", 4, "ipv4"], // multicast
  ["240.0.0.0", 4, "ipv4"], // reserved, broadcast
  ["::", 128, "ipv6"], // unspecified
  ["fe80::", 10, "ipv6"], // link-local
  ["fd00:ec2::254", 128, "ipv6"], // AWS metadata over IPv6
  ["fd20:ce::254", 128, "ipv6"], // Google Cloud metadata over IPv6
  ["fd00:c1::a9fe:a9fe", 128, "ipv6"], // Oracle Cloud metadata over IPv6
  ["ff00::", 8, "ipv6"], // multicast
];

export class EgressRefused extends Error {
  override readonly name = "EgressRefused";
  /** Read by callers that describe network failures by code. */
  readonly code = "EGRESS_REFUSED";
}

/**
 * Not reachable on the public internet (IANA special-purpose registries): private, loopback,
 * shared (CGNAT), documentation, benchmarking and protocol ranges. Refused by `publicOnly`.
 */
const NON_PUBLIC_IPV4: ReadonlyArray<[string, number]> = [
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
];
/** IPv6: only global unicast (2000::/3) is public, minus these; mapped IPv4 is judged as IPv4. */
const NON_PUBLIC_IPV6: ReadonlyArray<[string, number]> = [
  ["2001::", 23], // IETF protocol assignments, Teredo
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: carries any IPv4 address, private ones included
  ["3fff::", 20], // documentation
];

export interface EgressPolicyOptions {
  /** When non-empty, addresses must fall inside one of these CIDRs. */
  readonly allowCidrs?: readonly string[];
  /** Addresses inside these CIDRs are refused. */
  readonly denyCidrs?: readonly string[];
  /**
   * Public addresses only, for URLs strangers supply (client metadata documents): loopback,
   * private and other non-public ranges are refused unless inside `publicOnlyExceptCidrs`.
   */
  readonly publicOnly?: boolean;
  /** With `publicOnly`: non-public ranges an operator opens anyway (never the always-refused ones). */
  readonly publicOnlyExceptCidrs?: readonly string[];
}

export class EgressPolicy {
  readonly #refused = new BlockList();
  readonly #denied = new BlockList();
  readonly #allowed: BlockList | undefined;
  readonly #nonPublic: BlockList | undefined;
  readonly #excepted = new BlockList();

  constructor(options: EgressPolicyOptions = {}) {
    for (const [net, prefix, type] of ALWAYS_REFUSED) this.#refused.addSubnet(net, prefix, type);
    if (options.publicOnly) this.#nonPublic = nonPublicList();
    for (const cidr of options.publicOnlyExceptCidrs ?? []) addCidr(this.#excepted, cidr);
    for (const cidr of options.denyCidrs ?? []) addCidr(this.#denied, cidr);
    if (options.allowCidrs?.length) {
      this.#allowed = new BlockList();
      for (const cidr of options.allowCidrs) addCidr(this.#allowed, cidr);
    }
  }

  /**
   * Throws EgressRefused unless a connection to this IP address is allowed. The address is judged
   * in its canonical form, together with every IPv4 address it carries (NAT64, 6to4, Teredo,
   * compatible): refused or denied if any of them is, allowed by an allow list only if all are.
   */
  check(address: string, host: string): void {
    const canonical = canonicalAddress(address);
    if (!canonical) throw new EgressRefused(`the egress policy refuses ${host}: not an IP address`);
    const all = [canonical.address, ...canonical.embedded];
    const refuse = (why: string) => {
      const carried = canonical.embedded.length > 0 ? ` carrying ${canonical.embedded.join(", ")}` : "";
      throw new EgressRefused(`the egress policy refuses ${host} (${canonical.address}${carried}): ${why}`);
    };
    if (all.some((ip) => has(this.#refused, ip))) refuse("link-local, metadata or reserved address");
    if (all.some((ip) => has(this.#denied, ip))) refuse("inside PORTICO_PROVIDER_DENY_CIDRS");
    const allowed = this.#allowed;
    if (allowed && !all.every((ip) => has(allowed, ip))) refuse("outside PORTICO_PROVIDER_ALLOW_CIDRS");
    const nonPublic = this.#nonPublic;
    if (nonPublic && all.some((ip) => has(nonPublic, ip) && !has(this.#excepted, ip)))
      refuse("not a public address");
  }
}

/** Why an IP literal host is refused whatever the configuration says ("169.254.169.254 (…): why"), for validation. */
export function alwaysRefusedLiteral(host: string): string | undefined {
  if (!canonicalAddress(host)) return undefined;
  try {
    DEFAULT_POLICY.check(host, host);
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(/^the egress policy refuses /, "");
  }
}

/** Canonical addresses only: `::ffff:a.b.c.d` has become a.b.c.d before it gets here. */
function has(list: BlockList, ip: string): boolean {
  return list.check(ip, isIP(ip) === 6 ? "ipv6" : "ipv4");
}

/** Everything `publicOnly` refuses: the IPv4 list, and IPv6 outside global unicast or inside its list. */
function nonPublicList(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of NON_PUBLIC_IPV4) list.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of NON_PUBLIC_IPV6) list.addSubnet(net, prefix, "ipv6");
  list.addRange("::", "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ipv6");
  list.addRange("4000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ipv6");
  return list;
}

/** Adds "10.0.0.0/8", "fd00::/8" or a bare address; throws a message fit for a config error. */
export function addCidr(list: BlockList, cidr: string): void {
  const [net = "", prefixText] = cidr.trim().split("/");
  const family = isIP(net);
  if (family === 0) throw new Error(`"${cidr}" is not a CIDR (example: 10.0.0.0/8 or fd00::/8)`);
  const max = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max)
    throw new Error(`"${cidr}" has an invalid prefix length (0–${max})`);
  list.addSubnet(net, prefix, family === 4 ? "ipv4" : "ipv6");
}

const DEFAULT_POLICY = new EgressPolicy();
