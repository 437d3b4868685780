// DNS-rebinding protection for /mcp (basic/transports "Security Warning"): the Host must be one we
// serve and a present Origin must be allowed, else 403. Loopback names pass when bound to loopback.
import { isLoopbackHost } from "../../config/env.js";

export interface OriginPolicyInput {
  readonly host: string;
  readonly publicUrl: string;
  readonly allowedHosts: readonly string[];
  readonly allowedOrigins: readonly string[];
}

export class OriginPolicy {
  readonly #hosts = new Set<string>();
  readonly #origins = new Set<string>();
  readonly #loopback: boolean;
  /**
   * Verdicts on Host values not named as such (a loopback address with a port, say): clients
   * send the same few over and over, and a regex per request shows in profiles. Bounded.
   */
  readonly #verdicts = new Map<string, boolean>();

  constructor(input: OriginPolicyInput) {
    this.#loopback = isLoopbackHost(input.host);
    const pub = new URL(input.publicUrl);
    this.#hosts.add(pub.host.toLowerCase()).add(pub.hostname.toLowerCase());
    this.#origins.add(pub.origin.toLowerCase());
    for (const h of input.allowedHosts) this.#hosts.add(h.toLowerCase());
    for (const o of input.allowedOrigins) this.#origins.add(o.replace(/\/+$/, "").toLowerCase());
  }

  /** True when the Host header names this server. */
  hostAllowed(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return false;
    if (this.#hosts.has(hostHeader)) return true;
    let verdict = this.#verdicts.get(hostHeader);
    if (verdict === undefined) {
      verdict = this.#judge(hostHeader.toLowerCase());
      if (this.#verdicts.size >= 64) this.#verdicts.clear();
      this.#verdicts.set(hostHeader, verdict);
    }
    return verdict;
  }

  #judge(host: string): boolean {
    if (this.#hosts.has(host)) return true;
    const name = hostname(host);
    return name !== undefined && (this.#hosts.has(name) || (this.#loopback && isLoopbackHost(name)));
  }

  /** True when the Origin header is absent (not a browser) or allowed. */
  originAllowed(originHeader: string | undefined): boolean {
    if (originHeader === undefined) return true;
    const origin = originHeader.toLowerCase();
    if (this.#origins.has(origin)) return true;
    if (!this.#loopback) return false;
    try {
      const url = new URL(origin);
      return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname);
    } catch {
      return false; // "null" and other opaque origins
    }
  }
}

/** The name part of a Host header value ("[::1]:8080" → "[::1]"); undefined if malformed. */
function hostname(host: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/.exec(host);
  return m?.[1];
}
