// The document's security schemes as the provider's credentials (docs/openapi.md, "Credentials"):
// the admin gives a credential per scheme name (`credentials`), and each call carries those of the
// first of its operation's security requirements that they satisfy — an `apiKey` in its header,
// query parameter or cookie, `http` bearer or basic in Authorization, an `oauth2` scheme's token
// bought with the client credentials grant at the token URL the admin set (never the document's).
import type { OpenApiCredential, OpenApiProviderConfig } from "../../records/tenant.js";
import type { Fetch } from "../../egress/fetch.js";
import { UpstreamCredentials } from "../upstream-auth.js";

type Json = Record<string, unknown>;

/** A security scheme as far as Portico can satisfy it. */
export type Scheme =
  | { readonly type: "apiKey"; readonly in: "header" | "query" | "cookie"; readonly name: string }
  | { readonly type: "bearer" }
  | { readonly type: "basic" }
  | { readonly type: "oauth2" }
  | { readonly type: "unsupported"; readonly what: string };

/** Parameters the provider's configured headers and credentials supply, by location (headers lower case). */
export interface SuppliedParameters {
  readonly header: ReadonlySet<string>;
  readonly query: ReadonlySet<string>;
  readonly cookie: ReadonlySet<string>;
}

/** Alternatives (any one will do), each a list of scheme names (all needed). */
export type Requirements = ReadonlyArray<readonly string[]>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Headers a scheme may not name: they would steer the request, not authenticate it. */
const RESERVED_HEADERS = /^(?:host|cookie|content-length|transfer-encoding|connection)$/i;

/** The document's security schemes (components.securitySchemes; Swagger 2.0's were upgraded there). */
export function schemesOf(document: Json): Map<string, Scheme> {
  const out = new Map<string, Scheme>();
  const declared = isObject(document.components) ? document.components.securitySchemes : undefined;
  if (!isObject(declared)) return out;
  for (const [name, scheme] of Object.entries(declared)) {
    if (!isObject(scheme)) continue;
    const type = typeof scheme.type === "string" ? scheme.type : "";
    if (type === "apiKey") {
      const where = scheme.in;
      const header = typeof scheme.name === "string" ? scheme.name : "";
      if ((where === "header" || where === "query" || where === "cookie") && header !== "")
        out.set(
          name,
          where === "header" &&
            (RESERVED_HEADERS.test(header) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header))
            ? { type: "unsupported", what: `an apiKey in the header ${JSON.stringify(header)}` }
            : { type: "apiKey", in: where, name: header },
        );
      else out.set(name, { type: "unsupported", what: "an apiKey without a name and place" });
    } else if (type === "http") {
      const kind = typeof scheme.scheme === "string" ? scheme.scheme.toLowerCase() : "";
      out.set(
        name,
        kind === "bearer" || kind === "basic"
          ? { type: kind }
          : { type: "unsupported", what: `http ${JSON.stringify(kind)} authentication` },
      );
    } else if (type === "oauth2" || type === "openIdConnect") out.set(name, { type: "oauth2" });
    else out.set(name, { type: "unsupported", what: `a scheme of type ${JSON.stringify(type)}` });
  }
  return out;
}

/** An operation's requirements: its own `security`, else the document's (`[]` or absent: none). */
export function requirementsOf(document: Json, op: Json): Requirements {
  const security = Array.isArray(op.security) ? op.security : document.security;
  if (!Array.isArray(security)) return [];
  return security.filter(isObject).map((alternative) => Object.keys(alternative));
}

/** What a credential of each scheme type must hold, for the admin's errors. */
const NEEDS: Record<Scheme["type"], ReadonlyArray<keyof OpenApiCredential>> = {
  apiKey: ["value"],
  bearer: ["token"],
  basic: ["username", "password"],
  oauth2: ["tokenUrl", "clientId", "clientSecret"],
  unsupported: [],
};

/**
 * Problems of the admin's credentials against the document's schemes, each at its JSON pointer
 * (`/credentials/<name>`): a name the document does not declare, a scheme Portico cannot
 * satisfy, a member the scheme type needs or does not take.
 */
export function credentialProblems(
  schemes: ReadonlyMap<string, Scheme>,
  credentials: Readonly<Record<string, OpenApiCredential>> = {},
): Array<{ pointer: string; detail: string }> {
  const problems: Array<{ pointer: string; detail: string }> = [];
  const at = (name: string) => `/credentials/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  for (const [name, credential] of Object.entries(credentials)) {
    const scheme = schemes.get(name);
    if (!scheme) {
      const known = [...schemes.keys()].map((k) => JSON.stringify(k)).join(", ");
      problems.push({
        pointer: at(name),
        detail: `names no security scheme of the document (${known ? `it has ${known}` : "it declares none"})`,
      });
      continue;
    }
    if (scheme.type === "unsupported") {
      problems.push({ pointer: at(name), detail: `is ${scheme.what}, which Portico cannot send` });
      continue;
    }
    const needs = NEEDS[scheme.type];
    for (const member of needs)
      if (credential[member] === undefined)
        problems.push({ pointer: `${at(name)}/${member}`, detail: `is required for ${describe(scheme)}` });
    for (const member of Object.keys(credential) as Array<keyof OpenApiCredential>)
      if (!needs.includes(member) && !(scheme.type === "oauth2" && member === "scope"))
        problems.push({ pointer: `${at(name)}/${member}`, detail: `is not taken by ${describe(scheme)}` });
  }
  return problems;
}

function describe(scheme: Scheme): string {
  switch (scheme.type) {
    case "apiKey":
      return `an apiKey (in ${scheme.in} ${JSON.stringify(scheme.name)})`;
    case "bearer":
      return "http bearer";
    case "basic":
      return "http basic";
    case "oauth2":
      return "oauth2 (the client credentials grant)";
    default:
      return scheme.what;
  }
}

/** True when a credential holds what its scheme needs. */
function satisfies(scheme: Scheme | undefined, credential: OpenApiCredential | undefined): boolean {
  return (
    scheme !== undefined &&
    credential !== undefined &&
    scheme.type !== "unsupported" &&
    NEEDS[scheme.type].every((member) => credential[member] !== undefined)
  );
}

function chosen(
  schemes: ReadonlyMap<string, Scheme>,
  credentials: Readonly<Record<string, OpenApiCredential>>,
  requirements: Requirements,
): readonly string[] | undefined {
  const has = (name: string) => satisfies(schemes.get(name), credentials[name]);
  return (
    requirements.find((all) => all.length > 0 && all.every(has)) ??
    requirements.find((all) => all.length === 0)
  );
}

/** The schemes an operation needs that no credential satisfies (none when one alternative is met). */
export function unmetSchemes(
  schemes: ReadonlyMap<string, Scheme>,
  credentials: Readonly<Record<string, OpenApiCredential>> = {},
  requirements: Requirements,
): string[] {
  if (requirements.length === 0 || chosen(schemes, credentials, requirements)) return [];
  return [...new Set(requirements.flat().filter((name) => !satisfies(schemes.get(name), credentials[name])))];
}

/**
 * The parameters a provider's configured headers supply to every operation, and its apiKey
 * credentials to an operation whose requirements they are chosen for.
 */
export function suppliedParameters(
  config: Pick<OpenApiProviderConfig, "headers" | "credentials">,
  schemes: ReadonlyMap<string, Scheme>,
): (security: Requirements) => SuppliedParameters {
  const headers = Object.keys(config.headers ?? {}).map((h) => h.toLowerCase());
  return (security) => {
    const supplied = { header: new Set(headers), query: new Set<string>(), cookie: new Set<string>() };
    for (const name of chosen(schemes, config.credentials ?? {}, security) ?? []) {
      const scheme = schemes.get(name);
      if (scheme?.type === "apiKey")
        supplied[scheme.in].add(scheme.in === "header" ? scheme.name.toLowerCase() : scheme.name);
    }
    return supplied;
  };
}

/** An http basic credential as RFC 7617 sends it. */
function basic(c: OpenApiCredential): string {
  return Buffer.from(`${c.username ?? ""}:${c.password ?? ""}`).toString("base64");
}

/** Where a call's credentials go: its headers, and query pairs added to its URL. */
export interface Carrier {
  readonly headers: Headers;
  readonly query: string[];
}

/** The credentials of one provider, applied per call as the operation's requirements say. */
export class SchemeCredentials {
  readonly #schemes: ReadonlyMap<string, Scheme>;
  readonly #credentials: Readonly<Record<string, OpenApiCredential>>;
  readonly #tokens = new Map<string, UpstreamCredentials>();

  constructor(
    schemes: ReadonlyMap<string, Scheme>,
    credentials: Readonly<Record<string, OpenApiCredential>> = {},
    options: { readonly fetch: Fetch; readonly now?: () => number },
  ) {
    this.#schemes = schemes;
    this.#credentials = credentials;
    for (const [name, c] of Object.entries(credentials))
      if (schemes.get(name)?.type === "oauth2" && satisfies(schemes.get(name), c))
        this.#tokens.set(
          name,
          new UpstreamCredentials(
            {
              type: "client_credentials",
              tokenUrl: c.tokenUrl!,
              clientId: c.clientId!,
              clientSecret: c.clientSecret!,
              ...(c.scope !== undefined && { scope: c.scope }),
            },
            options,
          ),
        );
  }

  /**
   * The first alternative the credentials satisfy (one that needs nothing only when none with
   * credentials does: an API that lets anonymous callers in may still give a key holder more).
   */
  chosen(requirements: Requirements): readonly string[] | undefined {
    return chosen(this.#schemes, this.#credentials, requirements);
  }

  /** Adds the credentials of the chosen alternative to a call. Throws UpstreamAuthError (oauth2). */
  async apply(requirements: Requirements, carrier: Carrier, signal?: AbortSignal): Promise<void> {
    const cookies: string[] = [];
    for (const name of this.chosen(requirements) ?? []) {
      const scheme = this.#schemes.get(name)!;
      const c = this.#credentials[name]!;
      if (scheme.type === "apiKey") {
        const value = c.value!;
        if (scheme.in === "header") carrier.headers.set(scheme.name, value);
        else if (scheme.in === "query")
          carrier.query.push(`${encodeURIComponent(scheme.name)}=${encodeURIComponent(value)}`);
        else cookies.push(`${encodeURIComponent(scheme.name)}=${encodeURIComponent(value)}`);
      } else if (scheme.type === "bearer") carrier.headers.set("authorization", `Bearer ${c.token!}`);
      else if (scheme.type === "basic") carrier.headers.set("authorization", `Basic ${basic(c)}`);
      else if (scheme.type === "oauth2")
        carrier.headers.set("authorization", (await this.#tokens.get(name)!.authorization(signal))!);
    }
    if (cookies.length > 0) {
      const own = carrier.headers.get("cookie");
      carrier.headers.set("cookie", [...(own ? [own] : []), ...cookies].join("; "));
    }
  }

  /** The upstream refused a call (401): an oauth2 token it carried is bought anew next time. */
  invalidate(authorization: string | null): void {
    if (authorization) for (const tokens of this.#tokens.values()) tokens.invalidate(authorization);
  }

  /** Values that must not appear in text shown to clients or written to logs. */
  secrets(): string[] {
    const out: string[] = [];
    for (const c of Object.values(this.#credentials)) {
      for (const v of [c.value, c.token, c.password, c.clientSecret]) if (v !== undefined) out.push(v);
      if (c.password !== undefined) out.push(basic(c));
    }
    for (const tokens of this.#tokens.values()) out.push(...tokens.secrets());
    return out;
  }
}
