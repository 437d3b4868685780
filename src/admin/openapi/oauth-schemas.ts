// JSON Schemas of the admin API's OAuth resources: a tenant's local users, its OAuth clients
// (RFC 7591 §2 metadata, wire spelling kept), its grants and its identity settings (the record's
// own schema, records/tenant.ts). Rules a schema cannot say are checked after: oauth/clients.ts
// validateRegistration, records/validate.ts validateIdentity.
import { ADMIN_TENANTS } from "./provider-schemas.js";
import { components, list, obj, ref, str } from "./schema-kit.js";

type Schema = Record<string, unknown>;

/** Usernames: slug-ish, and never "." or ".." (they are path segments of the admin API). */
export const USERNAME = "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$";
/** Client ids Portico issues (oauth/clients.ts): 128 random bits, base64url. */
export const CLIENT_ID = "^[A-Za-z0-9_-]{22}$";
/** Grant ids (oauth/grants.ts): `g_` and 96 random bits, base64url. */
export const GRANT_ID = "^g_[A-Za-z0-9_-]{16}$";

const password = str(
  "The password: 8 to 1024 characters. Write-only: never returned, stored as a scrypt hash.",
  {
    minLength: 8,
    maxLength: 1024,
    writeOnly: true,
  },
);
const email = { type: "string", format: "email", maxLength: 320, description: "E-mail address." };
const uri = (description: string): Schema => str(description, { format: "uri", maxLength: 2048 });
const text = (description: string): Schema => str(description, { maxLength: 200 });
/** Group and role names: what policy rules match (docs/policy.md). */
export const ATTRIBUTE = "^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$";
const attributes = (what: string): Schema => ({
  ...list(
    str(`A ${what} name: 1–128 characters of A–Z a–z 0–9 . _ : @ / + -, starting with a letter or digit.`, {
      pattern: ATTRIBUTE,
    }),
    `The user's ${what}s, matched by policy rules (docs/policy.md). They reach the user's access tokens at their next issuance (a refresh or a new sign-in); tokens issued before keep the old ones until they expire.`,
  ),
  maxItems: 100,
  uniqueItems: true,
});

/** RFC 7591 §2 client metadata, as registered and as shown. */
const CLIENT_METADATA: Record<string, Schema> = {
  redirect_uris: {
    ...list(uri("A redirect URI: https, loopback http, or a private-use scheme."), "Where codes are sent."),
    minItems: 1,
    maxItems: 20,
  },
  token_endpoint_auth_method: {
    enum: ["none", "client_secret_basic", "client_secret_post"],
    description:
      '"none" for public clients (most MCP clients); the others make a confidential client, given a secret. Default client_secret_basic.',
  },
  grant_types: {
    ...list(
      { enum: ["authorization_code", "refresh_token"] },
      "Default [authorization_code]. Only a client whose grant_types include refresh_token is issued refresh tokens.",
    ),
    maxItems: 5,
  },
  response_types: { ...list({ const: "code" }, "Only code."), maxItems: 5 },
  application_type: {
    enum: ["web", "native"],
    description: "native allows loopback and private-use redirects.",
  },
  client_name: text("Shown on the consent page."),
  client_uri: uri("The client's home page (https)."),
  logo_uri: uri("The client's logo (https)."),
  tos_uri: uri("Terms of service (https)."),
  policy_uri: uri("Privacy policy (https)."),
  scope: str("Space-separated scopes the client may ask for.", { maxLength: 1000 }),
  contacts: {
    ...list(str("E-mail address.", { maxLength: 320 }), "People responsible for the client."),
    maxItems: 10,
  },
  software_id: text("Identifies the client software."),
  software_version: text("The client software's version."),
};

/** The RFC 7591 metadata members the admin API takes. */
export const CLIENT_METADATA_MEMBERS: readonly string[] = Object.keys(CLIENT_METADATA);

const CLIENT: Record<string, Schema> = {
  client_id: str("The client id."),
  preRegistered: {
    type: "boolean",
    description:
      "true: pre-registered for this tenant through this API. false: registered otherwise (dynamically, or a Client ID Metadata Document) and listed because it holds grants on this tenant.",
  },
  grants: {
    type: "integer",
    minimum: 0,
    description: "Live (unrevoked) grants the client holds on this tenant.",
  },
  client_id_issued_at: { type: "integer", description: "When it was registered (epoch seconds)." },
  client_secret_expires_at: { const: 0, description: "Confidential clients: 0, the secret does not expire." },
  ...CLIENT_METADATA,
};
const CLIENT_REQUIRED = ["client_id", "preRegistered", "grants"];

/** Component schemas of the OAuth resources, by name. */
export const OAUTH_SCHEMAS: Record<string, Schema> = {
  Username: str(
    "A username: 1–64 characters of A–Z, a–z, 0–9, '.', '_', '@' and '-', starting with a letter or digit.",
    { pattern: USERNAME },
  ),
  User: obj(
    {
      username: ref("Username"),
      sub: str("The stable subject (`sub`) of the user's tokens; never reused."),
      email,
      groups: attributes("group"),
      roles: attributes("role"),
      createdAt: ref("Timestamp"),
    },
    ["username", "sub", "createdAt"],
    { description: "A local user of the tenant. Passwords are never shown." },
  ),
  UserInput: obj(
    {
      username: ref("Username"),
      password,
      email,
      groups: attributes("group"),
      roles: attributes("role"),
    },
    ["username", "password"],
  ),
  UserPatch: obj(
    {
      password,
      email: { ...email, type: ["string", "null"], description: "E-mail address; null removes it." },
      groups: attributes("group"),
      roles: attributes("role"),
    },
    [],
    {
      description:
        "JSON Merge Patch (RFC 7396) of a user: a new password, e-mail, groups or roles (a list replaces the previous one; [] removes them all).",
      minProperties: 1,
    },
  ),
  ClientRegistration: obj(CLIENT_METADATA, ["redirect_uris"], {
    description:
      "RFC 7591 §2 client metadata. A confidential client's secret is in the response to this request only.",
  }),
  OAuthClient: obj(CLIENT, CLIENT_REQUIRED, {
    description:
      "An OAuth client of the tenant. Its secret is never shown; metadata is absent for a Client ID Metadata Document (an https client_id).",
  }),
  OAuthClientCreated: obj(
    { ...CLIENT, client_secret: str("Confidential clients: the secret. Shown once: store it now.") },
    CLIENT_REQUIRED,
  ),
  Grant: obj(
    {
      id: str("Grant id.", { pattern: GRANT_ID }),
      client_id: str("The client it was granted to."),
      sub: str("The user who granted it (their `sub`)."),
      scope: str("Space-separated scopes granted."),
      createdAt: ref("Timestamp"),
      revokedAt: ref("Timestamp"),
    },
    ["id", "client_id", "sub", "scope", "createdAt"],
    {
      description: "What a user granted a client on the tenant; its refresh and access tokens live with it.",
    },
  ),
  ...components(
    ADMIN_TENANTS.LocalIdentity,
    ADMIN_TENANTS.OidcIdentity,
    ADMIN_TENANTS.ExternalIdentity,
    ADMIN_TENANTS.TenantIdentity,
  ),
};
