// OAuth clients registered with Portico: RFC 7591 dynamic registration (metadata validation and
// the registration response), pre-registration through the admin API, and client authentication
// at the token endpoint (RFC 6749 §2.3.1). Secrets are stored as SHA-256. A pre-registered client
// is durable; a dynamically registered one expires unless it is used (docs/oauth.md "Dynamic
// registration"), so strangers' registrations cannot pile up in the store.
import { createHash, timingSafeEqual } from "node:crypto";
import { Type, type Static } from "@sinclair/typebox";
import { randomId } from "../crypto/secrets.js";
import { REFRESH_TTL_SECONDS } from "./grants.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";
import { checkRedirectUri, type ApplicationType } from "./redirect-uris.js";

export type OAuthClientErrorCode = "invalid_redirect_uri" | "invalid_client_metadata" | "invalid_client";

/**
 * A registration or client-authentication failure, carrying its RFC 7591 §3.2.2 / RFC 6749 §5.2
 * error code. `description` is safe for the wire; `reason`, when set, is for the log only.
 */
export class OAuthClientError extends Error {
  override readonly name = "OAuthClientError";

  constructor(
    readonly error: OAuthClientErrorCode,
    readonly description: string,
    readonly reason?: string,
    options?: { cause?: unknown },
  ) {
    super(`${error}: ${description}`, options);
  }
}

export const MAX_REDIRECT_URIS = 20;
const MAX_CONTACTS = 10;
const MAX_TEXT = 200;
const MAX_SCOPE = 1000;
const MAX_URI = 2048;

const uri = (description: string) => Type.String({ description, format: "uri", maxLength: MAX_URI });
const shown = (description: string) => Type.Optional(Type.String({ description, maxLength: MAX_TEXT }));

/**
 * Client metadata Portico keeps (RFC 7591 §2 spelling), as the admin API shows it. A registration
 * request is read by validateRegistration(): RFC 7591 drops unknown members and has its own error codes.
 */
export const ClientMetadata = Type.Object(
  {
    redirect_uris: Type.Array(uri("A redirect URI: https, loopback http, or a private-use scheme."), {
      description: "Where codes are sent.",
      minItems: 1,
      maxItems: MAX_REDIRECT_URIS,
    }),
    token_endpoint_auth_method: Type.Union(
      [Type.Literal("none"), Type.Literal("client_secret_basic"), Type.Literal("client_secret_post")],
      {
        description:
          '"none" for public clients (most MCP clients); the others make a confidential client, given a secret. Default client_secret_basic.',
      },
    ),
    grant_types: Type.Array(Type.Union([Type.Literal("authorization_code"), Type.Literal("refresh_token")]), {
      description:
        "Default [authorization_code]. Only a client whose grant_types include refresh_token is issued refresh tokens.",
      maxItems: 5,
    }),
    response_types: Type.Array(Type.Literal("code"), { description: "Only code.", maxItems: 5 }),
    application_type: Type.Optional(
      Type.Union([Type.Literal("web"), Type.Literal("native")], {
        description: "native allows loopback and private-use redirects.",
      }),
    ),
    client_name: shown("Shown on the consent page."),
    client_uri: Type.Optional(uri("The client's home page (https).")),
    logo_uri: Type.Optional(uri("The client's logo (https).")),
    tos_uri: Type.Optional(uri("Terms of service (https).")),
    policy_uri: Type.Optional(uri("Privacy policy (https).")),
    scope: Type.Optional(
      Type.String({ description: "Space-separated scopes the client may ask for.", maxLength: MAX_SCOPE }),
    ),
    contacts: Type.Optional(
      Type.Array(Type.String({ description: "E-mail address.", maxLength: 320 }), {
        description: "People responsible for the client.",
        maxItems: MAX_CONTACTS,
      }),
    ),
    software_id: shown("Identifies the client software."),
    software_version: shown("The client software's version."),
  },
  { additionalProperties: false },
);
export type ClientMetadata = Static<typeof ClientMetadata>;
export type TokenEndpointAuthMethod = ClientMetadata["token_endpoint_auth_method"];
export type GrantType = ClientMetadata["grant_types"][number];

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  "none",
  "client_secret_basic",
  "client_secret_post",
];
/** RFC 6749 §3.3 scope-token characters, space separated. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/;
/** Printable ASCII URI characters; URL parsers drop tabs and newlines silently, so refuse them here. */
const URI_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;

const DISGUISING = /[\p{Cc}\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

const invalid = (description: string) => new OAuthClientError("invalid_client_metadata", description);

/**
 * Validates an RFC 7591 §2 registration request body and returns the metadata to register.
 * Defaults follow RFC 7591: client_secret_basic, ["authorization_code"], ["code"]. MCP clients
 * usually send token_endpoint_auth_method "none" (public clients).
 */
export function validateRegistration(body: unknown): ClientMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw invalid("the registration request must be a JSON object");
  const b = body as Record<string, unknown>;
  const applicationType = oneOf(b, "application_type", ["web", "native"] as const);
  const redirectUris = readRedirectUris(present(b, "redirect_uris"), applicationType);
  const authMethod = oneOf(b, "token_endpoint_auth_method", AUTH_METHODS) ?? "client_secret_basic";
  return {
    redirect_uris: redirectUris,
    token_endpoint_auth_method: authMethod,
    ...readGrants(b),
    ...(applicationType && { application_type: applicationType }),
    ...optional("client_name", text(b, "client_name", MAX_TEXT)),
    ...optional("client_uri", httpsUrl(b, "client_uri")),
    ...optional("logo_uri", httpsUrl(b, "logo_uri")),
    ...optional("tos_uri", httpsUrl(b, "tos_uri")),
    ...optional("policy_uri", httpsUrl(b, "policy_uri")),
    ...optional("scope", scope(b)),
    ...optional("contacts", contacts(b)),
    ...optional("software_id", text(b, "software_id", MAX_TEXT)),
    ...optional("software_version", text(b, "software_version", MAX_TEXT)),
  };
}

function readRedirectUris(value: unknown, applicationType: ApplicationType | undefined): string[] {
  // RFC 7591 §2: redirect_uris is required for redirect-based flows, the only ones Portico has.
  if (!Array.isArray(value) || value.length === 0)
    throw new OAuthClientError("invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs");
  if (value.length > MAX_REDIRECT_URIS)
    throw new OAuthClientError("invalid_redirect_uri", `at most ${MAX_REDIRECT_URIS} redirect_uris`);
  return value.map((uri: unknown, i) => {
    const check = checkRedirectUri(uri, applicationType);
    if (!check.ok) throw new OAuthClientError("invalid_redirect_uri", `redirect_uris[${i}] ${check.reason}`);
    return uri as string;
  });
}

/** grant_types and response_types, consistent as RFC 7591 §2.1 requires: "code" needs authorization_code. */
function readGrants(b: Record<string, unknown>): Pick<ClientMetadata, "grant_types" | "response_types"> {
  const responseTypes = list(b, "response_types", 5) ?? ["code"];
  if (responseTypes.length !== 1 || responseTypes[0] !== "code")
    throw invalid("response_types must be code alone (the authorization code flow is the only one)");
  const grants = list(b, "grant_types", 5) ?? ["authorization_code"];
  for (const grant of grants)
    if (grant !== "authorization_code" && grant !== "refresh_token")
      throw invalid("grant_types may contain only authorization_code and refresh_token");
  if (!grants.includes("authorization_code"))
    throw invalid("grant_types must include authorization_code (response_types code needs it)");
  return { grant_types: [...new Set(grants)] as GrantType[], response_types: ["code"] };
}

/** A member that is absent, null or "" is not there; anything else must have the right type.
 * Own members only: nothing is read through the prototype. */
function present(b: Record<string, unknown>, name: string): unknown {
  const value = Object.hasOwn(b, name) ? b[name] : undefined;
  return value === null || value === "" ? undefined : value;
}

function text(b: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = present(b, name);
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`${name} must be a string`);
  if (value.length > max) throw invalid(`${name} must be at most ${max} characters`);
  // Shown on the consent page: control and bidirectional-override characters could disguise it.
  if (DISGUISING.test(value)) throw invalid(`${name} must not contain control or bidi characters`);
  return value;
}

function oneOf<T extends string>(
  b: Record<string, unknown>,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = present(b, name);
  if (value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw invalid(`${name} must be one of: ${allowed.join(", ")}`);
  return value as T;
}

function list(b: Record<string, unknown>, name: string, max: number): string[] | undefined {
  const value = present(b, name);
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
    throw invalid(`${name} must be an array of strings`);
  if (value.length > max) throw invalid(`${name} must have at most ${max} entries`);
  return value as string[];
}

/** Display URIs end up as links and images on the consent page: https only. */
function httpsUrl(b: Record<string, unknown>, name: string): string | undefined {
  const value = text(b, name, MAX_URI);
  if (value === undefined) return undefined;
  const url = URI_CHARS.test(value) && URL.canParse(value) ? new URL(value) : undefined;
  if (!url || url.protocol !== "https:" || !value.startsWith("https://"))
    throw invalid(`${name} must be an https URL`);
  if (url.username !== "" || url.password !== "") throw invalid(`${name} must not contain user information`);
  return value;
}

function scope(b: Record<string, unknown>): string | undefined {
  const value = text(b, "scope", MAX_SCOPE);
  if (value !== undefined && !SCOPE.test(value))
    throw invalid("scope must be space-separated scope tokens (RFC 6749 section 3.3)");
  return value;
}

function contacts(b: Record<string, unknown>): string[] | undefined {
  const value = list(b, "contacts", MAX_CONTACTS);
  if (value?.some((c) => c.length === 0 || c.length > 320))
    throw invalid("contacts must be e-mail addresses of at most 320 characters");
  return value;
}

function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

/** A registered client as stored (durable JSON under keys.oauthClient). */
export interface ClientRecord {
  readonly clientId: string;
  /** Epoch seconds. */
  readonly issuedAt: number;
  /** SHA-256 (hex) of the client secret; confidential clients only. The secret is never stored. */
  readonly secretHash?: string;
  /** Set for clients pre-registered through the admin API: the tenant they belong to. */
  readonly tenant?: string;
  /** Epoch seconds of the last token issued to the client. */
  readonly lastUsedAt?: number;
  /** Epoch seconds: when a dynamically registered client's record expires unless used again. */
  readonly expiresAt?: number;
  readonly metadata: ClientMetadata;
}

/** How long dynamically registered clients live (PORTICO_OAUTH_*_CLIENT_TTL_SECONDS). */
export interface ClientLifetimes {
  /** A client that never obtained a token: this long after its registration. */
  readonly unusedSeconds: number;
  /** A client that did: this long after the last refresh token it was issued expires. */
  readonly idleSeconds: number;
}

export const DEFAULT_CLIENT_LIFETIMES: ClientLifetimes = { unusedSeconds: 86_400, idleSeconds: 30 * 86_400 };

/** Token issuances closer together than this record a client's use once. */
const USE_RESOLUTION_SECONDS = 60;

/** The RFC 7591 §3.2.1 client information response: registered metadata plus credentials. */
export type RegistrationResponse = ClientMetadata & {
  readonly client_id: string;
  readonly client_id_issued_at: number;
  /** Present once, in the response to the registration; never retrievable again. */
  readonly client_secret?: string;
  /**
   * When the secret expires (epoch seconds): with the registration of a dynamically registered
   * client unless it is used, 0 (never) for a pre-registered one. Present whenever the client has a secret.
   */
  readonly client_secret_expires_at?: number;
};

/** Client ids Portico issues: 128 random bits, base64url. Anything else is not one of ours. */
const CLIENT_ID_SHAPE = /^[A-Za-z0-9_-]{22}$/;
/** Compared against when the client is unknown or public, so every failure costs the same. */
const DECOY_HASH = createHash("sha256").update("portico decoy client secret").digest();

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

export class ClientStore {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly now: () => Date = () => new Date(),
    private readonly lifetimes: ClientLifetimes = DEFAULT_CLIENT_LIFETIMES,
  ) {}

  /**
   * Registers a client (RFC 7591 §3); the secret of a confidential client is in this response only.
   * Its record expires after `lifetimes.unusedSeconds` unless it obtains a token (used()).
   */
  register(metadata: ClientMetadata): Promise<RegistrationResponse> {
    return this.#create(metadata, undefined);
  }

  /**
   * Records that `record`'s client obtained a token: its last use, and for a dynamically registered
   * client an expiry `idleSeconds` past the refresh token it may just have got. Never brings back a
   * client deleted meanwhile.
   */
  async used(record: ClientRecord): Promise<void> {
    const now = this.#epoch();
    if (record.lastUsedAt !== undefined && now - record.lastUsedAt < USE_RESOLUTION_SECONDS) return;
    const key = this.keys.oauthClient(record.clientId);
    if (record.tenant !== undefined) {
      const kept = { ...record, lastUsedAt: now };
      await this.store.set(key, JSON.stringify(kept), { onlyIfPresent: true, keepTtl: true });
      return;
    }
    const ttlSeconds = REFRESH_TTL_SECONDS + this.lifetimes.idleSeconds;
    const renewed: ClientRecord = { ...record, lastUsedAt: now, expiresAt: now + ttlSeconds };
    await this.store.set(key, JSON.stringify(renewed), { onlyIfPresent: true, ttlSeconds });
  }

  /** Registers a client for one tenant (admin API); listed by listForTenant, deleted with it. */
  async preRegister(tenant: string, metadata: ClientMetadata): Promise<RegistrationResponse> {
    const response = await this.#create(metadata, tenant);
    await this.store.setAdd(this.keys.oauthTenantClients(tenant), response.client_id);
    return response;
  }

  async get(clientId: string): Promise<ClientRecord | undefined> {
    if (!CLIENT_ID_SHAPE.test(clientId)) return undefined;
    const raw = await this.store.get(this.keys.oauthClient(clientId));
    return raw === null ? undefined : (JSON.parse(raw) as ClientRecord);
  }

  /**
   * Authenticates a client at the token endpoint (RFC 6749 §2.3.1): a confidential client must
   * present its secret, a public client none. When `method` is given it must be the registered
   * token_endpoint_auth_method. Throws invalid_client; the secret check is constant-time.
   */
  async authenticate(
    clientId: string,
    presentedSecret: string | undefined,
    method?: TokenEndpointAuthMethod,
  ): Promise<ClientRecord> {
    const record = await this.get(clientId);
    const expected = record?.secretHash ? Buffer.from(record.secretHash, "hex") : DECOY_HASH;
    const same = timingSafeEqual(expected, sha256(presentedSecret ?? ""));
    const failed = (reason: string) =>
      new OAuthClientError("invalid_client", "client authentication failed", reason);
    if (!record) throw failed("unknown client_id");
    const registered = record.metadata.token_endpoint_auth_method;
    if (method !== undefined && method !== registered)
      throw failed(`used ${method}, registered ${registered}`);
    if (!record.secretHash) {
      if (presentedSecret !== undefined) throw failed("a public client presented a secret");
      return record;
    }
    if (presentedSecret === undefined || !same) throw failed("wrong or missing client secret");
    return record;
  }

  /** Deletes a client; false when there was none. */
  async delete(clientId: string): Promise<boolean> {
    const record = await this.get(clientId);
    if (!record) return false;
    await this.store.del(this.keys.oauthClient(clientId));
    if (record.tenant !== undefined)
      await this.store.setRemove(this.keys.oauthTenantClients(record.tenant), clientId);
    return true;
  }

  /** The clients pre-registered for a tenant, oldest first. */
  async listForTenant(tenant: string): Promise<ClientRecord[]> {
    const ids = await this.store.setMembers(this.keys.oauthTenantClients(tenant));
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records
      .filter((r): r is ClientRecord => r !== undefined)
      .sort((a, b) => a.issuedAt - b.issuedAt || (a.clientId < b.clientId ? -1 : 1));
  }

  async #create(metadata: ClientMetadata, tenant: string | undefined): Promise<RegistrationResponse> {
    const clientId = randomId(16);
    const secret = metadata.token_endpoint_auth_method === "none" ? undefined : randomId(32);
    const issuedAt = this.#epoch();
    // A pre-registered client is the tenant's, and lives until an admin deletes it.
    const ttlSeconds = tenant === undefined ? this.lifetimes.unusedSeconds : undefined;
    const record: ClientRecord = {
      clientId,
      issuedAt,
      ...(secret !== undefined && { secretHash: sha256(secret).toString("hex") }),
      ...(tenant !== undefined && { tenant }),
      ...(ttlSeconds !== undefined && { expiresAt: issuedAt + ttlSeconds }),
      metadata,
    };
    // 128 random bits do not collide; onlyIfAbsent makes sure a write never replaces a client.
    const stored = await this.store.set(this.keys.oauthClient(clientId), JSON.stringify(record), {
      onlyIfAbsent: true,
      ...(ttlSeconds !== undefined && { ttlSeconds }),
    });
    if (!stored) throw new Error("client_id collision");
    return registrationResponse(record, secret);
  }

  #epoch(): number {
    return Math.floor(this.now().getTime() / 1000);
  }
}

/** The RFC 7591 §3.2.1 body for a record; `secret` only right after registration. */
export function registrationResponse(record: ClientRecord, secret?: string): RegistrationResponse {
  return {
    client_id: record.clientId,
    client_id_issued_at: record.issuedAt,
    ...(secret !== undefined && { client_secret: secret }),
    ...(record.secretHash !== undefined && { client_secret_expires_at: record.expiresAt ?? 0 }),
    ...record.metadata,
  };
}
