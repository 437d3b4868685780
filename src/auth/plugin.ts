// Protected Resource Metadata (RFC 9728) for every "oauth" tenant's MCP endpoint, at the
// path-based well-known URL: /.well-known/oauth-protected-resource/mcp/{tenant} (and with a trailing
// slash, for the MCP URL written so). It names Portico as the authorization server, or the tenant's
// external one when it trusts another server's tokens.
import type { FastifyInstance } from "fastify";
import type { TenantRegistry } from "../tenants/registry.js";
import { pathEndsWithSlash, type ResourceServer } from "./resource-server.js";

export interface AuthPluginOptions {
  readonly registry: TenantRegistry;
  readonly resourceServer: ResourceServer;
  /** Portico's authorization server's issuer. */
  readonly issuer: string;
}

export async function authPlugin(app: FastifyInstance, opts: AuthPluginOptions): Promise<void> {
  const { registry, resourceServer, issuer } = opts;
  app.get<{ Params: { tenant: string } }>(
    "/.well-known/oauth-protected-resource/mcp/:tenant",
    async (req, reply) => {
      // Metadata is public, and browser-based clients read it cross-origin.
      void reply.header("access-control-allow-origin", "*");
      const tenant = registry.get(req.params.tenant);
      if (!tenant || tenant.config.auth !== "oauth")
        return reply.code(404).send({ error: "not_found", error_description: "No protected resource here" });
      const { identity } = tenant.config;
      const authorizationServer = identity?.type === "external" ? identity.issuer : issuer;
      // Asked with a trailing slash, it names the resource so (RFC 9728 §3.3 compares exactly).
      const slash = pathEndsWithSlash(req.url);
      return reply
        .header("cache-control", "public, max-age=300")
        .send(resourceServer.metadata(tenant.config.id, authorizationServer, slash));
    },
  );
}
