// A client's capabilities as the bits a session record keeps (docs/storage.md `c`): what changes
// what Portico may send the client, and what makes its capability profile (docs/architecture.md
// §3). Reading a profile through the bits costs an array read, and spells each profile one way
// (an empty `elicitation` is form mode, as the spec says), on both lanes.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "../protocol/jsonrpc.js";
import { MCP_APP_MIME_TYPE, profileOf, UI_EXTENSION, type CapabilityProfile } from "../protocol/profile.js";

// A capability is declared by an object (as input-requests.ts reads them); anything else is not one.
const CAPS: ReadonlyArray<
  [bit: number, has: (c: ClientCapabilities) => boolean, set: (c: ClientCapabilities) => void]
> = [
  [1, (c) => isRecord(c.sampling), (c) => void (c.sampling = { ...c.sampling })],
  [
    2,
    (c) => !!(c.sampling as { tools?: unknown } | undefined)?.tools,
    (c) => void (c.sampling = { ...c.sampling, tools: {} }),
  ],
  [
    4,
    (c) => !!(c.sampling as { context?: unknown } | undefined)?.context,
    (c) => void (c.sampling = { ...c.sampling, context: {} }),
  ],
  [
    8,
    (c) =>
      isRecord(c.elicitation) &&
      (!(c.elicitation as { url?: unknown }).url ||
        !!(c.elicitation as { form?: unknown }).form ||
        Object.keys(c.elicitation).length === 0),
    (c) => void (c.elicitation = { ...c.elicitation, form: {} }),
  ],
  [
    16,
    (c) => !!(c.elicitation as { url?: unknown } | undefined)?.url,
    (c) => void (c.elicitation = { ...c.elicitation, url: {} }),
  ],
  [32, (c) => isRecord(c.roots), (c) => void (c.roots = { ...c.roots })],
  [
    64,
    (c) => isRecord(c.roots) && c.roots?.listChanged === true,
    (c) => void (c.roots = { ...c.roots, listChanged: true }),
  ],
  // What else a capability profile holds (lists may depend on it): tasks and MCP Apps.
  [128, (c) => isRecord(c.tasks), (c) => void (c.tasks = { ...c.tasks })],
  [1024, (c) => isRecord(tasksOf(c)?.list), (c) => void (c.tasks = { ...c.tasks, list: {} })],
  [2048, (c) => isRecord(tasksOf(c)?.cancel), (c) => void (c.tasks = { ...c.tasks, cancel: {} })],
  [
    4096,
    (c) => isRecord(taskRequest(c, "sampling", "createMessage")),
    (c) => addTaskRequest(c, "sampling", "createMessage"),
  ],
  [
    8192,
    (c) => isRecord(taskRequest(c, "elicitation", "create")),
    (c) => addTaskRequest(c, "elicitation", "create"),
  ],
  [
    256,
    (c) => isRecord(uiOf(c)),
    (c) => void (c.extensions = { ...c.extensions, [UI_EXTENSION]: uiOf(c) ?? {} }),
  ],
  [
    512,
    (c) => {
      const types = (uiOf(c) as { mimeTypes?: unknown } | undefined)?.mimeTypes;
      return Array.isArray(types) && types.includes(MCP_APP_MIME_TYPE);
    },
    (c) => void (c.extensions = { ...c.extensions, [UI_EXTENSION]: { mimeTypes: [MCP_APP_MIME_TYPE] } }),
  ],
];

type Tasks = { list?: unknown; cancel?: unknown; requests?: Record<string, Record<string, unknown>> };

function tasksOf(c: ClientCapabilities): Tasks | undefined {
  const tasks = (c as { tasks?: unknown }).tasks;
  return isRecord(tasks) ? tasks : undefined;
}

/** tasks.requests.<kind>.<method>: the client runs that server-to-client request as a task. */
function taskRequest(c: ClientCapabilities, kind: string, method: string): unknown {
  const requests = tasksOf(c)?.requests;
  const of = isRecord(requests) ? requests[kind] : undefined;
  return isRecord(of) ? of[method] : undefined;
}

function addTaskRequest(c: ClientCapabilities, kind: string, method: string): void {
  const tasks = tasksOf(c) ?? {};
  const requests = { ...tasks.requests, [kind]: { ...tasks.requests?.[kind], [method]: {} } };
  (c as { tasks?: unknown }).tasks = { ...tasks, requests };
}

function uiOf(c: ClientCapabilities): object | undefined {
  const ext = (c as { extensions?: Record<string, unknown> }).extensions;
  const ui = isRecord(ext) ? ext?.[UI_EXTENSION] : undefined;
  return isRecord(ui) ? ui : undefined;
}

/** Profiles by capability bits: a session's profile costs an array read per request. */
const PROFILES: CapabilityProfile[] = [];

/** The profile of the capabilities a session record keeps (its bits). */
export function profileOfBits(bits: number): CapabilityProfile {
  return (PROFILES[bits] ??= profileOf(decodeCapabilities(bits)));
}

/** The bits of a client's capabilities (anything else it declared is not kept). */
export function encodeCapabilities(caps: ClientCapabilities): number {
  let bits = 0;
  for (const [bit, has] of CAPS) if (has(caps)) bits |= bit;
  return bits;
}

/** The capabilities some bits stand for, spelled one way. */
export function decodeCapabilities(bits: number): ClientCapabilities {
  const caps: ClientCapabilities = {};
  for (const [bit, , set] of CAPS) if (bits & bit) set(caps);
  return caps;
}
