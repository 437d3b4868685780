// The layout docs/architecture.md §7 describes stays true: no file in src/ past 400 lines, and the
// vocabulary both directions share (src/protocol/) sits below the inbound endpoint (src/mcp/) and
// the upstream providers (src/providers/), which never import each other's way up.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MAX_LINES = 400;

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

/** The relative modules a file imports (static, re-exported or dynamic), as paths from the root. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map(
    (m) => m[1]!,
  );
  return specifiers.map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

async function importsBetween(from: string, to: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sourceFiles(from)) {
    const text = await readFile(join(ROOT, file), "utf8");
    for (const target of importsOf(file, text))
      if (target.startsWith(`${to}/`) || target === to) found.push(`${file} imports ${target}`);
  }
  return found;
}

describe("source layout", () => {
  it(`no file in src/ is over ${MAX_LINES} lines`, async () => {
    const over: string[] = [];
    for (const file of await sourceFiles("src")) {
      const text = await readFile(join(ROOT, file), "utf8");
      const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
      if (lines > MAX_LINES) over.push(`${file}: ${lines} lines`);
    }
    assert.deepEqual(over, [], `split these files (docs/architecture.md §7):\n${over.join("\n")}`);
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

  it("src/providers/ imports nothing from src/mcp/", async () => {
    assert.deepEqual(await importsBetween("src/providers", "src/mcp"), []);
  });

  it("src/protocol/ imports nothing from src/mcp/ or src/providers/", async () => {
    const found = [
      ...(await importsBetween("src/protocol", "src/mcp")),
      ...(await importsBetween("src/protocol", "src/providers")),
    ];
    assert.deepEqual(found, []);
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

  it("the import scan sees an import from src/mcp/ when there is one", () => {
    // Guards the regex above: a check that finds nothing must be able to find something.
    const text = [
      'import type { Session } from "../mcp/sessions.js";',
      'export { x } from "../mcp/x.js";',
      'const m = await import("../mcp/y.js");',
      'import { z } from "./z.js";',
    ].join("\n");
    assert.deepEqual(importsOf("src/providers/a.ts", text), [
      "src/mcp/sessions.js",
      "src/mcp/x.js",
      "src/mcp/y.js",
      "src/providers/z.js",
    ]);
  });
});
