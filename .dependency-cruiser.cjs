// The layers of src/ (docs/architecture.md, "Layers"), held by `npm run lint`: a folder imports only
// folders below it, nothing imports in a circle (type-only imports count), and a folder's
// subfolders are its own business. Bottom first; the files at src/'s root are the process itself.
const LAYERS = [
  "protocol",
  "logs",
  "crypto",
  "html",
  "egress",
  "store",
  "metrics",
  "limits",
  "records",
  "config",
  "connect",
  "providers",
  "audit",
  "policy",
  "tenants",
  "auth",
  "oauth",
  "accounts",
  "mcp",
  "admin",
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
    {
      name: "eras-apart",
      comment:
        "The upstream MCP client's session-era part and its 2026-07-28 part never import each other: what both use lives beside them in providers/mcp/.",
      severity: "error",
      from: { path: "^src/providers/mcp/(session|stateless)/" },
      to: { path: "^src/providers/mcp/(session|stateless)/", pathNot: "^src/providers/mcp/$1/" },
    },
    {
      name: "lanes-apart",
      comment:
        "The MCP endpoint's session lane and its stateless (2026-07-28) lane never import each other: what both use lives in src/mcp/ itself.",
      severity: "error",
      from: { path: "^src/mcp/(session|stateless)/" },
      to: { path: "^src/mcp/(session|stateless)/", pathNot: "^src/mcp/$1/" },
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
