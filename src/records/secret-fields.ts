// Where secrets live inside provider and identity records (header values, bearer tokens, client
// secrets), where each is sent (its destinations), and one walker over them: sealing at rest
// (tenants/sealed.ts), redaction and kept secrets in the admin API (docs/security.md) use it.
import { createHash } from "node:crypto";

/**
 * JSON pointers to every secret value a provider record may hold; `*` matches any object key or
 * array index. A new credential field is secret once it is listed here.
 */
export const SECRET_POINTERS = [
  "/headers/*",
  "/tools/*/headers/*",
  "/auth/token",
  "/auth/clientSecret",
  // An openapi provider's credentials, one per security scheme of its document.
  "/credentials/*/value",
  "/credentials/*/token",
  "/credentials/*/password",
  "/credentials/*/clientSecret",
] as const;

type Json = unknown;

function isContainer(v: Json): v is Record<string, Json> | Json[] {
  return typeof v === "object" && v !== null;
}

function escape(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function walk(
  node: Json,
  tokens: readonly string[],
  at: string,
  fn: (value: Json, pointer: string) => Json,
): Json {
  if (tokens.length === 0) return fn(node, at);
  if (!isContainer(node)) return node;
  const [head, ...rest] = tokens as [string, ...string[]];
  const keys = head === "*" ? Object.keys(node) : Object.hasOwn(node, head) ? [head] : [];
  if (keys.length === 0) return node;
  const copy: Record<string, Json> | Json[] = Array.isArray(node) ? [...node] : { ...node };
  for (const key of keys)
    (copy as Record<string, Json>)[key] = walk(
      (node as Record<string, Json>)[key],
      rest,
      `${at}/${escape(key)}`,
      fn,
    );
  return copy;
}

/**
 * A copy of `record` with every secret value replaced by `fn(value, pointer)`; the rest is shared.
 * Works on validated records and on raw admin input alike (absent paths are skipped).
 */
export function mapSecrets<T>(
  record: T,
  fn: (value: Json, pointer: string) => Json,
  pointers: readonly string[] = SECRET_POINTERS,
): T {
  let out: Json = record;
  for (const pattern of pointers) out = walk(out, pattern.split("/").slice(1), "", fn);
  return out as T;
}

/** The secrets of one kind of record: where they sit, how they are named, where they are sent. */
export interface SecretFields {
  readonly pointers: readonly string[];
  /** Names the secret at `pointer` across writes: http tools by tool name, not by position. */
  nameOf(record: Json, pointer: string): string;
  /** The URLs the secret at `pointer` travels to (unchecked input: any value). */
  destinationsOf(record: Json, pointer: string): readonly Json[];
  /** True when a kept secret may go to `next`, having gone to `stored`. */
  within(next: Json, stored: Json): boolean;
}

function member(node: Json, key: string): Json {
  return isContainer(node) && Object.hasOwn(node, key) ? (node as Record<string, Json>)[key] : undefined;
}

function tokensOf(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/**
 * Every URL a provider's requests go to: an mcp provider's url, each http tool's, an openapi
 * provider's baseUrl. Without a baseUrl an openapi provider calls the servers its document names,
 * which only the compiled document knows (server variables, references, other documents): they
 * are named by the document itself — the URL it is fetched from, or the inline document's digest
 * — so a kept secret stays only with the same document (docs/openapi.md, "Credentials").
 */
function requestUrls(record: Json): Json[] {
  const tools = member(record, "tools");
  switch (member(record, "kind")) {
    case "http":
      return Array.isArray(tools) ? tools.map((t) => member(t, "url")) : [];
    case "openapi": {
      const baseUrl = member(record, "baseUrl");
      if (baseUrl !== undefined) return [baseUrl];
      const documentUrl = member(record, "documentUrl");
      if (typeof documentUrl === "string") return [`${DOCUMENT_SERVERS}the document at ${documentUrl} names`];
      const document = member(record, "document");
      const text = typeof document === "string" ? document : JSON.stringify(document ?? null);
      const digest = createHash("sha256").update(text).digest("hex").slice(0, 16);
      return [`${DOCUMENT_SERVERS}the inline document (sha256 ${digest}…) names`];
    }
    default:
      return [member(record, "url")];
  }
}

/** How a document's servers are named as a destination: kept for the very same document only. */
const DOCUMENT_SERVERS = "the servers ";

/**
 * Provider secrets. Headers go where the requests go (an http tool's to that tool's url); a bearer
 * token with every request; a client secret to the token endpoint, and the token it buys with
 * every request.
 */
export const PROVIDER_SECRETS: SecretFields = {
  pointers: SECRET_POINTERS,
  nameOf(record, pointer) {
    const [head, index, ...rest] = tokensOf(pointer);
    if (head !== "tools") return pointer;
    const name = member(member(member(record, "tools"), index ?? ""), "name");
    return `tools[${JSON.stringify(name ?? null)}]/${rest.join("/")}`;
  },
  within: (next, stored) =>
    typeof next === "string" && next.startsWith(DOCUMENT_SERVERS)
      ? next === stored
      : withinDestination(next, stored),
  destinationsOf(record, pointer) {
    const [head, second] = tokensOf(pointer);
    if (head === "tools") return [member(member(member(record, "tools"), second ?? ""), "url")];
    if (head === "auth" && second === "clientSecret") {
      const auth = member(record, "auth");
      // A per-user provider's client secret goes to its authorization server (the configured
      // issuer's, else the one the upstream names); without an issuer, the upstream's own origin.
      if (member(auth, "type") === "user_oauth")
        return [member(auth, "issuer") ?? originOf(requestUrls(record)[0])];
      return [member(auth, "tokenUrl"), ...requestUrls(record)];
    }
    if (head === "credentials" && tokensOf(pointer)[2] === "clientSecret")
      return [
        member(member(member(record, "credentials"), second ?? ""), "tokenUrl"),
        ...requestUrls(record),
      ];
    return requestUrls(record);
  },
};

/**
 * A tenant IdP's client secret goes to the token endpoint its issuer's discovery document names.
 * Another issuer is another document, which may name any endpoint, even one whose URL lies below
 * the stored issuer (a path where the IdP's host serves its users' files): only the same issuer
 * keeps the secret.
 */
export const IDENTITY_SECRETS: SecretFields = {
  // An oidc identity's client secret, or an external one's login client's (same issuer rule).
  pointers: ["/clientSecret", "/login/clientSecret"],
  nameOf: (_record, pointer) => pointer,
  destinationsOf: (record) => [member(record, "issuer")],
  within: (next, stored) => sameUrl(next, stored),
};

/** The origin of a URL with a "/" path; the value itself when it does not parse. */
function originOf(url: Json): Json {
  return typeof url === "string" && URL.canParse(url) ? `${new URL(url).origin}/` : url;
}

/** Scheme, host, port and path of a URL (query and fragment are not part); undefined if unparsable. */
function destinationOf(url: Json): { origin: string; path: string } | undefined {
  if (typeof url !== "string" || !URL.canParse(url)) return undefined;
  const u = new URL(url);
  const port = u.port || (u.protocol === "https:" ? "443" : u.protocol === "http:" ? "80" : "");
  return { origin: `${u.protocol}//${u.hostname}:${port}`, path: u.pathname };
}

/**
 * True when the part of a path below a kept destination stays below it however a server reads
 * it: no encoded dot, slash or backslash; and, decoded up to three times (servers and proxies
 * that decode twice), no backslash, control character, undecodable `%`, or segment of dots alone
 * once a `;` parameter is cut off (`..;/`, which Tomcat and Spring read as `..`).
 */
function staysBelow(rest: string): boolean {
  if (/%2e|%2f|%5c/i.test(rest)) return false;
  let text = rest;
  for (let round = 0; round < 3 && text.includes("%"); round++) {
    try {
      text = decodeURIComponent(text);
    } catch {
      return false;
    }
  }
  // eslint-disable-next-line no-control-regex
  if (/[%\\\u0000-\u001f\u007f]/.test(text)) return false;
  return !text.split("/").some((segment) => /^\.+\s*$/.test(segment.replace(/;.*$/, "")));
}

/** True when `next` and `stored` parse as the same URL (an identifier, as an issuer is), query included. */
export function sameUrl(next: Json, stored: Json): boolean {
  return (
    typeof next === "string" &&
    typeof stored === "string" &&
    URL.canParse(next) &&
    URL.canParse(stored) &&
    new URL(next).href === new URL(stored).href
  );
}

/**
 * True when `next` is at a kept secret's destination `stored`: same scheme, host and port, and a
 * path equal to the stored one or below it. A path that climbs out with an encoded or
 * parameterised dot segment, slash or backslash is not below it, whatever the server would make
 * of it.
 */
export function withinDestination(next: Json, stored: Json): boolean {
  const a = destinationOf(next);
  const b = destinationOf(stored);
  if (a === undefined || b === undefined || a.origin !== b.origin) return false;
  if (a.path === b.path) return true;
  const base = b.path.endsWith("/") ? b.path : `${b.path}/`;
  return a.path.startsWith(base) && staysBelow(a.path.slice(base.length));
}
