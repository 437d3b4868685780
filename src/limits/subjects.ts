// Who a per-client limit counts: one user by a digest of the token's `sub`, whatever the OAuth
// client (anyone may register clients, and one metadata-document client_id is shared by every
// user of an app), otherwise the client's IP address, IPv6 by its /64 (one subscriber's usual
// allocation, so hopping addresses inside it does not escape the limit).
import { createHash } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";

/** The subject of one user, whatever the client (`sub`: may be long or hold any character). */
export function principalSubject(user: string): string {
  return `p:${createHash("sha256").update(user).digest("base64url").slice(0, 22)}`;
}

/** The counter subject of a client IP address (as Fastify's request.ip gives it). */
export function ipSubject(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return `ip:${mapped[1]}`;
  if (isIPv4(ip)) return `ip:${ip}`;
  if (isIPv6(ip)) return `ip:${ipv6Prefix64(ip)}::/64`;
  return "ip:unknown";
}

/**
 * The /48 of an IPv6 client address (one site's usual allocation: its /64s are cheap to hop), as
 * `ip:<prefix>::/48`; undefined for IPv4 and IPv4-mapped addresses.
 */
export function ipv6SiteSubject(ip: string): string | undefined {
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) || !isIPv6(ip)) return undefined;
  return `ip:${ipv6Prefix64(ip).split(":").slice(0, 3).join(":")}::/48`;
}

/** The first four groups of an IPv6 address, expanded: "2001:db8::1" → "2001:db8:0:0". */
function ipv6Prefix64(ip: string): string {
  const bare = ip.split("%")[0]!.toLowerCase();
  const [head = "", tail] = bare.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  // An embedded IPv4 tail (::ffff:1.2.3.4 was handled above) takes two groups.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const zeros = tail === undefined ? [] : Array<string>(8 - width(left) - width(right)).fill("0");
  return [...left, ...zeros, ...right]
    .slice(0, 4)
    .map((g) => (g.includes(".") ? "0" : g.replace(/^0+(?=.)/, "")))
    .join(":");
}
