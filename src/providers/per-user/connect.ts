// What a user who has not connected their account sees of a per-user provider, and how they are
// asked to connect (docs/upstream-auth.md "What the client sees"), by what the client can take:
// - 2026-07-28 with `elicitation.url`: an InputRequiredResult with a URL-mode input request, its
//   retries carried in the sealed requestState (basic/patterns/mrtr; client/elicitation URL mode);
// - 2025-11-25 with `elicitation.url`: a -32042 URLElicitationRequiredError (client/elicitation);
// - anything else: a tool result with isError and the link in its text.
// Never a call held open while the user signs in.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../../protocol/errors.js";
import { isStatelessVersion } from "../../protocol/era.js";
import { isRecord } from "../../protocol/jsonrpc.js";
import type { CallContext, ProviderEntries } from "../types.js";

/** The requestState of a connect prompt (sealed inside Portico's own by the 2026-07-28 lane). */
export const CONNECT_STATE = "portico:connect";
/** The first revision with URL-mode elicitation and -32042. */
const URL_ELICITATION_VERSION = "2025-11-25";

/** The one tool a per-user provider lists to a user who has not connected. */
export function connectEntries(providerId: string, label: string): ProviderEntries {
  const tool: Tool = {
    name: connectToolName(providerId),
    description: `Connect your ${label} account to use its tools`,
    inputSchema: { type: "object", properties: {} },
    annotations: { title: `Connect ${label}`, readOnlyHint: true, openWorldHint: true },
  };
  return Object.freeze({ tools: [tool], prompts: [], resources: [], resourceTemplates: [] });
}

/** `connect_<provider>`; the provider's prefix applies to it as to any of its tools. */
export function connectToolName(providerId: string): string {
  return `connect_${providerId}`;
}

/** What the client must be shown: the link, the words, and the id its completion is announced with. */
export interface ConnectPrompt {
  readonly url: string;
  readonly message: string;
  readonly elicitationId: string;
}

/** Whether the client declared URL-mode elicitation (`elicitation.url`). */
function takesUrls(ctx: CallContext): boolean {
  const elicitation = (ctx.clientCapabilities as Record<string, unknown>).elicitation;
  return isRecord(elicitation) && isRecord(elicitation.url);
}

/** How this request's client is asked to connect. */
export function promptShape(ctx: CallContext): "input_required" | "url_elicitation" | "text" {
  if (!takesUrls(ctx)) return "text";
  // A gateway-made task asks the client for the URL itself, in its own form (docs/upstream-mcp.md#tasks).
  if (ctx.keepsUrlElicitation) return "url_elicitation";
  if (isStatelessVersion(ctx.protocolVersion)) return ctx.mrtr ? "input_required" : "text";
  return ctx.protocolVersion >= URL_ELICITATION_VERSION ? "url_elicitation" : "text";
}

/**
 * The answer to a call that needs the user's account: thrown as -32042, returned as an
 * InputRequiredResult, or returned as an isError result with the link.
 */
export function askToConnect(prompt: ConnectPrompt, ctx: CallContext): CallToolResult {
  switch (promptShape(ctx)) {
    case "url_elicitation":
      throw fail("PORTICO_ERR_MCP_URL_ELICITATION_REQUIRED", prompt.message, {
        elicitations: [
          { mode: "url", elicitationId: prompt.elicitationId, url: prompt.url, message: prompt.message },
        ],
      });
    case "input_required":
      return {
        resultType: "input_required",
        inputRequests: {
          connect: {
            method: "elicitation/create",
            params: { mode: "url", url: prompt.url, message: prompt.message },
          },
        },
        requestState: CONNECT_STATE,
      } as unknown as CallToolResult;
    case "text":
      return textResult(`${prompt.message}: open ${prompt.url} , then call the tool again.`, true);
  }
}

/** A retry of a connect prompt the client declined or cancelled (client/elicitation "decline"). */
export function declined(ctx: CallContext): boolean {
  if (ctx.mrtr?.requestState !== CONNECT_STATE) return false;
  const answer = ctx.mrtr.inputResponses?.connect;
  return isRecord(answer) && (answer.action === "decline" || answer.action === "cancel");
}

export function textResult(text: string, isError: boolean): CallToolResult {
  return { content: [{ type: "text", text }], ...(isError && { isError: true }) };
}
