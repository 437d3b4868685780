// What an upstream lists, entry by entry: an entry that is not valid under the MCP schema (a tool
// without an object inputSchema, a null, a prompt without a name) is left out, so one bad entry
// neither hides the rest of its list nor breaks the clients that check what Portico lists.
import {
  PromptSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  ToolSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

interface Entries {
  tools: Tool;
  prompts: Prompt;
  resources: Resource;
  resourceTemplates: ResourceTemplate;
}

const SCHEMAS: { readonly [K in keyof Entries]: { safeParse(v: unknown): { success: boolean } } } = {
  tools: ToolSchema,
  prompts: PromptSchema,
  resources: ResourceSchema,
  resourceTemplates: ResourceTemplateSchema,
};

/** The valid entries of one page's `items` (as the upstream sent them), in order. */
export function validEntries<K extends keyof Entries>(kind: K, items: unknown): Array<Entries[K]> {
  if (!Array.isArray(items)) return [];
  const schema = SCHEMAS[kind];
  return items.filter((item): item is Entries[K] =>
    kind === "tools" ? validTool(item) : schema.safeParse(item).success,
  );
}

/**
 * A tool under 2026-07-28's schema: the SDK's (2025-11-25) also wants `type: "object"` at the
 * root of an outputSchema, where 2026-07-28 takes any JSON Schema object (session-era clients get
 * such a tool without it: Catalog.sessionTools).
 */
function validTool(item: unknown): boolean {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return false;
  const { outputSchema } = item as { outputSchema?: unknown };
  if (outputSchema === undefined) return ToolSchema.safeParse(item).success;
  if (typeof outputSchema !== "object" || outputSchema === null || Array.isArray(outputSchema)) return false;
  return ToolSchema.safeParse({ ...item, outputSchema: undefined }).success;
}

/** True for an outputSchema a session-era client would refuse (no `type: "object"` at its root). */
export function hasLooseOutputSchema(tool: Tool): boolean {
  return tool.outputSchema !== undefined && tool.outputSchema.type !== "object";
}
