// A tenant's OAuth clients (registered or pre-registered; delete) and the grants users gave them
// (revoke: their tokens stop working).
import { api, must } from "../api";
import { Loading, Table, useAction, useLoad, When } from "../ui";

export function OAuthView(props: { tenant: string }) {
  const { tenant } = props;
  const page = { params: { path: { tenant }, query: { limit: 100 } } };
  const clients = useLoad(
    async () => (await must(api.GET("/tenants/{tenant}/clients", page))).items,
    [tenant],
  );
  const grants = useLoad(async () => (await must(api.GET("/tenants/{tenant}/grants", page))).items, [tenant]);
  const action = useAction();
  const deleteClient = (client: string) =>
    action.run(async () => {
      await must(api.DELETE("/tenants/{tenant}/clients/{client}", { params: { path: { tenant, client } } }));
      clients.reload();
      grants.reload();
      return `Client ${client} deleted`;
    });
  const revokeGrant = (grant: string) =>
    action.run(async () => {
      await must(api.DELETE("/tenants/{tenant}/grants/{grant}", { params: { path: { tenant, grant } } }));
      grants.reload();
      return "Grant revoked";
    });
  return (
    <>
      {action.message}
      <h2>Clients</h2>
      <Loading loaded={clients}>
        {(items) => (
          <Table
            caption="OAuth clients"
            headers={["Client", "Name", "Kind", "Grants", "Last used", ""]}
            rows={items.map((c) => [
              <code>{c.client_id}</code>,
              c.client_name ?? "",
              c.preRegistered ? "pre-registered" : "registered",
              String(c.grants),
              <When at={c.lastUsedAt} />,
              <button
                type="button"
                class="danger"
                onClick={() => void deleteClient(c.client_id)}
                aria-label={`Delete client ${c.client_name ?? c.client_id}`}
              >
                Delete
              </button>,
            ])}
            empty="No OAuth clients."
          />
        )}
      </Loading>
      <h2>Grants</h2>
      <Loading loaded={grants}>
        {(items) => (
          <Table
            caption="Grants"
            headers={["User", "Client", "Scope", "Given", "State", ""]}
            rows={items.map((g) => [
              g.sub,
              <code>{g.client_id}</code>,
              g.scope,
              <When at={g.createdAt} />,
              g.revokedAt ? "Revoked" : "Active",
              g.revokedAt ? (
                ""
              ) : (
                <button
                  type="button"
                  class="danger"
                  onClick={() => void revokeGrant(g.id)}
                  aria-label={`Revoke the grant of ${g.sub}`}
                >
                  Revoke
                </button>
              ),
            ])}
            empty="No grants."
          />
        )}
      </Loading>
    </>
  );
}
