// `npm run docs`: regenerates the parts of docs/ that are derived from code (the configuration
// table). test/docs.test.ts fails when they are stale.
import { readFile, writeFile } from "node:fs/promises";
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = await readFile(CONFIG_DOC, "utf8");
  await writeFile(CONFIG_DOC, withGeneratedTable(doc));
  console.log("docs/configuration.md: configuration table regenerated");
}
