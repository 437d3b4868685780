// `npm run docs`: regenerates what is derived from code: the configuration table of
// docs/configuration.md and the admin API's OpenAPI document. Tests fail when either is stale.
import { readFile, writeFile } from "node:fs/promises";
import { openApiDocument } from "../../src/admin/openapi/document.js";
import { configTableMarkdown } from "../../src/config/env.js";

export const CONFIG_DOC = new URL("../../docs/configuration.md", import.meta.url);
const BEGIN = "<!-- BEGIN GENERATED: configTableMarkdown() -->";
const END = "<!-- END GENERATED -->";

/** The document with its generated section replaced by the current table. */
export function withGeneratedTable(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the ${BEGIN} … ${END} markers`);
  return `${doc.slice(0, start + BEGIN.length)}\n${configTableMarkdown()}\n${doc.slice(end)}`;
}

export const OPENAPI_DOC = new URL("../../openapi/portico-admin.json", import.meta.url);

/** The OpenAPI document as committed. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = await readFile(CONFIG_DOC, "utf8");
  await writeFile(CONFIG_DOC, withGeneratedTable(doc));
  console.log("docs/configuration.md: configuration table regenerated");
  await writeFile(OPENAPI_DOC, openApiText());
  console.log("openapi/portico-admin.json: regenerated");
}
