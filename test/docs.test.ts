// docs/ stays true: the generated configuration table is current and every error code is documented.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { it } from "node:test";
import { ErrorCodes } from "../src/protocol/errors.js";
import { RpcCode } from "../src/protocol/codes.js";
import { CONFIG_DOC, withGeneratedTable } from "./support/generate-docs.js";

it("docs/configuration.md carries the current configuration table (npm run docs)", async () => {
  const doc = await readFile(CONFIG_DOC, "utf8");
  assert.equal(doc, withGeneratedTable(doc), "the table is stale: run `npm run docs`");
});

it("docs/errors.md documents every error code", async () => {
  const doc = await readFile(new URL("../docs/errors.md", import.meta.url), "utf8");
  for (const code of Object.keys(ErrorCodes))
    assert.ok(doc.includes(`\`${code}\``), `${code} is missing from docs/errors.md`);
});

it("docs/errors.md lists every JSON-RPC code of src/protocol/codes.ts", async () => {
  const doc = await readFile(new URL("../docs/errors.md", import.meta.url), "utf8");
  for (const [name, code] of Object.entries(RpcCode))
    assert.match(
      doc,
      new RegExp(`^\\| \`${name}\` \\| ${code} \\|`, "m"),
      `${name} (${code}) is missing from docs/errors.md`,
    );
});

it("docs/clients.md cites tests that exist, and never tells users to npx portico", async () => {
  const doc = await readFile(new URL("../docs/clients.md", import.meta.url), "utf8");
  const cited = [...doc.matchAll(/`(test\/[\w/.-]+\.test\.ts)`/g)].map((m) => m[1]!);
  assert.ok(cited.length >= 5, "the guides cite the tests that run them");
  for (const path of new Set(cited))
    assert.ok(
      existsSync(new URL(`../${path}`, import.meta.url)),
      `docs/clients.md cites ${path}, which does not exist`,
    );
  // The package is private; the public name `portico` belongs to someone else (docs/clients.md).
  for (const line of doc.split("\n").filter((l) => /npx\s+(-y\s+)?portico\b/.test(l)))
    assert.match(line, /never/i, `docs/clients.md must not tell users to run npx portico: ${line}`);
});
