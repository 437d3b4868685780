// Each record is described once: its TypeBox schema (src/records/) is the component the admin API's
// OpenAPI document carries, the committed document is what `npm run docs` writes, and the types the
// code uses are Static<> of the schemas (checked by `npm run typecheck`).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import type { Static, TSchema } from "@sinclair/typebox";
import { componentName, Timestamp } from "../../src/records/schema-kit.js";
import { Slug } from "../../src/records/names.js";
import {
  EntryOverride,
  PromptOverride,
  ResourceOverride,
  ServerSelection,
  VirtualServer,
  type ServerProviderSelection,
  type VirtualServerConfig,
} from "../../src/records/server.js";
import {
  Policy,
  PolicyRule,
  PolicySubjects,
  type PolicyRule as PolicyRuleType,
  type PolicySubjects as PolicySubjectsType,
  type TenantPolicy,
} from "../../src/records/policy.js";
import {
  PROVIDER_RECORDS,
  TENANT_RECORDS,
  TenantLimits,
  type TenantConfig,
  type TenantIdentity,
  type TenantLimits as TenantLimitsType,
  type HttpProviderConfig,
  type McpProviderConfig,
  type ProviderConfig,
  type StaticProviderConfig,
  type UpstreamAuth,
} from "../../src/records/tenant.js";
import { ADMIN_PROVIDERS, ADMIN_TENANTS } from "../../src/admin/openapi/provider-schemas.js";
import { ApiKeyCreated, ApiKeyInput, TenantInput, TenantView } from "../../src/admin/openapi/schemas.js";
import {
  ClientRegistration,
  OAuthClient,
  OAuthClientCreated,
  UserInput,
  UserPatch,
} from "../../src/admin/openapi/oauth-schemas.js";
import { ApiKey, type ApiKeyRecord } from "../../src/admin/api-keys.js";
import { ClientMetadata } from "../../src/oauth/clients.js";
import { User, Username, type UserRecord } from "../../src/oauth/users.js";
import { OPENAPI_DOC, openApiText } from "../support/generate-docs.js";

type Json = Record<string, unknown>;

/** True only when A and B are the same type (not merely assignable one way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(proof: Equal<A, B>) => proof;

// The types the code imports are the schemas' Static<>: a hand-written twin would fail here.
same<VirtualServerConfig, Static<typeof VirtualServer>>(true);
same<ServerProviderSelection, Static<typeof ServerSelection>>(true);
same<EntryOverride, Static<typeof EntryOverride>>(true);
same<TenantPolicy, Static<typeof Policy>>(true);
same<PolicyRuleType, Static<typeof PolicyRule>>(true);
same<PolicySubjectsType, Static<typeof PolicySubjects>>(true);
same<ProviderConfig, Static<typeof PROVIDER_RECORDS.Provider>>(true);
same<StaticProviderConfig, Static<typeof PROVIDER_RECORDS.StaticProvider>>(true);
same<HttpProviderConfig, Static<typeof PROVIDER_RECORDS.HttpProvider>>(true);
same<McpProviderConfig, Static<typeof PROVIDER_RECORDS.McpProvider>>(true);
same<UpstreamAuth, Static<typeof PROVIDER_RECORDS.UpstreamAuth>>(true);
same<TenantConfig, Static<typeof TENANT_RECORDS.Tenant>>(true);
same<TenantIdentity, Static<typeof TENANT_RECORDS.TenantIdentity>>(true);
same<TenantLimitsType, Static<typeof TenantLimits>>(true);
same<UserRecord, Static<typeof User>>(true);
same<ApiKeyRecord, Static<typeof ApiKey>>(true);
same<ClientMetadata, Static<typeof ClientMetadata>>(true);

/** Every record schema the document lists as a component. */
const RECORDS: readonly TSchema[] = [
  Slug,
  EntryOverride,
  PromptOverride,
  ResourceOverride,
  ServerSelection,
  VirtualServer,
  PolicySubjects,
  PolicyRule,
  Policy,
  // Providers as the admin API takes them: the records' schemas with each secret a SecretValue.
  ...Object.values(ADMIN_PROVIDERS),
  TenantLimits,
  // Identity settings as the admin API takes them, secrets SecretValues too.
  ADMIN_TENANTS.LocalIdentity,
  ADMIN_TENANTS.OidcIdentity,
  ADMIN_TENANTS.ExternalIdentity,
  ADMIN_TENANTS.TenantIdentity,
  TenantInput,
  TenantView,
  Timestamp,
  Username,
  User,
  UserInput,
  UserPatch,
  ClientRegistration,
  OAuthClient,
  OAuthClientCreated,
  ApiKey,
  ApiKeyInput,
  ApiKeyCreated,
];

/** What the API adds to a provider it answers with (read-only), not part of the record. */
const ANSWER_ONLY = ["health", "warning"];

/**
 * A component with its references to record components written out, as TypeBox has it inline (a
 * member's own description beside a reference is the copy's; a discriminator's mapping is the
 * document's, added for readers and generated clients by src/admin/openapi/schema-kit.ts).
 */
function inline(value: unknown, components: Json): unknown {
  if (Array.isArray(value)) return value.map((v) => inline(v, components));
  if (value === null || typeof value !== "object") return value;
  const { $ref: ref, ...rest } = value as Json;
  if (rest.discriminator) rest.discriminator = { propertyName: (rest.discriminator as Json).propertyName };
  const own = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v, components)]));
  if (typeof ref !== "string") return own;
  return { ...(inline(components[ref.replace("#/components/schemas/", "")], components) as Json), ...own };
}

describe("record schemas and the admin API's document", () => {
  it("the committed document is the one `npm run docs` writes", async () => {
    assert.equal(await readFile(OPENAPI_DOC, "utf8"), openApiText(), "stale: run `npm run docs`");
  });

  it("each record's component is its schema", async () => {
    const doc = JSON.parse(await readFile(OPENAPI_DOC, "utf8")) as { components: { schemas: Json } };
    const components = doc.components.schemas;
    for (const kind of ["StaticProvider", "HttpProvider", "McpProvider", "OpenApiProvider"])
      for (const key of ANSWER_ONLY) delete ((components[kind] as Json).properties as Json)[key];
    for (const schema of RECORDS) {
      const name = componentName(schema);
      assert.ok(name, "every record schema is named");
      assert.ok(components[name], `the document has no component ${name}`);
      assert.deepEqual(inline(components[name], components), JSON.parse(JSON.stringify(schema)), name);
    }
  });

  it("a tenant created through the API is the record's own fields", () => {
    const record = ADMIN_TENANTS.Tenant.properties as Record<string, TSchema>;
    for (const [key, schema] of Object.entries(TenantInput.properties)) {
      // POST /tenants defaults auth to "oauth" and providers to none; the rest is the record's.
      if (key === "auth" || key === "providers") continue;
      assert.deepEqual(schema, record[key], key);
    }
  });
});
