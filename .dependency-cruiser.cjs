// The layers of src/ (docs/architecture.md, "Layers"), held by `npm run lint`: a folder imports only
// folders below it, nothing imports in a circle (type-only imports count), and a folder's
// subfolders are its own business. Bottom first; the files at src/'s root are the process itself.
const LAYERS = [
  "protocol",
  "logs",
  "tracing",
  "crypto",
  "html",
  "search",
  "egress",
  "store",
  "metrics",
  "limits",
  "records",
  "config",
  "connect",
  "providers",
  "tasks",
  "audit",
  "policy",
  "tenants",
  "auth",
  "oauth",
  "accounts",
  "mcp",
  "admin",
  "console",
];

const folder = (name) => `^src/${name}/`;

/** For each layer, the rule that it imports nothing above it. */
const layerRules = LAYERS.map((name, index) => ({
  name: `layer-${name}`,
  comment: `src/${name}/ may import only the layers below it: ${LAYERS.slice(0, index).join(", ") || "none"}`,
  severity: "error",
  from: { path: folder(name) },
  to: { path: [...LAYERS.slice(index + 1).map(folder), "^src/[^/]+\\.ts$"] },
}));

/**
 * The rule that `base`/session/ (the session era) and `base`/stateless/ (2026-07-28) never import
 * each other: what both use lives in `base` itself.
 */
const eraApart = (name, base, whose) => ({
  name,
  comment: `${whose} session-era part (${base}/session/) and 2026-07-28 part (${base}/stateless/) never import each other: what both use lives in ${base}/.`,
  severity: "error",
  from: { path: `^${base}/(session|stateless)/` },
  to: { path: `^${base}/(session|stateless)/`, pathNot: `^${base}/$1/` },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "An import cycle, type-only imports included: break it where the concept splits.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    // Each era has its own subfolder where both are served; neither imports the other's.
    eraApart("eras-apart", "src/providers/mcp", "The upstream MCP client's"),
    eraApart("lanes-apart", "src/mcp", "The MCP endpoint's"),
    // The console's browser app (docs/console.md) is built by Vite for the browser: the server never
    // imports it, and it imports nothing of the server (it reaches the server only over /admin/v1).
    {
      name: "console-app-apart",
      comment:
        "src/console/app/ is browser code: nothing outside it imports it, and it imports nothing of the server.",
      severity: "error",
      from: { pathNot: "^src/console/app/" },
      to: { path: "^src/console/app/" },
    },
    {
      name: "console-app-alone",
      comment:
        "src/console/app/ is browser code: it imports nothing of src/ outside it (it talks to /admin/v1).",
      severity: "error",
      from: { path: "^src/console/app/" },
      to: { path: "^src/", pathNot: "^src/console/app/" },
    },
    {
      name: "no-foreign-internals",
      comment:
        "A subfolder (src/<layer>/<part>/) is its layer's internals: only files of that layer import it.",
      severity: "error",
      from: { path: "^src/([^/]+)/" },
      to: { path: "^src/([^/]+)/[^/]+/", pathNot: "^src/$1/" },
    },
  ],
  options: {
    // Type-only imports are followed too: a cycle of types is still a tangle for the reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)node_modules/" },
  },
};
