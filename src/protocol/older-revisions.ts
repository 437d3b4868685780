// What older session-era revisions lack, and how Portico fits what it sends to them
// (docs/protocol-eras.md "Older revisions"): capabilities a revision does not define are not
// offered, content blocks it does not define become text blocks saying what was left out. Fields
// later revisions added pass through, as the official SDK servers let them.
import { SESSION_VERSIONS } from "./era.js";
import { isRecord } from "./jsonrpc.js";

/** The revision that added each server capability Portico offers (changelogs of 2025-03-26 on). */
const CAPABILITY_ADDED: ReadonlyArray<[name: string, since: string]> = [
  ["completions", "2025-03-26"],
  ["tasks", "2025-11-25"],
];

/**
 * The revision that added each client capability that lets Portico send a method (2025-06-18:
 * elicitation/create; 2025-11-25: tasks). Declared under an older revision, it is not taken.
 */
const CLIENT_CAPABILITY_ADDED: ReadonlyArray<[name: string, since: string]> = [
  ["elicitation", "2025-06-18"],
  ["tasks", "2025-11-25"],
];

/** The revision that added each content block type (2025-03-26: audio; 2025-06-18: resource links). */
const CONTENT_ADDED: ReadonlyArray<[type: string, since: string]> = [
  ["audio", "2025-03-26"],
  ["resource_link", "2025-06-18"],
];

/**
 * True when the revision's clients read SSE events without data, as priming events are
 * (2025-11-25, SEP-1699); older clients fail to parse them, and the official SDK servers send
 * them none.
 */
export function primesStreams(version: string): boolean {
  return version >= "2025-11-25";
}

/**
 * True when the revision's clients know tasks (2025-11-25 basic/utilities/tasks): only they are
 * shown the `execution.taskSupport` Portico's task marks set (docs/upstream-mcp.md "Task marks").
 */
export function knowsTasks(version: string): boolean {
  return version >= "2025-11-25";
}

/** What one revision lacks of what Portico may send; none for a revision that has everything. */
export interface RevisionGaps {
  readonly version: string;
  readonly capabilities: readonly string[];
  readonly clientCapabilities: readonly string[];
  readonly contentTypes: ReadonlySet<string>;
}

/**
 * The gaps of a negotiated session-era revision, undefined when it has everything (the current
 * revisions: nothing is walked for them). Revision dates compare as strings.
 */
function gapsFor(version: string): RevisionGaps | undefined {
  const lacks = (table: ReadonlyArray<[string, string]>) =>
    Object.freeze(table.filter(([, since]) => version < since).map(([name]) => name));
  const capabilities = lacks(CAPABILITY_ADDED);
  const clientCapabilities = lacks(CLIENT_CAPABILITY_ADDED);
  const contentTypes = new Set(lacks(CONTENT_ADDED));
  if (capabilities.length + clientCapabilities.length + contentTypes.size === 0) return undefined;
  return Object.freeze({ version, capabilities, clientCapabilities, contentTypes });
}

// Worked out once per revision served: a lookup on each request.
const GAPS = new Map(SESSION_VERSIONS.map((v) => [v, gapsFor(v)]));

/** What a session's negotiated revision lacks; undefined when it has everything. */
export function gapsOf(version: string): RevisionGaps | undefined {
  return GAPS.get(version);
}

/** What a session's revision lacks of the content Portico may send; undefined when nothing. */
export function contentGapsOf(version: string): RevisionGaps | undefined {
  const gaps = GAPS.get(version);
  return gaps && gaps.contentTypes.size > 0 ? gaps : undefined;
}

/** The server capabilities without those the revision does not define. */
export function offeredCapabilities<T extends object>(capabilities: T, gaps: RevisionGaps | undefined): T {
  return gaps ? without(capabilities, gaps.capabilities) : capabilities;
}

/** The client's capabilities without those its revision does not define (not taken, so never used). */
export function takenClientCapabilities<T extends object>(
  capabilities: T,
  gaps: RevisionGaps | undefined,
): T {
  return gaps ? without(capabilities, gaps.clientCapabilities) : capabilities;
}

function without<T extends object>(capabilities: T, names: readonly string[]): T {
  if (!names.some((name) => name in capabilities)) return capabilities;
  const kept = { ...capabilities } as Record<string, unknown>;
  for (const name of names) delete kept[name];
  return kept as T;
}

/**
 * A result fitted to the revision: the content blocks of `tools/call` and the message contents of
 * `prompts/get` it lacks become text. The same object when nothing changes.
 */
export function fitResult(
  method: string,
  result: Record<string, unknown>,
  gaps: RevisionGaps,
): Record<string, unknown> {
  if (method === "tools/call" && Array.isArray(result.content)) {
    const content = fitBlocks(result.content, gaps);
    return content === result.content ? result : { ...result, content };
  }
  if (method === "prompts/get" && Array.isArray(result.messages)) {
    const messages = fitMessages(result.messages, gaps);
    return messages === result.messages ? result : { ...result, messages };
  }
  return result;
}

/** A server-to-client request's params fitted to the revision (sampling messages' content). */
export function fitClientRequest(
  method: string,
  params: Record<string, unknown> | undefined,
  gaps: RevisionGaps,
): Record<string, unknown> | undefined {
  if (method !== "sampling/createMessage" || !params || !Array.isArray(params.messages)) return params;
  const messages = fitMessages(params.messages, gaps);
  return messages === params.messages ? params : { ...params, messages };
}

/** Messages whose `content` (one block, or a list since 2025-11-25) the revision lacks. */
function fitMessages(messages: unknown[], gaps: RevisionGaps): unknown[] {
  let out: unknown[] | undefined;
  messages.forEach((m, i) => {
    if (!isRecord(m)) return;
    const content = Array.isArray(m.content) ? fitBlocks(m.content, gaps) : fitBlock(m.content, gaps);
    if (content === m.content) return;
    out ??= [...messages];
    out[i] = { ...m, content };
  });
  return out ?? messages;
}

function fitBlocks(blocks: unknown[], gaps: RevisionGaps): unknown[] {
  let out: unknown[] | undefined;
  blocks.forEach((block, i) => {
    const fitted = fitBlock(block, gaps);
    if (fitted === block) return;
    out ??= [...blocks];
    out[i] = fitted;
  });
  return out ?? blocks;
}

/** A block of a type the revision lacks as a text block naming what was left out. */
export function fitBlock(block: unknown, gaps: RevisionGaps): unknown {
  if (!isRecord(block) || typeof block.type !== "string" || !gaps.contentTypes.has(block.type)) return block;
  const text = `[${describe(block)} omitted: not supported by protocol ${gaps.version}]`;
  return isRecord(block.annotations)
    ? { type: "text", text, annotations: block.annotations }
    : { type: "text", text };
}

function describe(block: Record<string, unknown>): string {
  if (block.type === "resource_link") {
    const name = typeof block.title === "string" ? block.title : block.name;
    const details = [block.uri, block.mimeType].filter((d): d is string => typeof d === "string");
    const label = typeof name === "string" ? ` "${name}"` : "";
    return `resource link${label}${details.length ? ` (${details.join(", ")})` : ""}`;
  }
  const details = [block.mimeType, typeof block.data === "string" ? size(block.data) : undefined];
  const known = details.filter((d): d is string => typeof d === "string");
  return `${String(block.type)} content${known.length ? ` (${known.join(", ")})` : ""}`;
}

/** The decoded size of base64 data, as a person reads it. */
function size(base64: string): string {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  const bytes = Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
