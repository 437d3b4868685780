// Tool definitions awaiting approval (pinning, docs/security.md): per provider, what changed
// against the approved definition, and approving exactly the reviewed version (by digest).
import { api, must, type Schemas } from "../api";
import { Loading, Table, useAction, useLoad, When } from "../ui";

async function pinsOf(tenant: string): Promise<Schemas["Pins"][]> {
  const providers = (
    await must(
      api.GET("/tenants/{tenant}/providers", { params: { path: { tenant }, query: { limit: 100 } } }),
    )
  ).items;
  const mcp = providers.filter((p) => p.kind === "mcp");
  return Promise.all(
    mcp.map((p) =>
      must(
        api.GET("/tenants/{tenant}/providers/{provider}/pins", {
          params: { path: { tenant, provider: p.id } },
        }),
      ),
    ),
  );
}

const show = (value: unknown) => (value === undefined ? "—" : JSON.stringify(value));

export function PinsView(props: { tenant: string }) {
  const { tenant } = props;
  const pins = useLoad(() => pinsOf(tenant), [tenant]);
  const action = useAction();
  const approve = (provider: string, pending: Schemas["Pins"]["pending"]) =>
    action.run(async () => {
      const tools = pending.map((p) => ({ name: p.name, digest: p.digest }));
      await must(
        api.POST("/tenants/{tenant}/providers/{provider}/pins/approve", {
          params: { path: { tenant, provider } },
          body: { tools },
        }),
      );
      pins.reload();
      return `${tools.length === 1 ? tools[0]!.name : `${tools.length} definitions`} of ${provider} approved`;
    });
  return (
    <>
      {action.message}
      <Loading loaded={pins}>
        {(all) => {
          const waiting = all.filter((p) => p.pending.length > 0);
          if (waiting.length === 0) return <p>No tool definitions await approval.</p>;
          return waiting.map((p) => (
            <section aria-labelledby={`pins-${p.provider}`}>
              <h2 id={`pins-${p.provider}`}>
                {p.provider} (pinning {p.pinning})
              </h2>
              {p.pending.map((d) => (
                <article class="pending">
                  <h3>
                    <code>{d.name}</code> — {d.change === "new" ? "new" : "changed"}, seen{" "}
                    <When at={d.seenAt} />
                  </h3>
                  <Table
                    caption={`What differs in ${d.name}`}
                    headers={["Member", "Approved", "Served now"]}
                    rows={d.diff.map((c) => [
                      <code>{c.path}</code>,
                      <code>{show(c.before)}</code>,
                      <code>{show(c.after)}</code>,
                    ])}
                    empty="A new definition: nothing approved to compare with."
                  />
                  <button
                    type="button"
                    disabled={action.busy}
                    onClick={() => void approve(p.provider, [d])}
                    aria-label={`Approve ${d.name} of ${p.provider}`}
                  >
                    Approve
                  </button>
                </article>
              ))}
            </section>
          ));
        }}
      </Loading>
    </>
  );
}
