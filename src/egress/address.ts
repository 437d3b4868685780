// Parses every form an IP address can be written in — legacy IPv4 literals (decimal, octal, hex,
// short forms), bracketed or zoned IPv6, trailing dots — into the address really dialled, and the
// IPv4 addresses an IPv6 one carries (mapped, compatible, NAT64, 6to4, Teredo), so the egress
// policy judges one canonical form (docs/security.md, "Egress policy and address encodings").

export interface CanonicalAddress {
  /** The address dialled: a dotted quad, or lower-case compressed IPv6. */
  readonly address: string;
  readonly family: 4 | 6;
  /** IPv4 addresses the IPv6 address carries to (NAT64, 6to4, Teredo, compatible); judged too. */
  readonly embedded: readonly string[];
}

/**
 * The canonical form of an IP literal, or undefined for a host name. IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) is the IPv4 address itself: a dual-stack socket dials the IPv4 address.
 */
export function canonicalAddress(host: string): CanonicalAddress | undefined {
  let text = host.trim().toLowerCase();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  if (text.includes(":")) {
    const bytes = ipv6Bytes(text.replace(/%.*$/, ""));
    return bytes && fromIpv6(bytes);
  }
  const v4 = ipv4Bytes(text.endsWith(".") ? text.slice(0, -1) : text);
  return v4 && { address: v4.join("."), family: 4, embedded: [] };
}

/** The IPv4 parser of the WHATWG URL standard (and inet_aton): `2852039166`, `0251.0376.0251.0376`, `0xa9.0xfe.43518`. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length > 4 || parts.some((p) => p === "")) return undefined;
  const numbers = parts.map(ipv4Number);
  if (numbers.some((n) => n === undefined)) return undefined;
  const last = numbers.pop()!;
  if (numbers.some((n) => n! > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  numbers.forEach((n, i) => (value += n! * 256 ** (3 - i)));
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255];
}

function ipv4Number(part: string): number | undefined {
  const [digits, radix] = /^0x/.test(part)
    ? [part.slice(2), 16]
    : part.length > 1 && part.startsWith("0")
      ? [part.slice(1), 8]
      : [part, 10];
  const pattern = radix === 16 ? /^[0-9a-f]*$/ : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!pattern.test(digits)) return undefined;
  return digits === "" ? 0 : Number.parseInt(digits, radix);
}

/** Sixteen bytes of an IPv6 literal (with `::` and a trailing dotted quad), or undefined. */
function ipv6Bytes(text: string): number[] | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = ipv6Words(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? ipv6Words(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined;
  return [...head, ...Array<number>(fill).fill(0), ...tail].flatMap((w) => [w >> 8, w & 255]);
}

/** The 16-bit words of one side of `::`; a dotted quad may end the address. */
function ipv6Words(half: string, quadAllowed: boolean): number[] | undefined {
  if (half === "") return [];
  const groups = half.split(":");
  const words: number[] = [];
  for (const [i, group] of groups.entries()) {
    if (
      quadAllowed &&
      i === groups.length - 1 &&
      /^(?:(?:0|[1-9]\d{0,2})\.){3}(?:0|[1-9]\d{0,2})$/.test(group)
    ) {
      const v4 = ipv4Bytes(group);
      if (!v4) return undefined;
      words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
    } else if (/^[0-9a-f]{1,4}$/.test(group)) words.push(Number.parseInt(group, 16));
    else return undefined;
  }
  return words;
}

/** Byte positions of the IPv4 address under a /48, /56, /64 and /96 NAT64 prefix (bits 64–71 stay zero). */
const LOCAL_USE_NAT64_POSITIONS = [
  [6, 7, 9, 10],
  [7, 9, 10, 11],
  [9, 10, 11, 12],
  [12, 13, 14, 15],
];

/** Well-known IPv6 prefixes whose addresses carry an IPv4 address, and where it sits. */
function fromIpv6(b: number[]): CanonicalAddress {
  const v4 = (at: number, xor = 0) =>
    b
      .slice(at, at + 4)
      .map((x) => (x ^ xor) & 255)
      .join(".");
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 255 && b[11] === 255) return { address: v4(12), family: 4, embedded: [] };
  const embedded: string[] = [];
  if (zeros(0, 12) && !zeros(12, 15)) embedded.push(v4(12)); // IPv4-compatible (RFC 4291 §2.5.5.1)
  if (zeros(0, 8) && b[8] === 255 && b[9] === 255 && zeros(10, 12)) embedded.push(v4(12)); // SIIT (RFC 6145)
  if (prefix(b, [0, 0x64, 0xff, 0x9b]) && zeros(4, 12)) embedded.push(v4(12)); // NAT64 64:ff9b::/96 (RFC 6052)
  if (prefix(b, [0, 0x64, 0xff, 0x9b, 0, 1])) {
    // Local-use NAT64 64:ff9b:1::/48 (RFC 8215): the translator's prefix length is the network's
    // choice, so every RFC 6052 §2.2 position that holds a non-zero address is judged.
    for (const at of LOCAL_USE_NAT64_POSITIONS) {
      const candidate = at.map((i) => b[i]!);
      if (candidate.some((x) => x !== 0)) embedded.push(candidate.join("."));
    }
  }
  if (prefix(b, [0x20, 0x02])) embedded.push(v4(2)); // 6to4 (RFC 3056)
  if (prefix(b, [0x20, 0x01, 0, 0])) embedded.push(v4(12, 0xff)); // Teredo client (RFC 4380 §4)
  return { address: formatIpv6(b), family: 6, embedded: [...new Set(embedded)] };
}

function prefix(b: readonly number[], bytes: readonly number[]): boolean {
  return bytes.every((x, i) => b[i] === x);
}

/** RFC 5952 text: lower case, the longest run of two or more zero words as `::`. */
function formatIpv6(b: readonly number[]): string {
  const words = Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16));
  let best = [-1, 0];
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && words[j] === "0") j++;
    if (j - i > best[1]! && j - i >= 2) best = [i, j - i];
  }
  if (best[0]! < 0) return words.join(":");
  const [start, length] = best as [number, number];
  return `${words.slice(0, start).join(":")}::${words.slice(start + length).join(":")}`;
}
