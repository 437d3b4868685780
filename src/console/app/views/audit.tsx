// The audit log, a tenant's or the platform's: pages of entries (the operation's `limit` and
// `cursor`), narrowed on the page by action, actor or target.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Json, Loading, Table, useLoad, When } from "../ui";

type Page = { items: Schemas["AuditEntry"][]; nextCursor?: string };

function auditPage(tenant: string | undefined, limit: number, cursor: string | undefined): Promise<Page> {
  const query = { limit, ...(cursor ? { cursor } : {}) };
  return tenant === undefined
    ? must(api.GET("/audit", { params: { query } }))
    : must(api.GET("/tenants/{tenant}/audit", { params: { path: { tenant }, query } }));
}

const matches = (e: Schemas["AuditEntry"], text: string) =>
  !text ||
  [e.action, e.actor, e.target, e.user?.username ?? "", e.client ?? ""].some((v) =>
    v.toLowerCase().includes(text),
  );

export function AuditView(props: { tenant?: string }) {
  const { tenant } = props;
  const [limit, setLimit] = useState(50);
  // The cursors of the pages before this one, for "Previous page".
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => auditPage(tenant, limit, cursor), [tenant, limit, cursor]);
  const [filter, setFilter] = useState("");
  const [action, setAction] = useState("");
  return (
    <>
      <form class="row" onSubmit={(e) => e.preventDefault()} aria-label="Audit filters">
        <label>
          Action
          <input
            value={action}
            placeholder="e.g. tools/call"
            onInput={(e) => setAction(e.currentTarget.value)}
          />
        </label>
        <label>
          Actor, target, user or client contains
          <input value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </label>
        <label>
          Entries per page
          <select
            value={String(limit)}
            onChange={(e) => {
              setLimit(Number(e.currentTarget.value));
              setCursors([undefined]);
            }}
          >
            {[20, 50, 100, 200].map((n) => (
              <option value={String(n)}>{n}</option>
            ))}
          </select>
        </label>
        <button type="button" onClick={page.reload}>
          Reload
        </button>
      </form>
      <Loading loaded={page}>
        {(p) => {
          const shown = p.items.filter(
            (e) => (!action || e.action.includes(action)) && matches(e, filter.toLowerCase()),
          );
          return (
            <>
              <p role="status">
                Page {cursors.length}: {shown.length} of {p.items.length} entries shown.
              </p>
              <Table
                caption="Audit entries, newest first"
                headers={["When", "Actor", "Action", "Target", "User", "Client", "Details"]}
                rows={shown.map((e) => [
                  <When at={e.at} />,
                  e.actor,
                  <code>{e.action}</code>,
                  e.target,
                  e.user?.username ?? e.user?.sub ?? "",
                  e.client ?? "",
                  <Details entry={e} />,
                ])}
                empty="No entries on this page match."
              />
              <div class="buttons">
                <button
                  type="button"
                  disabled={cursors.length === 1}
                  onClick={() => setCursors(cursors.slice(0, -1))}
                >
                  Previous page
                </button>
                <button
                  type="button"
                  disabled={p.nextCursor === undefined}
                  onClick={() => setCursors([...cursors, p.nextCursor])}
                >
                  Next page
                </button>
              </div>
            </>
          );
        }}
      </Loading>
    </>
  );
}

function Details(props: { entry: Schemas["AuditEntry"] }) {
  const { before, after, changes } = props.entry;
  if (before === undefined && after === undefined && changes === undefined) return null;
  return (
    <details>
      <summary>Changes</summary>
      <Json value={{ before, after, changes }} />
    </details>
  );
}
