// Protected Resource Metadata (RFC 9728) for every "oauth" tenant's MCP endpoint, at the
// path-based well-known URL: /.well-known/oauth-protected-resource/mcp/{tenant} (and with a trailing
// slash, for the MCP URL written so), and each virtual server's at …/mcp/{tenant}/{server}. It names Portico as the authorization server, or the tenant's
// external one when it trusts another server's tokens.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { TenantRegistry } from "../tenants/registry.js";
import { pathEndsWithSlash, protectedResource, type ResourceServer } from "./resource-server.js";

export interface AuthPluginOptions {
  readonly registry: TenantRegistry;
  readonly resourceServer: ResourceServer;
  /** Portico's authorization server's issuer. */
  readonly issuer: string;
}

export async function authPlugin(app: FastifyInstance, opts: AuthPluginOptions): Promise<void> {
  const { registry, resourceServer, issuer } = opts;
  const metadata = async (
    req: FastifyRequest<{ Params: { tenant: string; server?: string } }>,
    reply: FastifyReply,
  ) => {
    // Metadata is public, and browser-based clients read it cross-origin.
    void reply.header("access-control-allow-origin", "*");
    const { tenant: id, server: serverId } = req.params;
    const tenant = serverId === undefined ? registry.get(id) : registry.server(id, serverId);
    if (!tenant || tenant.config.auth !== "oauth")
      return reply.code(404).send({ error: "not_found", error_description: "No protected resource here" });
    const { identity } = tenant.config;
    const authorizationServer = identity?.type === "external" ? identity.issuer : issuer;
    // Asked with a trailing slash, it names the resource so (RFC 9728 §3.3 compares exactly).
    const slash = pathEndsWithSlash(req.url);
    const { server } = tenant;
    const name = server && `${tenant.config.id} · ${server.name ?? server.id}`;
    return reply
      .header("cache-control", "public, max-age=300")
      .send(resourceServer.metadata(protectedResource(tenant), authorizationServer, slash, name));
  };
  app.get("/.well-known/oauth-protected-resource/mcp/:tenant", metadata);
  // Each virtual server is a protected resource of its own (docs/architecture.md §8).
  app.get("/.well-known/oauth-protected-resource/mcp/:tenant/:server", metadata);
}
