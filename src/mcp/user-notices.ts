// A change of one user's lists (a per-user provider: they connected, disconnected, or their own
// upstream's lists changed; docs/architecture.md §3) told to that user's clients only: the
// standalone streams this replica carries of their sessions, and (through every replica) their
// listen streams. Rare events: each session's record is read to tell whose it is.
import type { ListChangeKind } from "../providers/types.js";
import type { ListenHub } from "./stateless/listens.js";
import type { SessionStore } from "./sessions.js";
import { STANDALONE, type StreamHub } from "./session/streams.js";

export interface UserNoticeDeps {
  readonly hub: StreamHub;
  readonly sessions: SessionStore;
  readonly listens: ListenHub;
}

/** Whether a session's principal (`<sub> via <client>`, auth/resource-server.ts) is `user`'s. */
export function ownedBy(principal: string, user: string): boolean {
  return principal.startsWith(`${user} via `);
}

/** Tells `user`'s sessions and listen streams that a list of theirs changed. */
export function userListChanged(deps: UserNoticeDeps) {
  return (tenant: string, user: string, kind: ListChangeKind): void => {
    const json = JSON.stringify({ jsonrpc: "2.0", method: `notifications/${kind}/list_changed` });
    for (const sid of deps.hub.standaloneSessions(tenant))
      void deps.sessions
        .read(tenant, sid)
        .then((info) =>
          info && ownedBy(info.session.principal, user)
            ? deps.hub.emit(tenant, sid, STANDALONE, json)
            : undefined,
        )
        .catch(() => undefined);
    deps.listens.listChanged(tenant, kind, undefined, user);
  };
}
