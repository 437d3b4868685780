// The `http` provider kind (docs/architecture.md §3): each tool POSTs its JSON arguments to a configured URL and
// the reply becomes the tool result (JSON → structuredContent, text → text). Upstream failures are
// tool errors (`isError`), as MCP asks for errors the model should see; configured headers and
// upstream credentials (upstream-auth.ts) never leave this file except on the wire to the tool's URL.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { excerpt, fail } from "../protocol/errors.js";
import { DEFAULT_SEPARATOR, type HttpProviderConfig, type HttpTool } from "../records/tenant.js";
import type { Fetch } from "../egress/fetch.js";
import type { BreakerStatus, CircuitBreaker } from "./circuit-breaker.js";
import type {
  BreakerFactory,
  CallContext,
  CompletionRef,
  Provider,
  ProviderEntries,
  UpstreamObserver,
} from "./types.js";
import { authorizedFetch, UpstreamCredentials, type Authorizer } from "./upstream-auth.js";
import {
  callEndpoint,
  ERROR_READ_BYTES,
  mediaType,
  pageStart,
  readBody,
  successResult,
  toolError,
} from "./http-answers.js";

/** Timeout of a tool call whose config sets no timeoutMs. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
/** Default cap on a reply body; a larger reply is a tool error. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const ACCEPT = "application/json, text/plain;q=0.9, */*;q=0.1";

export interface HttpProviderOptions {
  /** Largest reply body accepted from a tool endpoint; default 4 MiB. */
  readonly maxResponseBytes?: number;
  /** The fetch to reach tool endpoints and the token endpoint with: the egress-policy one, always. */
  readonly fetch: Fetch;
  /** Clock for token expiry; tests move it. */
  readonly now?: () => number;
  /** Sees each tool call end: "error" for a reply that is a tool error, "timeout" after timeoutMs. */
  readonly onUpstreamCall?: UpstreamObserver;
  /** This provider's circuit breaker (none: no breaker); probed by the first call after a cool-down. */
  readonly breaker?: BreakerFactory;
  /** Whose credentials requests carry instead of `auth` (one user's: per-user.ts). */
  readonly credentials?: Authorizer;
}

function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function listedTool(t: HttpTool): Tool {
  const inputSchema = (t.inputSchema ?? { type: "object" }) as Tool["inputSchema"];
  const outputSchema = t.outputSchema as Tool["outputSchema"];
  const { name, title, description, annotations } = t;
  return compact({ name, title, description, inputSchema, outputSchema, annotations });
}

/** Tools backed by plain HTTP endpoints. */
export class HttpProvider implements Provider {
  readonly kind = "http";
  readonly id: string;
  readonly prefix: string;
  readonly separator: string;
  readonly healthy = true;
  readonly #tools: ReadonlyMap<string, HttpTool>;
  readonly #entries: ProviderEntries;
  readonly #maxResponseBytes: number;
  readonly #fetch: Fetch;
  readonly #credentials: Authorizer;
  readonly #onUpstreamCall: UpstreamObserver | undefined;
  readonly #breaker: CircuitBreaker | undefined;

  constructor(config: HttpProviderConfig, options: HttpProviderOptions) {
    this.id = config.id;
    this.prefix = config.prefix ?? "";
    this.separator = config.separator ?? DEFAULT_SEPARATOR;
    this.#tools = new Map(config.tools.map((t) => [t.name, t]));
    this.#entries = Object.freeze({
      tools: config.tools.map(listedTool),
      prompts: [],
      resources: [],
      resourceTemplates: [],
    });
    this.#maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    const fetch = options.fetch;
    this.#credentials =
      options.credentials ?? new UpstreamCredentials(config.auth, { fetch, now: options.now });
    this.#fetch = authorizedFetch(fetch, this.#credentials);
    this.#onUpstreamCall = options.onUpstreamCall;
    this.#breaker = options.breaker?.();
  }

  breakerStatus(): BreakerStatus | undefined {
    return this.#breaker?.status();
  }

  entries(): ProviderEntries {
    return this.#entries;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#breaker?.close();
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const tool = this.#tools.get(name);
    if (!tool)
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown tool '${excerpt(name)}'`, {
        name: excerpt(name),
      });
    const call = {
      label: `${this.id}/${tool.name}`,
      timeoutMs: tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      signal: ctx.signal,
      breaker: this.#breaker,
      onUpstreamCall: this.#onUpstreamCall,
    };
    return callEndpoint(
      call,
      (signal) => this.#post(tool, args, signal),
      (response) => this.#result(call.label, response, tool),
    );
  }

  async #post(tool: HttpTool, args: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    const headers = new Headers({ "content-type": "application/json", accept: ACCEPT });
    for (const [name, value] of Object.entries(tool.headers ?? {})) headers.set(name, value);
    // Redirects are not followed: they would carry the configured headers to another URL. The
    // Authorization header of `auth` is added by #fetch, which retries once after a 401.
    return this.#fetch(tool.url, {
      method: "POST",
      headers,
      body: JSON.stringify(args),
      signal,
      redirect: "manual",
    });
  }

  async #result(label: string, response: Response, tool: HttpTool): Promise<CallToolResult> {
    const ok = response.status >= 200 && response.status < 300;
    const { bytes, complete } = await readBody(response, ok ? this.#maxResponseBytes : ERROR_READ_BYTES);
    if (!ok) {
      const text = pageStart(bytes, [...Object.values(tool.headers ?? {}), ...this.#credentials.secrets()]);
      const redirect = response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
      return toolError(
        `${label}: upstream answered HTTP ${response.status}${redirect}${text ? `: ${text}` : ""}`,
      );
    }
    if (!complete) return toolError(`${label}: upstream reply exceeds ${this.#maxResponseBytes} bytes`);
    return successResult(label, mediaType(response), bytes);
  }

  async getPrompt(name: string, _args: Record<string, string>, _ctx: CallContext): Promise<never> {
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown prompt '${excerpt(name)}'`, {
      name: excerpt(name),
    });
  }

  async readResource(uri: string, _ctx: CallContext): Promise<never> {
    throw fail("PORTICO_ERR_MCP_RESOURCE_NOT_FOUND", `Resource not found: ${excerpt(uri)}`, {
      uri: excerpt(uri),
    });
  }

  async complete(
    _ref: CompletionRef,
    _argument: { name: string; value: string },
    _context: Record<string, string> | undefined,
    _ctx: CallContext,
  ): Promise<never> {
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", "This provider offers no completions");
  }
}
