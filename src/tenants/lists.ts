// A catalog's lists as its clients see them, to tell which lists a change touched (live-tenant.ts,
// virtual-server.ts).
import type { Catalog } from "../providers/catalog.js";
import type { ListChangeKind } from "../providers/types.js";

export type Lists = Record<ListChangeKind, string>;
export const LIST_KINDS: readonly ListChangeKind[] = ["tools", "prompts", "resources"];

/** Each list as a profile's clients see it, to tell which lists a change touched. */
export function listsOf(catalog: Catalog): Lists {
  return {
    tools: JSON.stringify(catalog.tools),
    prompts: JSON.stringify(catalog.prompts),
    resources: JSON.stringify([catalog.resources, catalog.templates]),
  };
}
