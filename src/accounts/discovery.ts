// Where a per-user provider's authorization server is, found the MCP way (MCP 2025-11-25
// "Authorization Server Discovery"): the upstream's 401 names its Protected Resource Metadata in
// `WWW-Authenticate` (`resource_metadata`, RFC 9728 §5.1), else the well-known URL of the
// upstream (RFC 9728 §3); that names the authorization server, whose RFC 8414 or OpenID Connect
// metadata is read. An admin's configured issuer skips the first two steps.
import * as oauth from "oauth4webapi";
import type { Fetch } from "../egress/fetch.js";
import type { FetchBackoff } from "../limits/fetch-backoff.js";

/** Discovery did not succeed; the message names the step, never a credential. */
export class DiscoveryError extends Error {
  override readonly name = "DiscoveryError";
}

export const DISCOVERY_TTL_MS = 60 * 60_000;
const TIMEOUT_MS = 10_000;

/** What the flow needs of a provider's authorization server. */
export interface Discovered {
  readonly as: oauth.AuthorizationServer;
  /** The RFC 8707 resource indicator: the upstream's MCP URL (or what its metadata calls it). */
  readonly resource: string;
  /** Scopes the resource metadata lists, when the provider configures none. */
  readonly scopesSupported?: readonly string[];
}

/** The egress-checked options oauth4webapi takes for one URL. */
export function httpOptions(fetch: Fetch, url: string) {
  return {
    [oauth.customFetch]: fetch,
    // Whether an http upstream is reachable is the egress policy's call; an https one stays https.
    [oauth.allowInsecureRequests]: url.startsWith("http:"),
    signal: () => AbortSignal.timeout(TIMEOUT_MS),
  };
}

export class AuthorizationServers {
  readonly #cache = new Map<string, { value: Promise<Discovered>; expiresAt: number }>();
  readonly #now: () => number;

  constructor(
    private readonly fetch: Fetch,
    now?: () => number,
    /** Failed discoveries, remembered per upstream across replicas (limits/fetch-backoff.ts). */
    private readonly backoff?: FetchBackoff,
  ) {
    this.#now = now ?? Date.now;
  }

  /**
   * The authorization server of an upstream (cached an hour). A failure is not cached, but starts
   * a back-off shared by the replicas, so users' connect pages cannot make Portico fetch a failing
   * server again and again.
   */
  discover(upstreamUrl: string, issuer: string | undefined): Promise<Discovered> {
    const key = `${upstreamUrl} ${issuer ?? ""}`;
    const cached = this.#cache.get(key);
    if (cached && cached.expiresAt > this.#now()) return cached.value;
    const find = () =>
      issuer
        ? this.metadata(issuer).then((as) => ({ as, resource: upstreamUrl }))
        : this.#fromResource(upstreamUrl);
    const value = this.backoff
      ? this.backoff.guard(
          key,
          find,
          (seconds) =>
            new DiscoveryError(
              `discovery of ${upstreamUrl}'s authorization server failed; not tried again for ${seconds} s`,
            ),
        )
      : find();
    this.#cache.set(key, { value, expiresAt: this.#now() + DISCOVERY_TTL_MS });
    value.catch(() => this.#cache.delete(key));
    if (this.#cache.size > 1000) this.#cache.delete(this.#cache.keys().next().value!);
    return value;
  }

  /** RFC 8414 metadata of an issuer, else its OpenID Connect discovery document. */
  async metadata(issuer: string): Promise<oauth.AuthorizationServer> {
    const url = new URL(issuer);
    let last: unknown;
    for (const algorithm of ["oauth2", "oidc"] as const) {
      try {
        const response = await oauth.discoveryRequest(url, { algorithm, ...httpOptions(this.fetch, issuer) });
        return await oauth.processDiscoveryResponse(url, response);
      } catch (err) {
        last = err;
      }
    }
    throw new DiscoveryError(`no authorization server metadata at ${issuer}: ${reason(last)}`);
  }

  async #fromResource(upstreamUrl: string): Promise<Discovered> {
    const resourceUrl = new URL(upstreamUrl);
    let metadataUrl: URL | undefined;
    try {
      // An unauthenticated request: the upstream answers 401 with its challenge (MCP authorization).
      const probe = await this.fetch(upstreamUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      await probe.body?.cancel();
      if (probe.status === 401) metadataUrl = await resourceMetadataOf(probe.headers.get("www-authenticate"));
    } catch (err) {
      throw new DiscoveryError(`the upstream ${upstreamUrl} could not be reached: ${reason(err)}`);
    }
    let prm: oauth.ResourceServer;
    try {
      const response = metadataUrl
        ? await this.fetch(metadataUrl, {
            headers: { accept: "application/json" },
            signal: AbortSignal.timeout(TIMEOUT_MS),
          })
        : await oauth.resourceDiscoveryRequest(resourceUrl, httpOptions(this.fetch, upstreamUrl));
      // RFC 9728 §3.3: its `resource` must be the upstream's URL.
      prm = await oauth.processResourceDiscoveryResponse(resourceUrl, response);
    } catch (err) {
      throw new DiscoveryError(`no protected resource metadata for ${upstreamUrl}: ${reason(err)}`);
    }
    const issuer = prm.authorization_servers?.[0];
    if (!issuer)
      throw new DiscoveryError(`the resource metadata of ${upstreamUrl} names no authorization server`);
    return {
      as: await this.metadata(issuer),
      resource: prm.resource,
      ...(prm.scopes_supported && { scopesSupported: prm.scopes_supported }),
    };
  }
}

/**
 * The `resource_metadata` of a Bearer challenge (RFC 9728 §5.1), parsed by oauth4webapi's RFC 9110
 * challenge parser: it runs on a response's challenges before anything else, and reports them as
 * WWWAuthenticateChallengeError, so a response holding only the header yields them parsed.
 */
export async function resourceMetadataOf(header: string | null): Promise<URL | undefined> {
  if (header === null) return undefined;
  const response = new Response(null, { status: 401, headers: { "www-authenticate": header } });
  try {
    await oauth.processUserInfoResponse(
      { issuer: "urn:none" },
      { client_id: "none" },
      oauth.skipSubjectCheck,
      response,
    );
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) return undefined;
    const bearer = err.cause.find((c) => c.scheme === "bearer");
    const url = bearer?.parameters.resource_metadata;
    return url !== undefined && URL.canParse(url) ? new URL(url) : undefined;
  }
  return undefined;
}

/** A short reason for logs: oauth4webapi's messages hold no values; causes may hold bodies. */
export function reason(err: unknown): string {
  if (err instanceof oauth.ResponseBodyError) return `HTTP ${err.status} (${err.error})`;
  if (err instanceof Error) return err.message;
  return String(err);
}
