// /tenants/{t}/audit and /audit: the audit logs, newest first; their chains verified and exported.
import type { Handler } from "../plugin.js";
import { limitOf } from "../pagination.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

export function auditHandlers(deps: AdminDeps): Record<string, Handler> {
  const page: Handler = async ({ params, query }) => {
    const tenant = params.tenant ?? null;
    if (tenant !== null) await readTenant(deps, tenant);
    const list = `audit|${tenant ?? ""}`;
    const before = deps.cursors.decode(list, query.cursor);
    const limit = limitOf(query);
    if (before !== undefined && !/^\d+-\d+$/.test(before)) throw new Error("cursor names no entry"); // MACed: cannot happen
    const rows = await deps.audit.page(tenant, before, limit + 1);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      status: 200,
      body:
        rows.length > limit && last ? { items, nextCursor: deps.cursors.encode(list, last.id) } : { items },
    };
  };
  const verify: Handler = async ({ params, query }) => {
    const tenant = params.tenant ?? null;
    if (tenant !== null) await readTenant(deps, tenant);
    const bound = (v: unknown) => (typeof v === "number" ? v : undefined);
    return { status: 200, body: await deps.audit.verify(tenant, bound(query.from), bound(query.to)) };
  };
  const exported: Handler = async ({ params }) => {
    const tenant = params.tenant ?? null;
    if (tenant !== null) await readTenant(deps, tenant);
    // At most MAX_ENTRIES lines of bounded entries: read whole, sent at once.
    let text = "";
    for await (const line of deps.audit.export(tenant)) text += `${line}\n`;
    return { status: 200, body: text, type: "application/x-ndjson" };
  };
  return {
    listTenantAudit: page,
    listPlatformAudit: page,
    verifyTenantAudit: verify,
    verifyPlatformAudit: verify,
    exportTenantAudit: exported,
    exportPlatformAudit: exported,
  };
}
