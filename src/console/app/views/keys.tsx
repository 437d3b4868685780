// API keys, a tenant's or the platform's: create one (its secret shown once, with a copy button),
// revoke one.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Loading, Table, useAction, useLoad, When } from "../ui";

async function listKeys(tenant: string | undefined): Promise<Schemas["ApiKey"][]> {
  const page =
    tenant === undefined
      ? await must(api.GET("/api-keys", { params: { query: { limit: 100 } } }))
      : await must(
          api.GET("/tenants/{tenant}/api-keys", { params: { path: { tenant }, query: { limit: 100 } } }),
        );
  return page.items;
}

async function createKey(tenant: string | undefined, name: string): Promise<Schemas["ApiKeyCreated"]> {
  return tenant === undefined
    ? must(api.POST("/api-keys", { body: { name } }))
    : must(api.POST("/tenants/{tenant}/api-keys", { params: { path: { tenant } }, body: { name } }));
}

async function revokeKey(tenant: string | undefined, key: string): Promise<void> {
  if (tenant === undefined) await must(api.DELETE("/api-keys/{key}", { params: { path: { key } } }));
  else await must(api.DELETE("/tenants/{tenant}/api-keys/{key}", { params: { path: { tenant, key } } }));
}

export function KeysView(props: { tenant?: string }) {
  const { tenant } = props;
  const keys = useLoad(() => listKeys(tenant), [tenant]);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<Schemas["ApiKeyCreated"]>();
  const create = useAction();
  const revoke = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void create.run(async () => {
      const key = await createKey(tenant, name);
      setCreated(key);
      setName("");
      keys.reload();
      return `Key ${key.name} created: copy its secret now, it is not shown again`;
    });
  };
  const onRevoke = (key: Schemas["ApiKey"]) =>
    revoke.run(async () => {
      await revokeKey(tenant, key.id);
      keys.reload();
      return `Key ${key.name} revoked`;
    });
  return (
    <>
      <section aria-labelledby="new-key">
        <h2 id="new-key">New API key</h2>
        <form onSubmit={submit} class="row">
          <label>
            Key name
            <input required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </form>
        {create.message}
        {created && <Secret value={created.token} onDone={() => setCreated(undefined)} />}
      </section>
      {revoke.message}
      <Loading loaded={keys}>
        {(items) => (
          <Table
            caption="API keys"
            headers={["Name", "Created", "By", "Last used", "State", ""]}
            rows={items.map((k) => [
              k.name,
              <When at={k.createdAt} />,
              k.createdBy,
              <When at={k.lastUsedAt} />,
              k.revokedAt ? "Revoked" : "Active",
              k.revokedAt ? (
                ""
              ) : (
                <button
                  type="button"
                  class="danger"
                  onClick={() => void onRevoke(k)}
                  aria-label={`Revoke ${k.name}`}
                >
                  Revoke
                </button>
              ),
            ])}
            empty="No API keys."
          />
        )}
      </Loading>
    </>
  );
}

/** A secret shown once: selectable, copyable, then dismissed. */
export function Secret(props: { value: string; onDone: () => void }) {
  const action = useAction();
  const copy = () =>
    action.run(async () => {
      await navigator.clipboard.writeText(props.value);
      return "Copied to the clipboard";
    });
  return (
    <div class="secret">
      <p>
        <strong>Shown once.</strong> Store it now: Portico keeps only its hash.
      </p>
      <label>
        Secret
        <input readOnly value={props.value} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <div class="buttons">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={props.onDone}>
          I have stored it
        </button>
      </div>
      {action.message}
    </div>
  );
}
