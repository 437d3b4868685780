// What an upstream lists, entry by entry: an entry that breaks the MCP schema's rules for its kind
// (a tool without an object inputSchema of type "object", a null, a nameless prompt, a resource
// without a uri, a field of the wrong type) is left out on its own, so one bad entry neither hides
// the rest of its list nor breaks the clients that check what Portico lists. The rules are the
// schema's own, of both eras, and no stricter: what a revision allows (a date in any form, a
// boolean subschema, an outputSchema of any JSON Schema) is kept.
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { isObject } from "../records/fields.js";

interface Entries {
  tools: Tool;
  prompts: Prompt;
  resources: Resource;
  resourceTemplates: ResourceTemplate;
}

/** The lists an upstream serves, by their field in a list result. */
export type EntryKind = keyof Entries;

type Fields = Record<string, unknown>;

const VALID: { readonly [K in keyof Entries]: (entry: Fields) => boolean } = {
  tools: (t) =>
    nonEmpty(t.name) &&
    isObject(t.inputSchema) &&
    t.inputSchema.type === "object" &&
    optional(t.outputSchema, isObject) &&
    optional(t.annotations, isObject) &&
    common(t),
  prompts: (p) =>
    nonEmpty(p.name) &&
    optional(
      p.arguments,
      (args) => Array.isArray(args) && args.every((a) => isObject(a) && nonEmpty(a.name)),
    ) &&
    common(p),
  resources: (r) =>
    nonEmpty(r.uri) &&
    typeof r.name === "string" &&
    optional(r.mimeType, isString) &&
    optional(r.size, (n) => typeof n === "number") &&
    optional(r.annotations, isObject) &&
    common(r),
  resourceTemplates: (r) =>
    nonEmpty(r.uriTemplate) &&
    typeof r.name === "string" &&
    optional(r.mimeType, isString) &&
    optional(r.annotations, isObject) &&
    common(r),
};

/** The valid entries of one page's `items` (as the upstream sent them), in order. */
export function validEntries<K extends EntryKind>(kind: K, items: unknown): Array<Entries[K]> {
  if (!Array.isArray(items)) return [];
  const valid = VALID[kind];
  return items.filter((item): item is Entries[K] => isObject(item) && valid(item));
}

/** True for an outputSchema a session-era client would refuse (no `type: "object"` at its root). */
export function hasLooseOutputSchema(tool: Tool): boolean {
  return tool.outputSchema !== undefined && tool.outputSchema.type !== "object";
}

/** Fields every kind may carry. */
function common(entry: Fields): boolean {
  return (
    optional(entry.title, isString) &&
    optional(entry.description, isString) &&
    optional(entry.icons, Array.isArray) &&
    optional(entry._meta, isObject)
  );
}

function optional(value: unknown, check: (v: unknown) => boolean): boolean {
  return value === undefined || check(value);
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

function nonEmpty(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}
