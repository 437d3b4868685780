// A tenant's live MCP sessions (polled): client, era (protocol version), transport; end one.
import { api, must } from "../api";
import { Loading, Table, useAction, useLoad, When } from "../ui";

const SESSIONS_POLL_MS = 5000;

export function SessionsView(props: { tenant: string }) {
  const { tenant } = props;
  const sessions = useLoad(
    async () =>
      (
        await must(
          api.GET("/tenants/{tenant}/sessions", { params: { path: { tenant }, query: { limit: 100 } } }),
        )
      ).items,
    [tenant],
    SESSIONS_POLL_MS,
  );
  const action = useAction();
  const end = (session: string) =>
    action.run(async () => {
      await must(
        api.DELETE("/tenants/{tenant}/sessions/{session}", { params: { path: { tenant, session } } }),
      );
      sessions.reload();
      return "Session ended";
    });
  return (
    <>
      <p class="hint">Live: the list is read again every {SESSIONS_POLL_MS / 1000} seconds.</p>
      {action.message}
      <Loading loaded={sessions}>
        {(items) => (
          <Table
            caption="Sessions"
            headers={["Client", "Protocol version", "Transport", "Server", "User", "Last seen", ""]}
            rows={items.map((s) => [
              `${s.clientName} ${s.clientVersion}`,
              s.protocolVersion,
              s.transport,
              s.server ?? "",
              s.principal,
              <When at={s.lastSeenAt} />,
              <button
                type="button"
                class="danger"
                onClick={() => void end(s.id)}
                aria-label={`End the session of ${s.clientName}`}
              >
                End
              </button>,
            ])}
            empty="No live sessions."
          />
        )}
      </Loading>
    </>
  );
}
