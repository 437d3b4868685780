// The deployment files (Dockerfile, docker-compose.yml, deploy/**) keep the properties operations
// rely on: a non-root image with a health check, two replicas on one Redis with AOF, probes and
// grace periods that fit the shutdown deadline, alerts with runbooks, and only documented metrics.
// Static checks, no network; CI also runs docker-compose, kubectl kustomize and promtool on them.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { loadBootstrapFile } from "../../src/config/bootstrap.js";
import { ENV_VARS } from "../../src/config/env.js";

const root = new URL("../../", import.meta.url);
const read = (path: string) => readFile(new URL(path, root), "utf8");

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens. */
function anchors(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!);
  return new Set(
    headings.map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-"),
    ),
  );
}

/** The `expr:` of each rule in a rules file (single-line or `|` block). */
function ruleExpressions(yaml: string): string[] {
  const out: string[] = [];
  const lines = yaml.split("\n");
  lines.forEach((line, i) => {
    const m = /^(\s*)expr: (.*)$/.exec(line);
    if (!m) return;
    if (m[2] !== "|") return void out.push(m[2]!);
    const body: string[] = [];
    for (
      let j = i + 1;
      j < lines.length && (lines[j]!.trim() === "" || indent(lines[j]!) > m[1]!.length);
      j++
    )
      body.push(lines[j]!);
    out.push(body.join("\n"));
  });
  return out;
}

const indent = (line: string) => line.length - line.trimStart().length;

/** Metric names a PromQL expression reads. */
function metricNames(expr: string): string[] {
  const names = expr.match(/\b(?:portico|process|nodejs)_[a-z0-9_]+\b/g) ?? [];
  return /\bup\{/.test(expr) ? [...names, "up"] : names;
}

/** Checks a name against docs/metrics.md (histogram series and the prom-client prefixes included). */
async function documentedMetric(): Promise<(name: string) => boolean> {
  const doc = await read("docs/metrics.md");
  const rows = [...doc.matchAll(/^\| `([a-z0-9_*]+)`(?:, `([a-z0-9_*]+)`)? \|/gm)].flatMap((m) =>
    [m[1], m[2]].filter((n): n is string => n !== undefined),
  );
  const exact = new Set(rows.filter((n) => !n.endsWith("*")));
  const prefixes = rows.filter((n) => n.endsWith("*")).map((n) => n.slice(0, -1));
  return (name) => {
    if (name === "up") return true; // Prometheus's own per-target series
    const base = name.replace(/_(bucket|sum|count)$/, "");
    return exact.has(name) || exact.has(base) || prefixes.some((p) => name.startsWith(p));
  };
}

/** The `KEY=value` literals of the kustomization's portico-config ConfigMap. */
async function configLiterals(): Promise<Map<string, string>> {
  const kustomization = await read("deploy/k8s/kustomization.yaml");
  return new Map(
    [...kustomization.matchAll(/^\s+- (PORTICO_[A-Z_]+|NODE_OPTIONS)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
}

describe("Dockerfile", () => {
  it("builds with npm ci, ships production dependencies only, and runs the portico command (serve) as non-root", async () => {
    const dockerfile = await read("Dockerfile");
    const stages = dockerfile.split(/^FROM /m).slice(1);
    assert.ok(stages.length >= 2, "a multi-stage build");
    assert.match(dockerfile, /^ARG NODE_IMAGE=node:24-(bookworm-)?slim$/m);
    assert.ok(stages.some((s) => /RUN npm ci\b/.test(s) && /RUN npm run build/.test(s)));
    assert.ok(stages.some((s) => /RUN npm ci --omit=dev/.test(s)));
    const runtime = stages.at(-1)!;
    const user = /^USER (\S+)$/m.exec(runtime)?.[1];
    assert.ok(user !== undefined && !/^(root|0)(:|$)/.test(user), `runtime user ${user} must not be root`);
    assert.match(runtime, /^HEALTHCHECK .*\n?.*\/healthz/m);
    assert.match(runtime, /HOST=0\.0\.0\.0/);
    assert.match(runtime, /PORT=8080/);
    assert.match(runtime, /^EXPOSE 8080$/m);
    assert.match(runtime, /^ENTRYPOINT \["node", "dist\/cli\.js"\]$/m);
    assert.match(runtime, /^CMD \["serve"\]$/m);
    assert.match(runtime, /^COPY --from=\w+ \/app\/node_modules/m);
    assert.doesNotMatch(runtime, /npm ci(?! --omit=dev)/, "no dev dependencies in the runtime stage");
  });

  it(".dockerignore keeps local state and secrets out of the build context", async () => {
    const entries = (await read(".dockerignore")).split("\n").map((l) => l.trim());
    for (const entry of [".git", "node_modules", "dist", ".cache", ".env"])
      assert.ok(entries.includes(entry), `${entry} is ignored`);
  });
});

describe("docker-compose.yml", () => {
  it("runs two replicas from one definition on Redis with AOF, behind the load balancer", async () => {
    const compose = await read("docker-compose.yml");
    assert.match(compose, /^ {2}portico-1:\n {4}<<: \*portico$/m);
    assert.match(compose, /^ {2}portico-2:\n {4}<<: \*portico$/m);
    const anchor = compose.slice(compose.indexOf("x-portico: &portico"), compose.indexOf("\nservices:"));
    for (const v of ["PORTICO_REDIS_URL: redis://redis:6379", "PORTICO_SECRET_KEY:", "PORTICO_ADMIN_TOKEN:"])
      assert.ok(anchor.includes(v), `the shared definition sets ${v}`);
    assert.match(anchor, /PORTICO_PUBLIC_URL: http:\/\/localhost:8080/);
    assert.match(compose, /"--appendonly", "yes"/);
    assert.match(compose, /- redis-data:\/data/);
    assert.match(compose, /"127\.0\.0\.1:8080:8080"/);
    for (const name of compose.matchAll(/^ {4}(PORTICO_[A-Z_]+):/gm))
      assert.ok(
        ENV_VARS.some((v) => v.name === name[1]),
        `${name[1]} is a Portico setting (src/config/env.ts)`,
      );
  });

  it("balances round-robin without stickiness and streams SSE unbuffered", async () => {
    const nginx = await read("deploy/compose/nginx.conf");
    const upstream = /upstream portico \{([^}]*)\}/.exec(nginx)?.[1] ?? "";
    assert.match(upstream, /server portico-1:8080/);
    assert.match(upstream, /server portico-2:8080/);
    assert.doesNotMatch(upstream, /^\s*(ip_hash|hash|sticky|least_conn)\b/m);
    assert.match(nginx, /proxy_buffering off;/);
    const readTimeout = /proxy_read_timeout (\d+)(s|m|h);/.exec(nginx);
    assert.ok(readTimeout, "proxy_read_timeout is set");
    const seconds = Number(readTimeout[1]) * { s: 1, m: 60, h: 3600 }[readTimeout[2] as "s" | "m" | "h"];
    assert.ok(seconds > 25, "longer than the SSE heartbeat (PORTICO_SSE_HEARTBEAT_MS, 25 s)");
    assert.match(nginx, /location = \/metrics \{\s*return 404;/);
  });

  it("seeds a valid bootstrap file whose upstream is the compose `everything` service", async () => {
    const tenants = await loadBootstrapFile(new URL("deploy/compose/portico.json", root).pathname);
    const providers = tenants.find((t) => t.id === "demo")?.providers ?? [];
    const mcp = providers.find((p) => p.kind === "mcp") as { url?: string } | undefined;
    assert.equal(mcp?.url, "http://everything:3001/mcp");
    const compose = await read("docker-compose.yml");
    assert.match(compose, /^ {2}everything:\n(?: {4}.*\n)*? {6}PORT: "3001"$/m);
  });

  it("has Prometheus scrape both replicas directly", async () => {
    const prometheus = await read("deploy/prometheus/prometheus.yml");
    assert.match(prometheus, /targets: \["portico-1:8080", "portico-2:8080"\]/);
    assert.match(prometheus, /rule_files:\n\s+- alerts\.yml/);
  });
});

describe("deploy/k8s", () => {
  it("lists every manifest in the kustomization", async () => {
    const kustomization = await read("deploy/k8s/kustomization.yaml");
    const files = (await readdir(new URL("deploy/k8s/", root))).filter(
      (f) => f.endsWith(".yaml") && f !== "kustomization.yaml",
    );
    for (const f of files) assert.match(kustomization, new RegExp(`^  - ${f.replace(".", "\\.")}$`, "m"));
    for (const name of (await configLiterals()).keys())
      if (name.startsWith("PORTICO_"))
        assert.ok(
          ENV_VARS.some((v) => v.name === name),
          `${name} is a Portico setting`,
        );
  });

  it("runs ≥ 2 hardened replicas with probes, spread over nodes", async () => {
    const deployment = await read("deploy/k8s/deployment.yaml");
    assert.ok(Number(/^ {2}replicas: (\d+)$/m.exec(deployment)?.[1]) >= 2);
    assert.match(deployment, /readinessProbe:\n\s+httpGet:\n\s+path: \/readyz/);
    assert.match(deployment, /livenessProbe:\n\s+httpGet:\n\s+path: \/healthz/);
    assert.match(deployment, /runAsNonRoot: true/);
    assert.match(deployment, /readOnlyRootFilesystem: true/);
    assert.match(deployment, /allowPrivilegeEscalation: false/);
    assert.match(
      deployment,
      /podAntiAffinity:\n(?:\s+#.*\n)*\s+preferredDuringSchedulingIgnoredDuringExecution:/,
    );
    assert.match(deployment, /enableServiceLinks: false/);
    assert.match(deployment, /resources:\n\s+requests:/);
  });

  it("gives a terminating pod more time than its shutdown delay plus the shutdown deadline", async () => {
    const deployment = await read("deploy/k8s/deployment.yaml");
    const grace = Number(/terminationGracePeriodSeconds: (\d+)/.exec(deployment)?.[1]);
    const literals = await configLiterals();
    const setting = (name: string) =>
      Number(literals.get(name) ?? ENV_VARS.find((v) => v.name === name)?.default);
    const delaySeconds = setting("PORTICO_SHUTDOWN_DELAY_SECONDS");
    const deadlineSeconds = setting("PORTICO_SHUTDOWN_TIMEOUT_MS") / 1000;
    assert.ok(delaySeconds >= 5, "the shutdown delay lets endpoint removal propagate");
    assert.doesNotMatch(deployment, /preStop:/, "the delay is Portico's own: no preStop sleep on top");
    assert.ok(
      grace > delaySeconds + deadlineSeconds,
      `${grace} s > ${delaySeconds} s + ${deadlineSeconds} s`,
    );
    const readiness =
      /readinessProbe:\n(?:\s+.*\n)*?\s+periodSeconds: (\d+)\n(?:\s+.*\n)*?\s+failureThreshold: (\d+)/.exec(
        deployment,
      );
    const notReadyWithin = Number(readiness?.[1]) * Number(readiness?.[2]);
    assert.ok(notReadyWithin < delaySeconds, `readiness fails within ${notReadyWithin} s, inside the delay`);
  });

  it("keeps a replica through disruptions, scales on CPU, and marks the Redis as for trials", async () => {
    assert.match(await read("deploy/k8s/pdb.yaml"), /minAvailable: 1/);
    const hpa = await read("deploy/k8s/hpa.yaml");
    assert.match(hpa, /^apiVersion: autoscaling\/v2$/m);
    assert.match(hpa, /name: cpu/);
    assert.ok(Number(/minReplicas: (\d+)/.exec(hpa)?.[1]) >= 2);
    const redis = await read("deploy/k8s/redis-trial.yaml");
    assert.match(redis, /FOR TRIALS ONLY/);
    assert.match(redis, /- --appendonly\n\s+- "yes"/);
    assert.match(redis, /volumeClaimTemplates:/);
  });

  it("seeds a valid bootstrap file and ships only placeholder secrets", async () => {
    await loadBootstrapFile(new URL("deploy/k8s/bootstrap.json", root).pathname);
    const secret = await read("deploy/k8s/secret.yaml");
    for (const key of ["PORTICO_SECRET_KEY", "PORTICO_ADMIN_TOKEN"])
      assert.match(secret, new RegExp(`^  ${key}: REPLACE-ME$`, "m"), `${key} is a placeholder`);
  });
});

describe("alerts and dashboard", () => {
  const required = [
    "PorticoHighErrorRatio",
    "PorticoHighLatencyP99",
    "PorticoUpstreamDown",
    "PorticoUpstreamFailing",
    "PorticoTasksFailing",
    "PorticoRedisDown",
    "PorticoSessionsNearLimit",
  ];

  it("every alert has a summary, a description and a runbook section in docs/operations.md", async () => {
    const alerts = await read("deploy/prometheus/alerts.yml");
    const sections = anchors(await read("docs/operations.md"));
    const blocks = alerts.split(/^\s+- alert: /m).slice(1);
    const names = blocks.map((b) => b.slice(0, b.indexOf("\n")));
    for (const name of required) assert.ok(names.includes(name), `${name} is defined`);
    for (const block of blocks) {
      const name = block.slice(0, block.indexOf("\n"));
      assert.match(block, /^\s+summary: /m, `${name} has a summary`);
      assert.match(block, /^\s+description: /m, `${name} has a description`);
      const runbook = /runbook_url: "docs\/operations\.md#([^"]+)"/.exec(block)?.[1];
      assert.equal(runbook, name.toLowerCase(), `${name} links its own runbook section`);
      assert.ok(sections.has(runbook), `docs/operations.md has a section #${runbook}`);
    }
  });

  it("every docs/operations.md link in the deployment files names a section that exists", async () => {
    const sections = anchors(await read("docs/operations.md"));
    const files = [
      "docker-compose.yml",
      "deploy/k8s/kustomization.yaml",
      "deploy/k8s/secret.yaml",
      "deploy/k8s/redis-trial.yaml",
      "deploy/k8s-external-redis/kustomization.yaml",
      "deploy/prometheus/prometheus.yml",
      "deploy/prometheus/prometheus-k8s.yml",
    ];
    for (const file of files)
      for (const m of (await read(file)).matchAll(/docs\/operations\.md#([\w-]+)/g))
        assert.ok(sections.has(m[1]!), `${file} links #${m[1]}, a section docs/operations.md lacks`);
  });

  it("uses only metrics that docs/metrics.md documents", async () => {
    const documented = await documentedMetric();
    const dashboard = JSON.parse(await read("deploy/grafana/portico-dashboard.json")) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const sources = [
      ...ruleExpressions(await read("deploy/prometheus/alerts.yml")).map((e) => ["alerts.yml", e] as const),
      ...dashboard.panels.flatMap((p) =>
        (p.targets ?? []).map((t) => [`panel "${p.title}"`, t.expr] as const),
      ),
    ];
    assert.ok(sources.length > 20);
    for (const [where, expr] of sources)
      for (const name of metricNames(expr))
        assert.ok(documented(name), `${where}: ${name} is not documented`);
  });

  it("the dashboard covers traffic, latency, sessions, streams, upstreams, tasks, OAuth, rate limits and Redis", async () => {
    const text = await read("deploy/grafana/portico-dashboard.json");
    const dashboard = JSON.parse(text) as { uid: string; panels: { datasource?: { uid: string } }[] };
    assert.equal(dashboard.uid, "portico");
    for (const metric of [
      "portico_http_requests_total",
      "portico_mcp_request_duration_seconds_bucket",
      "portico_sessions_open",
      "portico_sse_streams_open",
      "portico_upstream_requests_total",
      "portico_provider_up",
      "portico_tasks_ended_total",
      "portico_oauth_events_total",
      "portico_rate_limited_total",
      "portico_store_up",
    ])
      assert.ok(text.includes(metric), `a panel shows ${metric}`);
    for (const panel of dashboard.panels.filter((p) => p.datasource))
      assert.equal(panel.datasource!.uid, "${datasource}", "panels follow the data source variable");
  });
});
