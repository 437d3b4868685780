// The questions a server may put to a client: sampling, elicitation (form or URL mode) and roots
// (client/sampling, client/elicitation, client/roots; in 2026-07-28 as the input requests of an
// InputRequiredResult, basic/patterns/mrtr). Each needs a capability the client declared, and
// nothing else is ever relayed to a client. One check for both eras and both directions.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { isRecord } from "./jsonrpc.js";

/** The methods of server-to-client requests (session era) and of input requests (2026-07-28). */
export const INPUT_METHODS: ReadonlySet<string> = new Set([
  "sampling/createMessage",
  "elicitation/create",
  "roots/list",
]);

/**
 * What `caps` lacks for the client to be asked `method` with `params`, shaped as
 * `requiredCapabilities`, or undefined when it may be asked. A capability is declared by an
 * object; elicitation in URL mode needs `elicitation.url`, in form mode `elicitation.form` or an
 * empty `elicitation` (how clients before modes declared it).
 */
export function missingCapability(
  method: string,
  params: Record<string, unknown> | undefined,
  caps: ClientCapabilities,
): ClientCapabilities | undefined {
  switch (method) {
    case "sampling/createMessage":
      return isRecord(caps.sampling) ? undefined : { sampling: {} };
    case "roots/list":
      return isRecord(caps.roots) ? undefined : { roots: {} };
    case "elicitation/create": {
      const declared = caps.elicitation;
      const mode = params?.mode === "url" ? "url" : "form";
      if (!isRecord(declared)) return { elicitation: { [mode]: {} } };
      if (isRecord(declared[mode])) return undefined;
      const modeless = !isRecord(declared.form) && !isRecord(declared.url);
      return mode === "form" && modeless ? undefined : { elicitation: { [mode]: {} } };
    }
    default:
      return undefined;
  }
}

/**
 * True when a server may ask the client `method`: a server-to-client request, and one the client
 * declared the capability for (`caps`, when known). Others are answered as a client without the
 * handler would (Method not found) without reaching the client.
 */
export function mayAsk(
  method: string,
  params: Record<string, unknown> | undefined,
  caps: ClientCapabilities | undefined,
): boolean {
  return (
    INPUT_METHODS.has(method) && (caps === undefined || missingCapability(method, params, caps) === undefined)
  );
}

/**
 * The requests a server polls a client's own tasks with (2025-11-25 basic/utilities/tasks: the
 * client is the receiver of a task-augmented sampling or elicitation request). Session era only:
 * 2026-07-28 has no server-to-client requests, and its input requests never make tasks.
 */
export const CLIENT_TASK_METHODS: ReadonlySet<string> = new Set([
  "tasks/get",
  "tasks/result",
  "tasks/cancel",
]);

/**
 * What `caps` lacks for the client to be asked `method` (one of CLIENT_TASK_METHODS) about one of
 * its tasks: a `tasks` capability, and `tasks.cancel` for tasks/cancel; undefined when it may be.
 */
export function missingTaskCapability(
  method: string,
  caps: ClientCapabilities,
): ClientCapabilities | undefined {
  const tasks = (caps as { tasks?: unknown }).tasks;
  if (!isRecord(tasks)) return { tasks: {} };
  if (method === "tasks/cancel" && !isRecord(tasks.cancel)) return { tasks: { cancel: {} } };
  return undefined;
}

/**
 * True when `answer` has the shape of a result of `method` (ElicitResult, CreateMessageResult,
 * ListRootsResult) as far as the asker checks it; anything else is asked again rather than
 * handed to an upstream that would fail on it (basic/patterns/mrtr §Error Handling).
 */
export function isAnswerTo(method: string, answer: Record<string, unknown>): boolean {
  switch (method) {
    case "elicitation/create":
      return (
        (answer.action === "accept" || answer.action === "decline" || answer.action === "cancel") &&
        (answer.content === undefined || isRecord(answer.content))
      );
    case "sampling/createMessage":
      return (
        typeof answer.model === "string" &&
        (answer.role === "assistant" || answer.role === "user") &&
        (isRecord(answer.content) || Array.isArray(answer.content))
      );
    case "roots/list":
      return (
        Array.isArray(answer.roots) && answer.roots.every((r) => isRecord(r) && typeof r.uri === "string")
      );
    default:
      return true;
  }
}
