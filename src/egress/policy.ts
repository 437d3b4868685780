// Where outbound requests may go (DESIGN.md §5). Provider URLs usually name internal services, so
// loopback and private ranges are allowed; link-local and cloud metadata addresses never are, and
// operators narrow the rest with allow and deny CIDR lists. Decisions are on resolved addresses.
import { BlockList, isIP } from "node:net";

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
  ["ff00::", 8, "ipv6"], // multicast
];

export class EgressRefused extends Error {
  override readonly name = "EgressRefused";
  /** Read by callers that describe network failures by code. */
  readonly code = "EGRESS_REFUSED";
}

export interface EgressPolicyOptions {
  /** When non-empty, addresses must fall inside one of these CIDRs. */
  readonly allowCidrs?: readonly string[];
  /** Addresses inside these CIDRs are refused. */
  readonly denyCidrs?: readonly string[];
}

export class EgressPolicy {
  readonly #refused = new BlockList();
  readonly #denied = new BlockList();
  readonly #allowed: BlockList | undefined;

  constructor(options: EgressPolicyOptions = {}) {
    for (const [net, prefix, type] of ALWAYS_REFUSED) this.#refused.addSubnet(net, prefix, type);
    for (const cidr of options.denyCidrs ?? []) addCidr(this.#denied, cidr);
    if (options.allowCidrs?.length) {
      this.#allowed = new BlockList();
      for (const cidr of options.allowCidrs) addCidr(this.#allowed, cidr);
    }
  }

  /** Throws EgressRefused unless a connection to this IP address is allowed. */
  check(address: string, host: string): void {
    const ip = unmapped(address);
    const type = isIP(ip) === 6 ? "ipv6" : "ipv4";
    const refuse = (why: string) => {
      throw new EgressRefused(`the egress policy refuses ${host} (${ip}): ${why}`);
    };
    if (this.#refused.check(ip, type)) refuse("link-local, metadata or reserved address");
    if (this.#denied.check(ip, type)) refuse("inside PORTICO_PROVIDER_DENY_CIDRS");
    if (this.#allowed && !this.#allowed.check(ip, type)) refuse("outside PORTICO_PROVIDER_ALLOW_CIDRS");
  }
}

/** "::ffff:169.254.169.254" is 169.254.169.254: judge the IPv4 address it carries. */
function unmapped(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
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
