// The layout docs/architecture.md §7 describes stays true: the layers of src/ (held by
// dependency-cruiser with .dependency-cruiser.cjs, in `npm run lint` and here), JSON-RPC codes
// spelled in one place, and the forwarding path free of the SDK's client machinery.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CRUISER = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");

/** Code without its comments and string literals: what is left is what runs. */
function codeOnly(text: string): string {
  return text.replace(
    /\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`/g,
    " ",
  );
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

/** The layer rules' violations in the `src/` below `dir`, as `rule: from -> to`. */
async function violations(dir: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [CRUISER, "src", "--config", join(ROOT, ".dependency-cruiser.cjs"), "--output-type", "json"],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" })); // exit 1 on violations
  const result = JSON.parse(stdout) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

describe("source layout", () => {
  it("src/ keeps its layers: no import cycle, no import upwards, no other layer's internals", async () => {
    assert.deepEqual(await violations(ROOT), [], "docs/architecture.md, Layers");
  });

  it("the layer rules catch a breach, a cycle, a foreign subfolder, lanes that meet and the console app mixed with the server (test/fixtures/tangled)", async () => {
    assert.deepEqual(await violations(join(ROOT, "test/fixtures/tangled")), [
      "console-app-alone: src/console/app/view.ts -> src/store/cache.ts",
      "console-app-apart: src/console/serve.ts -> src/console/app/view.ts",
      "lanes-apart: src/mcp/session/stream.ts -> src/mcp/stateless/held.ts",
      "layer-store: src/store/cache.ts -> src/mcp/session.ts",
      "no-circular: src/mcp/session.ts -> src/store/cache.ts",
      "no-foreign-internals: src/mcp/session.ts -> src/providers/inner/detail.ts",
    ]);
  });

  it("no file but src/protocol/codes.ts spells a JSON-RPC code out", async () => {
    const raw: string[] = [];
    for (const file of await sourceFiles("src")) {
      if (file === "src/protocol/codes.ts") continue;
      const code = codeOnly(await readFile(join(ROOT, file), "utf8"));
      for (const m of code.matchAll(/-\s*32[0-9]{3}\b/g)) raw.push(`${file}: ${m[0]}`);
    }
    assert.deepEqual(raw, [], "name these codes with RpcCode (src/protocol/codes.ts)");
  });

  it("the code scan sees a raw code in code, not in comments or strings", () => {
    const text = [
      "// -32600 in a comment",
      "/* -32601 in a block */",
      'const a = "-32602 in a string";',
      "const b = `-32603 in a template`;",
      "const c = -32001;",
    ].join("\n");
    assert.deepEqual(
      [...codeOnly(text).matchAll(/-\s*32[0-9]{3}\b/g)].map((m) => m[0]),
      ["-32001"],
    );
  });

  it("the forwarding path uses no SDK client, protocol or transport, no fetch call and no WHATWG stream", async () => {
    const found: string[] = [];
    for (const file of await sourceFiles("src")) {
      const text = await readFile(join(ROOT, file), "utf8");
      for (const m of text.matchAll(/from\s+["'](@modelcontextprotocol\/sdk\/[^"']+)["']/g))
        if (m[1] !== "@modelcontextprotocol/sdk/types.js") found.push(`${file} imports ${m[1]}`);
      if (!/^src\/providers\/mcp/.test(file)) continue;
      const code = codeOnly(text);
      for (const m of code.matchAll(
        /\b(fetch(?=\s*\()|ReadableStream|WritableStream|TransformStream|Response|TextDecoder)\b/g,
      ))
        found.push(`${file} uses ${m[1]}`);
    }
    assert.deepEqual(
      found,
      [],
      "upstream MCP traffic goes through undici's dispatcher (docs/upstream-mcp.md)",
    );
  });

  it("docs/architecture.md §7 and the README's layout name every folder of src/", async () => {
    const folders = (await readdir(join(ROOT, "src"), { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    const architecture = await readFile(join(ROOT, "docs/architecture.md"), "utf8");
    const layout = architecture.slice(architecture.indexOf("## 7. Layout"));
    const readme = await readFile(join(ROOT, "README.md"), "utf8");
    for (const folder of folders) {
      assert.match(layout, new RegExp(`^  ${folder}/ `, "m"), `docs/architecture.md §7 lacks src/${folder}/`);
      assert.ok(readme.includes(`\`src/${folder}\``), `README.md's layout lacks src/${folder}`);
    }
  });
});
