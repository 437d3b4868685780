// /tenants/{t}/sessions: the tenant's live MCP sessions, and ending one (its next request gets 404).
import { fail } from "../../protocol/errors.js";
import type { SessionInfo } from "../../mcp/sessions.js";
import type { Handler } from "../plugin.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

/** `name/version` as initialize gave it, split back. */
function client(name: string): { clientName: string; clientVersion: string } {
  const slash = name.lastIndexOf("/");
  return slash < 0
    ? { clientName: name, clientVersion: "" }
    : { clientName: name.slice(0, slash), clientVersion: name.slice(slash + 1) };
}

function view(deps: AdminDeps, info: SessionInfo, now: number) {
  const { session, ttlSeconds } = info;
  // An HTTP+SSE session lives while its stream is open (a lease its replica renews): seen now.
  const idle = session.transport === "sse" ? 0 : deps.sessions.ttlSeconds - ttlSeconds;
  return {
    id: session.id,
    ...client(session.clientName),
    protocolVersion: session.protocolVersion,
    transport: session.transport ?? "streamable-http",
    ...(session.server !== undefined && { server: session.server }),
    principal: session.principal,
    createdAt: new Date(session.createdAt * 1000).toISOString(),
    // The sliding TTL tells when the session was last used: no write on the hot path needed.
    lastSeenAt: new Date(Math.max(session.createdAt * 1000, now - idle * 1000)).toISOString(),
    expiresAt: new Date(now + ttlSeconds * 1000).toISOString(),
  };
}

/** Newest first, as a key that ascends in that order. */
function newestFirst(info: SessionInfo): string {
  return `${String(9_999_999_999 - info.session.createdAt).padStart(10, "0")}|${info.session.id}`;
}

export function sessionHandlers(deps: AdminDeps): Record<string, Handler> {
  /** The live session a path names; 404 when it expired, ended or never was. */
  async function liveSession(params: Readonly<Record<string, string>>) {
    const { config } = await readTenant(deps, params.tenant!);
    const info = await deps.sessions.read(config.id, params.session!);
    if (!info)
      throw fail(
        "PORTICO_ERR_ADMIN_NOT_FOUND",
        `Tenant "${config.id}" has no live session "${params.session}"`,
      );
    return { config, info };
  }

  return {
    listSessions: async ({ params, query }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const all = (await deps.sessions.list(config.id)).sort((a, b) =>
        newestFirst(a) < newestFirst(b) ? -1 : 1,
      );
      const page = deps.cursors.slice(`sessions|${config.id}`, all, newestFirst, query);
      const now = Date.now();
      return { status: 200, body: { ...page, items: page.items.map((s) => view(deps, s, now)) } };
    },

    getSession: async ({ params }) => {
      const { info } = await liveSession(params);
      return { status: 200, body: view(deps, info, Date.now()) };
    },

    deleteSession: async ({ params, principal }) => {
      const { config, info } = await liveSession(params);
      await deps.endSession(config.id, info.session.id, deps.registry.get(config.id));
      await deps.audit.record({
        actor: principal.actor,
        action: "session.delete",
        tenant: config.id,
        target: info.session.id,
      });
      return { status: 204 };
    },
  };
}
