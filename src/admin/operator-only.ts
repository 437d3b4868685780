// What the admin API never writes, whoever asks, the platform key included: `stdio` providers
// (docs/upstream-mcp.md "stdio upstreams"). Their command is code execution on every replica, so
// they are defined in the bootstrap file on the operator's filesystem only; refused before the
// body is checked against the schema, with a 400 that says where they belong.
import { fail } from "../protocol/errors.js";
import { LAUNCH_FIELDS } from "../config/stdio-launch.js";

/** The operations whose body holds a provider, or a tenant with its providers. */
const PROVIDER_BODIES = new Set(["createProvider", "replaceProvider", "patchProvider"]);
const TENANT_BODIES = new Set(["createTenant", "updateTenant"]);

const WHERE =
  'stdio providers are defined in the bootstrap file (PORTICO_CONFIG) on the operator\'s filesystem only, never through the admin API (a command is code execution on every replica; docs/upstream-mcp.md "stdio upstreams")';

/** Throws PORTICO_ERR_ADMIN_OPERATOR_ONLY when a provider in `body` is, or would become, a stdio one. */
export function refuseOperatorOnly(operationId: string, body: unknown): void {
  if (PROVIDER_BODIES.has(operationId)) return check(body, "");
  if (!TENANT_BODIES.has(operationId)) return;
  const providers = (body as { providers?: unknown } | null)?.providers;
  if (Array.isArray(providers)) providers.forEach((p, i) => check(p, `/providers/${i}`));
}

/** A stored stdio provider cannot be replaced or patched either (it came from a bootstrap file). */
export function refuseStdioChange(current: { readonly transport?: string } | undefined): void {
  if (current?.transport === "stdio")
    throw fail("PORTICO_ERR_ADMIN_OPERATOR_ONLY", `This provider is a stdio provider: ${WHERE}`);
}

function check(provider: unknown, at: string): void {
  if (typeof provider !== "object" || provider === null || Array.isArray(provider)) return;
  const p = provider as Record<string, unknown>;
  const field =
    p.transport === "stdio" ? "transport" : LAUNCH_FIELDS.find((f) => Object.hasOwn(p, f) && p[f] !== null);
  if (field === undefined) return;
  throw fail("PORTICO_ERR_ADMIN_OPERATOR_ONLY", `${at}/${field}: ${WHERE}`);
}
