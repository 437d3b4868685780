// Connected accounts (docs/upstream-auth.md): the users' accounts at each per-user provider's
// upstream; revoking one makes its user connect again.
import { api, must, type Schemas } from "../api";
import { Loading, Table, useAction, useLoad, When } from "../ui";

async function accountsOf(tenant: string): Promise<Schemas["ConnectedAccount"][]> {
  const providers = (
    await must(
      api.GET("/tenants/{tenant}/providers", { params: { path: { tenant }, query: { limit: 100 } } }),
    )
  ).items;
  const perUser = providers.filter((p) => "auth" in p && p.auth?.type === "user_oauth");
  const pages = await Promise.all(
    perUser.map((p) =>
      must(
        api.GET("/tenants/{tenant}/providers/{provider}/accounts", {
          params: { path: { tenant, provider: p.id }, query: { limit: 100 } },
        }),
      ),
    ),
  );
  return pages.flatMap((page) => page.items);
}

export function AccountsView(props: { tenant: string }) {
  const { tenant } = props;
  const accounts = useLoad(() => accountsOf(tenant), [tenant]);
  const action = useAction();
  const revoke = (a: Schemas["ConnectedAccount"]) =>
    action.run(async () => {
      await must(
        api.DELETE("/tenants/{tenant}/subjects/{subject}/accounts/{provider}", {
          params: { path: { tenant, subject: a.user, provider: a.provider } },
        }),
      );
      accounts.reload();
      return `Account of ${a.user} at ${a.provider} revoked`;
    });
  return (
    <>
      <p class="hint">
        Accounts users connected at providers that call upstreams with each user's own token.
      </p>
      {action.message}
      <Loading loaded={accounts}>
        {(items) => (
          <Table
            caption="Connected accounts"
            headers={["User", "Provider", "Issuer", "Scope", "Connected", ""]}
            rows={items.map((a) => [
              a.user,
              a.provider,
              a.issuer,
              a.scope ?? "",
              <When at={a.connectedAt} />,
              <button
                type="button"
                class="danger"
                onClick={() => void revoke(a)}
                aria-label={`Revoke the account of ${a.user} at ${a.provider}`}
              >
                Revoke
              </button>,
            ])}
            empty="No connected accounts."
          />
        )}
      </Loading>
    </>
  );
}
