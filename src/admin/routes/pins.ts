// /tenants/{t}/providers/{p}/pins: a pinned provider's approved and pending tool definitions (its
// upstream's instructions among them, as `#instructions`), and their approval (docs/security.md
// "Pinned tool definitions"). Saving a provider approves what it lists then (adoptPins, called by
// the provider and tenant writes).
import { excerpt, fail } from "../../protocol/errors.js";
import { forgetPins, toolDigest } from "../../providers/pin-book.js";
import { pinningOf } from "../../records/tenant.js";
import type { Handler } from "../plugin.js";
import type { AdminDeps } from "./deps.js";

/**
 * Approves what each pinned provider of a tenant lists now, for those with nothing approved yet:
 * saving a provider is approving it (docs/security.md "Pinned tool definitions"). Audited.
 */
export async function adoptPins(deps: AdminDeps, tenantId: string, actor: string): Promise<void> {
  // A provider whose pinning is off now forgets what was approved: turned on again, it approves anew.
  const config = (await deps.records.read(tenantId))?.config;
  await Promise.all(
    (config?.providers ?? [])
      .filter((p) => pinningOf(config!, p) === "off")
      .map((p) => forgetPins(deps.store, deps.keys, tenantId, p.id)),
  );
  for (const { provider, tools } of await deps.registry.adoptPins(tenantId, actor))
    await deps.audit.record({
      actor,
      action: "pins.approve",
      tenant: tenantId,
      target: provider,
      after: { tools: tools.map((t) => ({ name: t.name, digest: toolDigest(t) })) },
    });
}

/** The tenant and provider a pins call names; 404 for either unknown. */
async function pinnedRecord(deps: AdminDeps, tenantId: string, providerId: string) {
  const config = (await deps.records.read(tenantId))?.config;
  if (!config) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(tenantId)}"`);
  const cfg = config.providers.find((p) => p.id === providerId);
  if (!cfg)
    throw fail(
      "PORTICO_ERR_ADMIN_NOT_FOUND",
      `Tenant "${config.id}" has no provider "${excerpt(providerId)}"`,
    );
  return { config, cfg };
}

export function pinHandlers(deps: AdminDeps): Record<string, Handler> {
  return {
    getProviderPins: async ({ params }) => {
      const { config, cfg } = await pinnedRecord(deps, params.tenant!, params.provider!);
      const book = deps.registry.pins(config.id, cfg.id);
      const pinning = book?.mode ?? "off";
      if (!book) return { status: 200, body: { provider: cfg.id, pinning, approved: [], pending: [] } };
      const [set, pending] = await Promise.all([book.approvedSet(), book.pending()]);
      const approved = (set?.tools ?? []).map((a) => ({ name: a.definition.name, ...a }));
      return {
        status: 200,
        body: {
          provider: cfg.id,
          pinning,
          ...(set && { approvedAt: set.approvedAt }),
          approved,
          pending,
        },
      };
    },

    approveProviderPins: async ({ params, body, principal }) => {
      const { config, cfg } = await pinnedRecord(deps, params.tenant!, params.provider!);
      if (!deps.registry.pins(config.id, cfg.id))
        throw fail(
          "PORTICO_ERR_ADMIN_CONFLICT",
          `Provider "${cfg.id}" does not pin its tool definitions: set its "pinning" to "warn" or "block" first`,
        );
      const tools = (body as { tools?: Array<string | { name: string; digest: string }> } | undefined)?.tools;
      const choice = tools?.map((t) => (typeof t === "string" ? { name: t } : t));
      const { approved, missing, stale } = await deps.registry.approvePins(
        config.id,
        cfg.id,
        choice,
        principal.actor,
      );
      if (missing.length > 0)
        throw fail(
          "PORTICO_ERR_ADMIN_NOT_FOUND",
          `No pending definition of ${missing.map((n) => `"${excerpt(n)}"`).join(", ")} on provider "${cfg.id}"`,
        );
      if (stale.length > 0)
        throw fail(
          "PORTICO_ERR_ADMIN_CONFLICT",
          `The pending definition of ${stale.map((n) => `"${excerpt(n)}"`).join(", ")} changed since the digest given: review it again (GET …/pins)`,
        );
      if (approved.length > 0)
        await deps.audit.record({
          actor: principal.actor,
          action: "pins.approve",
          tenant: config.id,
          target: cfg.id,
          after: { tools: approved },
        });
      const pending = (await deps.registry.pins(config.id, cfg.id)?.pending())?.length ?? 0;
      return { status: 200, body: { approved, pending } };
    },
  };
}
