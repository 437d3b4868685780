// The answers of /mcp when the URL names no tenant, or one this server does not serve
// (docs/errors.md): JSON-RPC errors that say the endpoint is /mcp/{tenant}, for clients (and
// users) that drop the path after /mcp. Which tenants exist is never said: their names are not public.
import type { FastifyInstance } from "fastify";
import { excerpt, fail, type PorticoError } from "../../protocol/errors.js";

/** `/mcp` without a tenant: where the endpoints are. */
export function tenantRequired(publicUrl: string): PorticoError {
  return fail(
    "PORTICO_ERR_MCP_TENANT_REQUIRED",
    `Not Found: this URL names no tenant. Each tenant has its own MCP endpoint, ${publicUrl}/mcp/{tenant}: put the tenant's id after /mcp/ in the client's URL`,
  );
}

/** `/mcp/{tenant}/{server}` naming no virtual server of that tenant (docs/architecture.md §8). */
export function unknownServer(tenant: string, server: string, publicUrl: string): PorticoError {
  return fail(
    "PORTICO_ERR_MCP_TENANT_NOT_FOUND",
    `Unknown server '${excerpt(server)}' of tenant '${excerpt(tenant)}': no MCP endpoint at this URL. Endpoints are ${publicUrl}/mcp/{tenant} and ${publicUrl}/mcp/{tenant}/{server}; check the URL with whoever runs this server`,
  );
}

/** `/mcp/{tenant}` naming no tenant served here. */
export function unknownTenant(tenant: string, publicUrl: string): PorticoError {
  if (tenant === "") return tenantRequired(publicUrl);
  return fail(
    "PORTICO_ERR_MCP_TENANT_NOT_FOUND",
    `Unknown tenant '${excerpt(tenant)}': no MCP endpoint at this URL. Endpoints are ${publicUrl}/mcp/{tenant}; check the tenant's id with whoever runs this server`,
  );
}

/**
 * `/mcp` (and `/mcp/`: the router ignores a trailing slash) for every method a client sends:
 * refused on arrival, before the body is read, so a body this route could not parse does not hide
 * the real mistake.
 */
export function noTenantRoutes(app: FastifyInstance, publicUrl: string): void {
  const refuse = async () => {
    throw tenantRequired(publicUrl);
  };
  app.route({
    method: ["GET", "POST", "DELETE", "PUT", "PATCH"],
    url: "/mcp",
    exposeHeadRoute: false,
    onRequest: refuse,
    handler: refuse,
  });
}
