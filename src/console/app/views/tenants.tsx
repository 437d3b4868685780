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
  // A tenant admin's key may not read tenant records (docs/admin-api.md): their one tenant is named.
  if (!props.me.platform) return <OwnTenant tenant={props.me.tenant} />;
  return <AllTenants />;
}

function OwnTenant(props: { tenant: string | null }) {
  if (props.tenant === null) return <p>You administer no tenant.</p>;
  const link = href(`/t/${encodeURIComponent(props.tenant)}/providers`);
  return <Table caption="Your tenant" headers={["Tenant"]} rows={[[<a href={link}>{props.tenant}</a>]]} />;
}

function AllTenants() {
  const tenants = useLoad(allTenants, []);
  return (
    <>
      <CreateTenant onCreated={tenants.reload} />
      <Loading loaded={tenants}>
        {(items) => (
          <Table
            caption="Tenants"
            headers={["Tenant", "Name", "Sign-in", "Providers", "MCP URL", "Created"]}
            rows={items.map((t) => [
              <a href={href(`/t/${encodeURIComponent(t.id)}/providers`)}>{t.id}</a>,
              t.name ?? "",
              t.auth,
              String(t.providers),
              <code>{t.mcpUrl}</code>,
              <When at={t.createdAt} />,
            ])}
          />
        )}
      </Loading>
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
