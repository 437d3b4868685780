// The `instructions` a client gets from a tenant's URL or a virtual server's (initialize and
// server/discover, docs/tool-search.md#instructions): the admin's text, then each provider's
// upstream guidance under the names its tools have here, bounded, then in search mode how to find
// tools. An upstream's instructions are read from its provider each time (they are refreshed with
// its connection), never from a client; a provider whose definitions are pinned gives them as its
// pins let it (providers/pinned.ts: under `block`, the approved text).
import { exposedName } from "../records/tenant.js";
import type { TenantRuntime } from "../tenants/runtime.js";
import { CALL_TOOL, DESCRIBE_TOOL, discoveryOf, SEARCH_TOOLS } from "./tool-search.js";

/** Of one upstream's instructions, at most this much. */
const PER_PROVIDER_CHARS = 4096;
/** Of everything, at most this much. */
const TOTAL_CHARS = 16_384;

const SEARCH_HINT = `Only a few tools are listed here. Find the others with ${SEARCH_TOOLS} (describe the task in words), read one's arguments with ${DESCRIBE_TOOL}, then run it with ${CALL_TOOL} or by its name.`;

function cut(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/** The instructions of `tenant`'s URL (or its virtual server's), undefined when there are none. */
export function instructionsOf(
  tenant: Pick<TenantRuntime, "config" | "server" | "catalog">,
): string | undefined {
  const parts: string[] = [];
  const own = tenant.server?.instructions ?? tenant.config.instructions;
  if (own?.trim()) parts.push(own.trim());
  for (const provider of tenant.catalog.providers) {
    const text = provider.instructions;
    if (!text?.trim()) continue;
    const named = provider.prefix
      ? `the tools named ${exposedName(provider, "…")}`
      : `provider ${provider.id}`;
    parts.push(`From the MCP server behind ${named}:\n${cut(text, PER_PROVIDER_CHARS)}`);
  }
  if (discoveryOf(tenant) === "search") parts.push(SEARCH_HINT);
  if (parts.length === 0) return undefined;
  return cut(parts.join("\n\n"), TOTAL_CHARS);
}
