// The traffic overview (GET /admin/v1/traffic): requests, errors and latency percentiles per
// tenant and provider over the last hour, drawn with uPlot. Its source is said in words: Prometheus
// (every replica) or this replica's own figures.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { api, must } from "../api";
import { Loading, Table, useLoad } from "../ui";

const traffic = (minutes: number, tenant: string | undefined) =>
  must(api.GET("/traffic", { params: { query: { minutes, ...(tenant ? { tenant } : {}) } } }));

/** One line of a chart: a rate series as the typed client reads the API's `Traffic`, or a latency percentile's. */
type Series = Awaited<ReturnType<typeof traffic>>["requests"][number];

const TRAFFIC_POLL_MS = 15000;
const COLOURS = ["#0b62c4", "#b3261e", "#1a7f37", "#8250df", "#9a6700", "#0e7c86", "#c4320a", "#4d5562"];

export function TrafficView(props: { tenant?: string }) {
  const { tenant } = props;
  const [minutes, setMinutes] = useState(60);
  const loaded = useLoad(() => traffic(minutes, tenant), [tenant, minutes], TRAFFIC_POLL_MS);
  return (
    <>
      <label>
        Period
        <select value={String(minutes)} onChange={(e) => setMinutes(Number(e.currentTarget.value))}>
          <option value="15">Last 15 minutes</option>
          <option value="60">Last hour</option>
          <option value="360">Last 6 hours</option>
          <option value="1440">Last day</option>
        </select>
      </label>
      <Loading loaded={loaded}>
        {(t) => (
          <>
            <p class="source">
              {t.source === "prometheus"
                ? "Figures of every replica, from Prometheus."
                : `This replica's own figures${t.replica ? ` (${t.replica})` : ""}: other replicas' traffic is not included.`}
            </p>
            <Chart title="Requests per second" series={t.requests} unit="req/s" span={spanOf(t)} />
            <Chart title="Errors per second" series={t.errors} unit="errors/s" span={spanOf(t)} />
            <Chart
              title="Latency (seconds)"
              span={spanOf(t)}
              series={t.latency.map((l) => ({
                tenant: l.tenant,
                provider: `p${Number(l.quantile) * 100}`,
                points: l.points,
              }))}
              unit="s"
            />
          </>
        )}
      </Loading>
    </>
  );
}

/** The period asked for, in unix seconds: every chart spans all of it, however few points it has. */
const spanOf = (t: { from: string; to: string }): [number, number] => [
  Date.parse(t.from) / 1000,
  Date.parse(t.to) / 1000,
];

const label = (s: Series) => (s.provider ? `${s.tenant} / ${s.provider}` : s.tenant);

/** Series on one time axis: uPlot wants the union of timestamps, each series null where it has no point. */
function aligned(series: Series[]): uPlot.AlignedData {
  const times = [...new Set(series.flatMap((s) => s.points.map(([t]) => t!)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const columns = series.map((s) => {
    const column: (number | null)[] = times.map(() => null);
    for (const [t, v] of s.points) column[index.get(t!)!] = v ?? null;
    return column;
  });
  return [times, ...columns];
}

/** One chart, with a table of the latest values beside it for screen readers and exact figures. */
function Chart(props: { title: string; series: Series[]; unit: string; span: [number, number] }) {
  const box = useRef<HTMLDivElement>(null);
  const { series } = props;
  const [from, to] = props.span;
  useEffect(() => {
    const target = box.current;
    if (!target || series.length === 0) return;
    const width = Math.max(280, Math.min(target.clientWidth || 600, 960));
    const plot = new uPlot(
      {
        width,
        height: 220,
        series: [
          {},
          ...series.map((s, i) => ({
            label: label(s),
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            spanGaps: true,
          })),
        ],
        // Without a fixed range uPlot stretches a lone point's axis over years.
        scales: { x: { time: true, range: [from, to] } },
        axes: [{}, { label: props.unit }],
        legend: { live: false },
      },
      aligned(series),
      target,
    );
    const resize = () =>
      plot.setSize({ width: Math.max(280, Math.min(target.clientWidth, 960)), height: 220 });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      plot.destroy();
    };
  }, [series, props.unit, from, to]);
  const latest = (s: Series) => s.points[s.points.length - 1]?.[1];
  return (
    <section aria-label={props.title} class="chart">
      <h2>{props.title}</h2>
      {series.length === 0 ? (
        <p>No traffic in this period.</p>
      ) : (
        <>
          <div
            ref={box}
            role="img"
            aria-label={`${props.title}, chart of ${series.length} series over time`}
          />
          <Table
            caption={`${props.title}: latest values`}
            headers={["Series", `Latest (${props.unit})`]}
            rows={series.map((s) => [label(s), latest(s) === undefined ? "—" : latest(s)!.toPrecision(3)])}
          />
        </>
      )}
    </section>
  );
}
