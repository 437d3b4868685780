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
  return items.filter((item): item is Entries[K] => schema.safeParse(item).success);
}
