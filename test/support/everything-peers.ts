// SDK v1 clients of server-everything for the transparency tests (test/e2e/transparency*.test.ts): one
// client per combination of declared sampling / elicitation / roots, with deterministic handlers that
// record every server-to-client request, and the normalisation of server-everything's few
// nondeterministic outputs, so a client direct and a client through Portico can be compared exactly.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";

/** One combination of declared capabilities (a capability profile), with handlers for those declared. */
export interface Combo {
  readonly label: string;
  readonly sampling: boolean;
  readonly elicitation: boolean;
  readonly roots: boolean;
  /** Declared as is instead of derived from the three flags. */
  readonly capabilities?: ClientCapabilities;
}

/** All 8 combinations of sampling / elicitation / roots, "none" first. */
export const COMBOS: readonly Combo[] = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => {
  const combo = { sampling: (bits & 1) !== 0, elicitation: (bits & 2) !== 0, roots: (bits & 4) !== 0 };
  const names = Object.entries(combo).flatMap(([name, on]) => (on ? [name] : []));
  return { label: names.join("+") || "none", ...combo };
});

/**
 * Two more profiles server-everything tells apart: elicitation declared the 2025-06-18 way (`{}`,
 * form only: no url-elicitation tool), and everything plus task-augmented sampling and elicitation
 * (the *-async task tools appear; listed here, never called: task-augmented calls are later work).
 */
export const MORE_PROFILES: readonly Combo[] = [
  {
    label: "elicitation as {} (form only)",
    sampling: false,
    elicitation: true,
    roots: false,
    capabilities: { elicitation: {} },
  },
  {
    label: "everything and tasks",
    sampling: true,
    elicitation: true,
    roots: true,
    capabilities: {
      sampling: {},
      elicitation: { form: {}, url: {} },
      roots: { listChanged: true },
      tasks: { requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
    },
  },
];

/**
 * The capabilities a combo declares. Elicitation is declared in both modes (form and url), so the
 * url-gated tool is part of the profile too.
 */
export function capabilitiesOf(combo: Combo): ClientCapabilities {
  if (combo.capabilities) return combo.capabilities;
  return {
    ...(combo.sampling && { sampling: {} }),
    ...(combo.elicitation && { elicitation: { form: {}, url: {} } }),
    ...(combo.roots && { roots: { listChanged: true } }),
  };
}

/** What a tool of server-everything is gated on: it is registered only for clients declaring it. */
export type Gate = "sampling" | "elicitation" | "elicitation.url" | "roots";

/** Whether a client declaring `combo` is offered a tool gated on `gate`. */
export function offered(combo: Combo, gate: Gate | undefined): boolean {
  const caps = capabilitiesOf(combo);
  if (gate === undefined) return true;
  if (gate === "elicitation.url") return caps.elicitation?.url !== undefined;
  return caps[gate] !== undefined;
}

/** A server-to-client request as the client's handler received it. */
export interface Asked {
  readonly method: string;
  readonly params: unknown;
}

export interface Peer {
  readonly client: Client;
  /** Every server-to-client request received so far, in order. */
  readonly asked: Asked[];
  /** Every notification received so far (method and params), in order. */
  readonly notified: Asked[];
  close(): Promise<void>;
}

export const ROOTS = [{ uri: "file:///work/project", name: "project" }];
/** What the elicitation handler accepts with for a form (server-everything's form needs `name`). */
export const FORM_ANSWER = { name: "Ada", check: true, email: "ada@example.com", integer: 7 };

/**
 * Connects an SDK v1 client declaring `combo` to `url`, answering sampling, elicitation and roots
 * deterministically (only the ones declared: the SDK refuses a handler for an undeclared one).
 * `route` rewrites each HTTP request's URL (alternating replicas).
 */
export async function connectPeer(url: string, combo: Combo, route?: (url: URL) => URL): Promise<Peer> {
  const client = new Client(
    { name: "transparency", version: "1.0.0" },
    { capabilities: capabilitiesOf(combo) },
  );
  const asked: Asked[] = [];
  const notified: Asked[] = [];
  client.fallbackNotificationHandler = async (n) =>
    void notified.push({ method: n.method, params: n.params });
  if (combo.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params });
      const first = req.params.messages[0]?.content;
      const text = first && "text" in first ? String(first.text) : "";
      return {
        role: "assistant",
        model: "transparency-model",
        content: { type: "text", text: `sampled: ${text}` },
      };
    });
  if (combo.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params });
      return req.params.mode === "url" ? { action: "accept" } : { action: "accept", content: FORM_ANSWER };
    });
  if (combo.roots)
    client.setRequestHandler(ListRootsRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params });
      return { roots: ROOTS };
    });
  const urlOf = (input: string | URL | Request) =>
    new URL(String(input instanceof Request ? input.url : input));
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: route ? (input, init) => fetch(route(urlOf(input)), init) : undefined,
  });
  await client.connect(transport);
  return { client, asked, notified, close: () => client.close() };
}

/** What a call ended with, as a user of the SDK sees it: a result, or the thrown JSON-RPC error. */
export type Outcome =
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

/** Runs `fn`, capturing an McpError as an outcome (anything else still throws). */
export async function outcomeOf(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { result: normalise(await fn()) };
  } catch (err) {
    if (!(err instanceof McpError)) throw err;
    return { error: normalise({ code: err.code, message: err.message, data: err.data }) as never };
  }
}

/**
 * A failed call's JSON-RPC code, whatever its form: a thrown error's code, or the code the SDK server
 * writes into an isError result ("MCP error -32602: …"); undefined for a success. For calls of tools
 * the client was never offered: MCP (server/tools, "Error Handling") makes an unknown tool a protocol
 * error -32602, which Portico answers as such, while the SDK v1 server wraps it in an isError result.
 */
export function failureCode(outcome: unknown): number | undefined {
  const o = outcome as { error?: { code: number }; result?: unknown; code?: number };
  if (o.error) return o.error.code;
  if (typeof o.code === "number") return o.code;
  const result = (o.result ?? o) as { isError?: boolean; content?: Array<{ text?: string }> };
  const code = result.isError ? /MCP error (-?\d+)/.exec(result.content?.[0]?.text ?? "")?.[1] : undefined;
  return code === undefined ? undefined : Number(code);
}

const CREATED_AT = /(created at )[^"\\]+/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

/**
 * server-everything's only nondeterminism on the paths tested, each replaced by a placeholder:
 * - its dynamic resources say "… created at <toLocaleTimeString()>", in text or in a base64 blob
 *   (resources/templates.js: resource reads, get-resource-reference, resource-prompt);
 * - the url-elicitation error path makes up a random elicitationId (trigger-url-elicitation.js).
 */
export function normalise(value: unknown): unknown {
  if (typeof value === "string") return value.replace(CREATED_AT, "$1<time>").replace(UUID, "<uuid>");
  if (Array.isArray(value)) return value.map(normalise);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined) continue;
    out[key] = key === "blob" && typeof field === "string" ? normaliseBlob(field) : normalise(field);
  }
  return out;
}

function normaliseBlob(base64: string): string {
  const text = Buffer.from(base64, "base64").toString("utf8");
  if (!text.includes("created at ")) return base64;
  return Buffer.from(String(normalise(text)), "utf8").toString("base64");
}

type Named = { name: string };
type Located = { uri: string };
type Templated = { uriTemplate: string };

/** Every page of each list, items sorted by their key (an aggregate's order is not the upstream's). */
export const lists = {
  tools: (c: Client) =>
    listAll<Named>((cursor) => c.listTools(cursor ? { cursor } : undefined), "tools", byName),
  prompts: (c: Client) =>
    listAll<Named>((cursor) => c.listPrompts(cursor ? { cursor } : undefined), "prompts", byName),
  resources: (c: Client) =>
    listAll<Located>(
      (cursor) => c.listResources(cursor ? { cursor } : undefined),
      "resources",
      (r) => r.uri,
    ),
  resourceTemplates: (c: Client) =>
    listAll<Templated>(
      (cursor) => c.listResourceTemplates(cursor ? { cursor } : undefined),
      "resourceTemplates",
      (t) => t.uriTemplate,
    ),
};

export const byName = (item: Named): string => item.name;

export async function listAll<T>(
  page: (cursor?: string) => Promise<{ nextCursor?: string }>,
  field: string,
  key: (item: T) => string,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const result = await page(cursor);
    items.push(...(((result as Record<string, unknown>)[field] as T[] | undefined) ?? []));
    cursor = result.nextCursor;
  } while (cursor);
  return items.sort((x, y) => key(x).localeCompare(key(y)));
}
