// Tenants: every tenant for a platform admin (with create), a tenant admin's own otherwise.
import { useState } from "preact/hooks";
import { api, must, type Schemas, type Session } from "../api";
import { href, navigate } from "../router";
import { Loading, Table, useAction, useLoad, When } from "../ui";

async function allTenants(): Promise<Schemas["Tenant"][]> {
  const all: Schemas["Tenant"][] = [];
  let cursor: string | undefined;
  do {
    const page = await must(api.GET("/tenants", { params: { query: { limit: 100, cursor } } }));
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return all;
}

export function TenantsView(props: { me: Session }) {
  // A tenant admin reads their own tenant's record (its settings; no secret is in it), no other.
  if (!props.me.platform) return <OwnTenant tenant={props.me.tenant} />;
  return <AllTenants />;
}

function OwnTenant(props: { tenant: string | null }) {
  const { tenant } = props;
  const record = useLoad(
    async () =>
      tenant === null ? undefined : must(api.GET("/tenants/{tenant}", { params: { path: { tenant } } })),
    [tenant],
  );
  if (tenant === null) return <p>You administer no tenant.</p>;
  return (
    <Loading loaded={record}>{(t) => <TenantTable caption="Your tenant" tenants={t ? [t] : []} />}</Loading>
  );
}

function TenantTable(props: { caption: string; tenants: Schemas["Tenant"][] }) {
  return (
    <Table
      caption={props.caption}
      headers={["Tenant", "Name", "Sign-in", "Providers", "MCP URL", "Created"]}
      rows={props.tenants.map((t) => [
        <a href={href(`/t/${encodeURIComponent(t.id)}/providers`)}>{t.id}</a>,
        t.name ?? "",
        t.auth,
        String(t.providers),
        <code>{t.mcpUrl}</code>,
        <When at={t.createdAt} />,
      ])}
    />
  );
}

function AllTenants() {
  const tenants = useLoad(allTenants, []);
  return (
    <>
      <CreateTenant onCreated={tenants.reload} />
      <Loading loaded={tenants}>{(items) => <TenantTable caption="Tenants" tenants={items} />}</Loading>
    </>
  );
}

function CreateTenant(props: { onCreated: () => void }) {
  const [id, setId] = useState("");
  const [name, setName] = useState("");
  const [auth, setAuth] = useState<"oauth" | "none">("oauth");
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = { id, auth, ...(name ? { name } : {}) };
      const created = await must(api.POST("/tenants", { body }));
      props.onCreated();
      navigate(`/t/${encodeURIComponent(created.id)}/providers`);
      return `Tenant ${created.id} created`;
    });
  };
  return (
    <section aria-labelledby="new-tenant">
      <h2 id="new-tenant">New tenant</h2>
      <form onSubmit={submit} class="row">
        <label>
          Tenant id
          <input
            required
            pattern="[a-z0-9][a-z0-9\-]{0,62}"
            value={id}
            onInput={(e) => setId(e.currentTarget.value)}
          />
        </label>
        <label>
          Display name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Sign-in
          <select value={auth} onChange={(e) => setAuth(e.currentTarget.value as "oauth" | "none")}>
            <option value="oauth">OAuth (users sign in)</option>
            <option value="none">None (open endpoint)</option>
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Create tenant
        </button>
      </form>
      {action.message}
    </section>
  );
}
