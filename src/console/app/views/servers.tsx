// A tenant's virtual servers (docs/architecture.md §8): their selections, created or replaced as
// JSON, deleted.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Json, Loading, parseJson, Table, useAction, useLoad } from "../ui";

const EXAMPLE = '{\n  "id": "eng",\n  "providers": [{ "provider": "everything", "tools": "*" }]\n}';

export function ServersView(props: { tenant: string }) {
  const { tenant } = props;
  const servers = useLoad(
    async () =>
      (
        await must(
          api.GET("/tenants/{tenant}/servers", { params: { path: { tenant }, query: { limit: 100 } } }),
        )
      ).items,
    [tenant],
  );
  const [json, setJson] = useState(EXAMPLE);
  const action = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = parseJson(json, "The server") as Schemas["VirtualServer"];
      await must(api.POST("/tenants/{tenant}/servers", { params: { path: { tenant } }, body }));
      servers.reload();
      return `Server ${String(body.id)} created`;
    });
  };
  const remove = (server: string) =>
    action.run(async () => {
      if (!window.confirm(`Delete the virtual server ${server}?`)) return undefined;
      await must(api.DELETE("/tenants/{tenant}/servers/{server}", { params: { path: { tenant, server } } }));
      servers.reload();
      return `Server ${server} deleted`;
    });
  return (
    <>
      <section aria-labelledby="new-server">
        <h2 id="new-server">New virtual server</h2>
        <form onSubmit={save}>
          <label>
            Server (JSON, as the admin API takes it)
            <textarea rows={6} value={json} onInput={(e) => setJson(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Create server
          </button>
        </form>
      </section>
      {action.message}
      <Loading loaded={servers}>
        {(items) => (
          <Table
            caption="Virtual servers"
            headers={["Server", "Name", "Selection", ""]}
            rows={items.map((s) => [
              <code>{String(s.id)}</code>,
              s.name ?? "",
              <Json value={s.providers} />,
              <button
                type="button"
                class="danger"
                onClick={() => void remove(String(s.id))}
                aria-label={`Delete server ${String(s.id)}`}
              >
                Delete
              </button>,
            ])}
            empty="No virtual servers."
          />
        )}
      </Loading>
    </>
  );
}
