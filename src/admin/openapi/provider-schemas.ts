// JSON Schemas of the admin API's provider and tenant records (docs/admin-api.md): the records' own
// (records/tenant.ts) with each secret a SecretValue, so `{"set": true}` keeps a stored one, and
// the health the API adds to the providers it answers with. Rules a schema cannot say are checked
// after, by records/validate.ts.
import { Type } from "@sinclair/typebox";
import { named } from "../../records/schema-kit.js";
import { providerSchemas, tenantSchemas } from "../../records/tenant.js";
import { components, obj, ref, str, type Schema } from "./schema-kit.js";

const SecretSet = named(
  "SecretSet",
  Type.Object(
    { set: Type.Literal(true) },
    {
      additionalProperties: false,
      description:
        "Stands for a stored secret, which is never returned. Send it back unchanged to keep the stored value.",
    },
  ),
);
const SecretValue = named(
  "SecretValue",
  Type.Union([Type.String({ minLength: 1, maxLength: 8192 }), SecretSet], {
    description: 'A secret: a string to set it, or `{"set": true}` to keep the value already stored.',
    "x-message": 'must be a string, or {"set": true} to keep the stored value',
  }),
);

/** Provider records as the admin API takes them. */
export const ADMIN_PROVIDERS = providerSchemas(SecretValue);

/** Tenant records (identity settings, providers) as the admin API takes them. */
export const ADMIN_TENANTS = tenantSchemas(SecretValue, ADMIN_PROVIDERS.Provider);

/** Component schemas of providers, by name, in the order the OpenAPI document lists them. */
export const PROVIDER_SCHEMAS: Record<string, Schema> = {
  ...components(SecretSet, SecretValue, ...Object.values(ADMIN_PROVIDERS)),
  ProviderPatch: {
    type: "object",
    description:
      "JSON Merge Patch (RFC 7396) of a provider: members present replace, null removes; the result must be a valid provider. `id` and `kind` cannot change.",
  },
};

/** A provider's circuit breaker on one replica (providers/circuit-breaker.ts). */
PROVIDER_SCHEMAS.BreakerStatus = obj(
  {
    state: {
      enum: ["closed", "open", "half-open"],
      description:
        "`open`: calls fail fast until `retryAt`; `half-open`: one probe is out; `closed`: calls go upstream.",
    },
    consecutiveFailures: { type: "integer", minimum: 0, description: "Upstream failures in a row." },
    retryAt: { ...ref("Timestamp"), description: "When an open breaker lets its next probe through." },
    lastFailure: str("The last upstream failure (no connection, a timeout, HTTP 5xx)."),
  },
  ["state", "consecutiveFailures"],
  {
    description:
      "The provider's circuit breaker on this replica (`mcp` and `http` providers; PORTICO_UPSTREAM_BREAKER_*).",
  },
);

/** A provider's health as saves and the list report it (admin/routes/provider-health.ts). */
PROVIDER_SCHEMAS.ProviderStatus = obj(
  {
    status: { enum: ["healthy", "unhealthy"] },
    reason: str(
      "Why it is unhealthy (an upstream that cannot be reached, a failed ping, an open circuit breaker).",
    ),
    latencyMs: { type: "integer", description: "Round trip of a ping just now (mcp providers, on save)." },
    checkedAt: { ...ref("Timestamp"), description: "When it was checked (on save); absent in lists." },
    since: {
      ...ref("Timestamp"),
      description:
        "When the current status began, as this replica saw it: the provider's last health change (its start when it never changed), or the first report that saw its circuit breaker change it.",
    },
    breaker: ref("BreakerStatus"),
    warnings: {
      type: "array",
      items: { type: "string" },
      description:
        "What the provider's configuration gets wrong that it lives with: an `openapi` document's flaws (an operation left out, a missing operationId, a `$ref` to nothing).",
    },
  },
  ["status"],
  {
    description:
      "The provider's health on this replica: checked on save (at most a few seconds), last known in lists.",
  },
);

/**
 * What the API adds to a record it answers with: read-only, so a client may send back what it
 * read (a PUT of a GET's body) and the server drops them (admin/routes/providers.ts).
 */
for (const kind of ["StaticProvider", "HttpProvider", "McpProvider", "OpenApiProvider"]) {
  const record = PROVIDER_SCHEMAS[kind]!;
  record.properties = {
    ...(record.properties as Record<string, Schema>),
    health: { ...ref("ProviderStatus"), readOnly: true },
    warning: str("Present when a save found the provider unhealthy: what is wrong and what clients see.", {
      readOnly: true,
    }),
  };
}
