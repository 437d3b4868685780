// A tenant's providers with their live health (polled), adding one, and one provider's catalog.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { href, navigate } from "../router";
import { Json, Loading, Moment, parseJson, Table, useAction, useLoad, When } from "../ui";

/** How often the health of the providers is asked again. */
const HEALTH_POLL_MS = 5000;

const path = (tenant: string) => ({ params: { path: { tenant } } });
const providerPath = (tenant: string, provider: string) => ({ params: { path: { tenant, provider } } });

export function ProvidersView(props: { tenant: string }) {
  const { tenant } = props;
  const providers = useLoad(
    async () => (await must(api.GET("/tenants/{tenant}/providers", path(tenant)))).items,
    [tenant],
  );
  return (
    <>
      <AddProvider tenant={tenant} onAdded={providers.reload} />
      <Loading loaded={providers}>{(items) => <HealthTable tenant={tenant} providers={items} />}</Loading>
    </>
  );
}

function HealthTable(props: { tenant: string; providers: Schemas["Provider"][] }) {
  const { tenant, providers } = props;
  const health = useLoad(
    () =>
      Promise.all(
        providers.map((p) =>
          must(api.GET("/tenants/{tenant}/providers/{provider}/health", providerPath(tenant, p.id))).catch(
            () => undefined,
          ),
        ),
      ),
    [tenant, providers],
    HEALTH_POLL_MS,
  );
  const rows = providers.map((p, i) => {
    const h = health.data?.[i];
    return [
      <a href={href(`/t/${encodeURIComponent(tenant)}/providers/${encodeURIComponent(p.id)}`)}>{p.id}</a>,
      p.kind,
      h ? <HealthBadge status={h.status} since={h.since} /> : "…",
      h?.reason ?? "",
      h?.latencyMs === undefined ? "" : `${h.latencyMs} ms`,
      <When at={h?.checkedAt} />,
    ];
  });
  return (
    <section aria-labelledby="provider-list">
      <h2 id="provider-list">Providers</h2>
      <p class="hint">Health is checked again every {HEALTH_POLL_MS / 1000} seconds.</p>
      <Table
        caption="Providers and their health"
        headers={["Provider", "Kind", "Health", "Why", "Latency", "Checked"]}
        rows={rows}
        empty="No providers yet: add one above."
      />
    </section>
  );
}

/** The status, and since when it holds ("Healthy since 14:02") when the API says. */
export function HealthBadge(props: { status: "healthy" | "unhealthy"; since?: string | undefined }) {
  return (
    <>
      <span class={`badge ${props.status}`}>{props.status === "healthy" ? "Healthy" : "Unhealthy"}</span>
      {props.since !== undefined && (
        <span class="since">
          {" "}
          since <Moment at={props.since} />
        </span>
      )}
    </>
  );
}

function AddProvider(props: { tenant: string; onAdded: () => void }) {
  const [id, setId] = useState("");
  const [url, setUrl] = useState("");
  const [prefix, setPrefix] = useState("");
  const [json, setJson] = useState("");
  const action = useAction();
  const save = (body: Schemas["Provider"]) =>
    action.run(async () => {
      await must(api.POST("/tenants/{tenant}/providers", { ...path(props.tenant), body }));
      props.onAdded();
      return `Provider ${body.id} added`;
    });
  const submit = (event: Event) => {
    event.preventDefault();
    void save({ id, kind: "mcp", url, ...(prefix ? { prefix } : {}) });
  };
  const submitJson = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = parseJson(json, "The provider") as Schemas["Provider"];
      await must(api.POST("/tenants/{tenant}/providers", { ...path(props.tenant), body }));
      props.onAdded();
      return `Provider ${body.id} added`;
    });
  };
  return (
    <section aria-labelledby="add-provider">
      <h2 id="add-provider">Add an MCP server</h2>
      <form onSubmit={submit} class="row">
        <label>
          Provider id
          <input required value={id} onInput={(e) => setId(e.currentTarget.value)} />
        </label>
        <label>
          MCP URL
          <input required type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Name prefix (optional)
          <input value={prefix} onInput={(e) => setPrefix(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Add provider
        </button>
      </form>
      <details>
        <summary>Any kind, as JSON</summary>
        <form onSubmit={submitJson}>
          <label>
            Provider (JSON, as the admin API takes it)
            <textarea rows={8} value={json} onInput={(e) => setJson(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Add provider from JSON
          </button>
        </form>
      </details>
      {action.message}
    </section>
  );
}

export function ProviderView(props: { tenant: string; provider: string }) {
  const { tenant, provider } = props;
  const record = useLoad(
    () => must(api.GET("/tenants/{tenant}/providers/{provider}", providerPath(tenant, provider))),
    [tenant, provider],
  );
  const health = useLoad(
    () => must(api.GET("/tenants/{tenant}/providers/{provider}/health", providerPath(tenant, provider))),
    [tenant, provider],
    HEALTH_POLL_MS,
  );
  const catalog = useLoad(() => must(api.GET("/tenants/{tenant}/catalog", path(tenant))), [tenant]);
  const action = useAction();
  const refresh = () =>
    action.run(async () => {
      await must(api.POST("/tenants/{tenant}/providers/{provider}/refresh", providerPath(tenant, provider)));
      catalog.reload();
      health.reload();
      return "Lists read again from the upstream";
    });
  const remove = () =>
    action.run(async () => {
      if (!window.confirm(`Delete the provider ${provider}?`)) return undefined;
      await must(
        api.DELETE("/tenants/{tenant}/providers/{provider}", {
          params: { path: { tenant, provider }, header: {} },
        }),
      );
      navigate(`/t/${encodeURIComponent(tenant)}/providers`);
      return `Provider ${provider} deleted`;
    });
  return (
    <>
      <h2>Provider {provider}</h2>
      <div class="buttons">
        <button type="button" onClick={() => void refresh()} disabled={action.busy}>
          Refresh lists
        </button>
        <button type="button" class="danger" onClick={() => void remove()} disabled={action.busy}>
          Delete provider
        </button>
      </div>
      {action.message}
      <section aria-labelledby="health">
        <h3 id="health">Health</h3>
        <Loading loaded={health}>
          {(h) => (
            <dl>
              <dt>Status</dt>
              <dd>
                <HealthBadge status={h.status} since={h.since} /> {h.reason ?? ""}
              </dd>
              {h.since !== undefined && (
                <>
                  <dt>Since</dt>
                  <dd>
                    <When at={h.since} />
                  </dd>
                </>
              )}
              <dt>Checked</dt>
              <dd>
                <When at={h.checkedAt} />
              </dd>
              {h.latencyMs !== undefined && (
                <>
                  <dt>Latency</dt>
                  <dd>{h.latencyMs} ms</dd>
                </>
              )}
              {h.breaker && (
                <>
                  <dt>Circuit breaker</dt>
                  <dd>
                    <Json value={h.breaker} />
                  </dd>
                </>
              )}
            </dl>
          )}
        </Loading>
      </section>
      <section aria-labelledby="catalog">
        <h3 id="catalog">Catalog</h3>
        <Loading loaded={catalog}>{(c) => <ProviderCatalog catalog={c} provider={provider} />}</Loading>
      </section>
      <section aria-labelledby="record">
        <h3 id="record">Configuration</h3>
        <Loading loaded={record}>{(r) => <Json value={r} />}</Loading>
      </section>
    </>
  );
}

type Entry = { name?: string; uri?: string; uriTemplate?: string; title?: string; description?: string };

function ProviderCatalog(props: { catalog: Schemas["Catalog"]; provider: string }) {
  const mine = (list: Schemas["CatalogEntry"][]) =>
    list.filter((e) => e.provider === props.provider).map((e) => e.entry as Entry);
  const kinds: [string, Entry[]][] = [
    ["Tools", mine(props.catalog.tools)],
    ["Prompts", mine(props.catalog.prompts)],
    ["Resources", mine(props.catalog.resources)],
    ["Resource templates", mine(props.catalog.resourceTemplates)],
  ];
  return (
    <>
      {kinds.map(([caption, entries]) => (
        <Table
          caption={caption}
          headers={["Name", "Description"]}
          rows={entries.map((e) => [
            <code>{e.name ?? e.uri ?? e.uriTemplate ?? ""}</code>,
            e.title ?? e.description ?? "",
          ])}
          empty={`No ${caption.toLowerCase()}.`}
        />
      ))}
    </>
  );
}
