// The `openapi` provider kind (docs/openapi.md): an OpenAPI document compiled into tools, one per
// operation; a call is the operation's HTTP request (request.ts), its answer the tool's result.
// The document is read when the provider starts (a document that cannot be served was refused
// when it was saved); what it gets wrong that calls can live with is in the provider's health.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { excerpt, fail } from "../../protocol/errors.js";
import { withinDestination } from "../../records/secret-fields.js";
import { DEFAULT_SEPARATOR, type OpenApiProviderConfig } from "../../records/tenant.js";
import type { Fetch } from "../../egress/fetch.js";
import type { BreakerStatus, CircuitBreaker } from "../circuit-breaker.js";
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_RESPONSE_BYTES } from "../http.js";
import {
  callEndpoint,
  ERROR_READ_BYTES,
  mediaType,
  pageStart,
  readBody,
  toolError,
} from "../http-answers.js";
import type {
  BreakerFactory,
  CallContext,
  CompletionRef,
  Provider,
  ProviderEntries,
  ProviderEvents,
  UpstreamObserver,
} from "../types.js";
import { authorizedFetch, redact, UpstreamCredentials, type Authorizer } from "../upstream-auth.js";
import {
  DEFAULT_MAX_DOCUMENT_BYTES,
  DocumentError,
  loadDocument,
  parseText,
  type DocumentLimits,
} from "./document.js";
import { bundleExternalRefs } from "./external-refs.js";
import { fetchDocument, type Copy, type DocumentCopies } from "./document-copies.js";
import { compileOperations, type CompiledTool, type OperationPlan } from "./operations.js";
import { ArgumentError, buildRequest } from "./request.js";
import { SchemeCredentials, schemesOf, suppliedParameters, unmetSchemes } from "./security.js";

const ACCEPT = "application/json, text/plain;q=0.9, */*;q=0.5";
const EMPTY: ProviderEntries = Object.freeze({
  tools: [],
  prompts: [],
  resources: [],
  resourceTemplates: [],
});

export interface OpenApiProviderOptions {
  /** The egress-policy fetch (redirects kept to the same origin by the factory). */
  readonly fetch: Fetch;
  readonly limits?: DocumentLimits;
  readonly maxResponseBytes?: number;
  readonly onUpstreamCall?: UpstreamObserver;
  readonly breaker?: BreakerFactory;
  /** Whose credentials requests carry instead of `auth` (one user's: per-user.ts). */
  readonly credentials?: Authorizer;
  readonly now?: () => number;
  /** Where a `documentUrl`'s copy is kept, and the tenant it is kept for. */
  readonly copies?: { readonly store: DocumentCopies; readonly tenant: string };
}

/** The longest own tool name that still fits the 64-character exposed name once prefixed. */
export function maxOwnName(config: Pick<OpenApiProviderConfig, "prefix" | "separator">): number {
  const prefix = config.prefix ?? "";
  return 64 - (prefix === "" ? 0 : prefix.length + (config.separator ?? DEFAULT_SEPARATOR).length);
}

/** True when the provider's requests carry secrets, which stay where they were saved for. */
function carriesSecrets(config: OpenApiProviderConfig): boolean {
  return (
    config.auth !== undefined ||
    Object.keys(config.headers ?? {}).length > 0 ||
    Object.keys(config.credentials ?? {}).length > 0
  );
}

/**
 * Compiles a provider's document — its inline `document`, or `copy` (of its `documentUrl`): what
 * a save checks, and what start and refresh serve. An operation of a fetched document that is now
 * called at a server its credentials were not bound to when saved is disabled (docs/openapi.md).
 */
export async function compileDocument(
  config: OpenApiProviderConfig,
  sources: {
    readonly limits?: DocumentLimits | undefined;
    /** The kept copy of a `documentUrl`'s document. */
    readonly copy?: Pick<Copy, "text" | "bound">;
    /** The egress-policy fetch the documents its external `$ref`s name come through. */
    readonly fetch?: Fetch;
  } = {},
) {
  const { limits, copy, fetch } = sources;
  const maxBytes = limits?.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const loaded = await loadDocument(
    config.document ?? copy?.text,
    limits,
    fetch &&
      ((document) =>
        bundleExternalRefs(document, {
          ...(config.documentUrl !== undefined && { base: config.documentUrl }),
          fetchText: (url) => fetchDocument(fetch, url, maxBytes),
          parse: parseText,
          maxBytes,
        })),
  );
  const compiled = compileOperations(loaded.document, {
    ...(config.baseUrl !== undefined && { baseUrl: config.baseUrl }),
    ...(config.documentUrl !== undefined && { documentUrl: config.documentUrl }),
    useDocumentServers: config.useDocumentServers === true,
    ...(config.include && { include: config.include }),
    ...(config.exclude && { exclude: config.exclude }),
    supplied: suppliedParameters(config, schemesOf(loaded.document)),
    maxNameLength: maxOwnName(config),
  });
  const warnings = [...loaded.warnings, ...compiled.warnings];
  const off = unbound(config, compiled.tools, copy?.bound);
  const disabled: string[] = [];
  const tools = compiled.tools.filter(({ tool, plan }) => {
    if (!off.includes(tool.name)) return true;
    disabled.push(tool.name);
    warnings.push(
      `${tool.name}: disabled: the document now calls it at ${plan.server}, where the provider's credentials were not sent when it was saved; save the provider again with its secrets to serve it`,
    );
    return false;
  });
  const unmet = new Map<string, string[]>();
  for (const { tool, plan } of tools)
    for (const scheme of unmetSchemes(compiled.schemes, config.credentials, plan.security))
      unmet.set(scheme, [...(unmet.get(scheme) ?? []), tool.name]);
  for (const [scheme, names] of unmet)
    warnings.push(
      `security scheme ${JSON.stringify(scheme)} has no credential ("credentials"), and ${names.length} operation(s) need it: ${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""}`,
    );
  return {
    tools,
    warnings,
    schemes: compiled.schemes,
    /** Where every operation is called, disabled ones included: what a save binds. */
    servers: compiled.tools.map((t) => t.plan.server),
    disabled,
  };
}

/**
 * The tools a copy's binding turns off: those called outside the servers the provider's
 * credentials were bound to (a provider with a baseUrl, or without secrets, has none).
 */
export function unbound(
  config: OpenApiProviderConfig,
  tools: readonly CompiledTool[],
  bound: readonly string[] | undefined,
): string[] {
  if (!bound || config.baseUrl !== undefined || !carriesSecrets(config)) return [];
  return tools
    .filter(({ plan }) => !bound.some((server) => withinDestination(plan.server, server)))
    .map(({ tool }) => tool.name);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const TEXTUAL =
  /^(?:text\/|application\/(?:xml|javascript|yaml|x-yaml|x-www-form-urlencoded|graphql)$)|\+xml$|^$/;

/** A 2xx answer as the result the operation's tool promises. */
function answer(
  label: string,
  plan: OperationPlan,
  url: string,
  type: string,
  bytes: Buffer,
  secrets: readonly string[],
): CallToolResult {
  const isJson = type === "application/json" || type.endsWith("+json");
  // An API may echo what it was sent (a key in the query, in a `next` link): never to the model.
  const text = () => redact(bytes.toString("utf8"), secrets);
  if (isJson && bytes.length > 0) {
    let value: unknown;
    try {
      value = JSON.parse(text());
    } catch (err) {
      return toolError(`${label}: upstream sent invalid JSON: ${(err as Error).message}`);
    }
    if (plan.hasOutputSchema && !plan.wrapOutput && !isObject(value))
      return toolError(
        `${label}: upstream answered a JSON ${Array.isArray(value) ? "array" : typeof value} where its document promises an object`,
      );
    // With an output schema, as it says; without one, as the `http` kind does.
    const wrap = plan.hasOutputSchema ? plan.wrapOutput : !isObject(value);
    const structuredContent = wrap ? { result: value } : (value as Record<string, unknown>);
    return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent };
  }
  if (plan.hasOutputSchema)
    return toolError(
      `${label}: upstream answered ${type || "no media type"} where its document promises JSON`,
    );
  if (type.startsWith("image/"))
    return { content: [{ type: "image", data: bytes.toString("base64"), mimeType: type }] };
  if (TEXTUAL.test(type)) return { content: [{ type: "text", text: text() }] };
  return {
    content: [{ type: "resource", resource: { uri: url, mimeType: type, blob: bytes.toString("base64") } }],
  };
}

/** Tools compiled from an OpenAPI document. */
export class OpenApiProvider implements Provider {
  readonly kind = "openapi";
  readonly id: string;
  readonly prefix: string;
  readonly separator: string;
  #healthy = false;
  #healthReason: string | undefined = "the document is not read yet";
  #warnings: readonly string[] = [];
  #tools = new Map<string, CompiledTool>();
  #entries: ProviderEntries = EMPTY;
  readonly #fetch: Fetch;
  readonly #credentials: Authorizer;
  /** The credentials of the document's security schemes (security.ts), made anew with its tools. */
  #schemes: SchemeCredentials | undefined;
  readonly #breaker: CircuitBreaker | undefined;
  #events: ProviderEvents | undefined;

  constructor(
    private readonly config: OpenApiProviderConfig,
    private readonly options: OpenApiProviderOptions,
  ) {
    this.id = config.id;
    this.prefix = config.prefix ?? "";
    this.separator = config.separator ?? DEFAULT_SEPARATOR;
    this.#credentials =
      options.credentials ?? new UpstreamCredentials(config.auth, { fetch: options.fetch, now: options.now });
    this.#fetch = authorizedFetch(options.fetch, this.#credentials);
    this.#breaker = options.breaker?.();
  }

  get healthy(): boolean {
    return this.#healthy;
  }

  get healthReason(): string | undefined {
    return this.#healthReason;
  }

  /** What the document gets wrong that Portico tolerates (shown in the provider's health). */
  warnings(): readonly string[] {
    return this.#warnings;
  }

  breakerStatus(): BreakerStatus | undefined {
    return this.#breaker?.status();
  }

  entries(): ProviderEntries {
    return this.#entries;
  }

  async start(events: ProviderEvents): Promise<void> {
    this.#events = events;
    try {
      this.#serve(await this.#compile(false));
    } catch (err) {
      // Saved documents were read once already; a cap lowered since, say, can still refuse one.
      this.#healthReason = `the document cannot be served: ${err instanceof DocumentError ? `it ${err.message}` : (err as Error).message}`;
      events.healthChanged(false, this.#healthReason);
    }
  }

  /**
   * Serves the document's copy as the store has it now (the refresh call fetched it, on one
   * replica, before every replica is told): clients hear list_changed when the tools changed.
   */
  async refresh(): Promise<void> {
    const before = JSON.stringify(this.#entries.tools);
    this.#serve(await this.#compile(true));
    if (JSON.stringify(this.#entries.tools) !== before) this.#events?.listChanged("tools");
  }

  async #compile(refreshing: boolean) {
    const { documentUrl } = this.config;
    let copy: Copy | undefined;
    if (documentUrl !== undefined) {
      const copies = this.options.copies;
      if (!copies) throw new DocumentError("has a documentUrl, and this replica keeps no copies");
      const { store, tenant } = copies;
      // On start a provider saved before its copy was kept fetches it; a refresh reads the copy.
      copy = refreshing
        ? await store.read(tenant, this.id, documentUrl)
        : await store.readOrFetch(
            tenant,
            this.id,
            documentUrl,
            async (text) => (await this.#compiled({ text })).servers,
          );
      if (copy === undefined) throw new DocumentError(`has no copy of ${documentUrl} in the store`);
    }
    return this.#compiled(copy);
  }

  #compiled(copy: Pick<Copy, "text" | "bound"> | undefined) {
    return compileDocument(this.config, {
      limits: this.options.limits,
      ...(copy && { copy }),
      fetch: this.options.fetch,
    });
  }

  #serve({ tools, warnings, schemes }: Awaited<ReturnType<typeof compileDocument>>): void {
    this.#tools = new Map(tools.map((t) => [t.tool.name, t]));
    this.#entries = Object.freeze({ ...EMPTY, tools: tools.map((t): Tool => t.tool) });
    this.#warnings = warnings;
    this.#schemes = new SchemeCredentials(schemes, this.config.credentials, {
      fetch: this.options.fetch,
      ...(this.options.now && { now: this.options.now }),
    });
    if (!this.#healthy) this.#events?.healthChanged(true);
    this.#healthy = true;
    this.#healthReason = undefined;
  }

  async close(): Promise<void> {
    this.#breaker?.close();
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const compiled = this.#tools.get(name);
    if (!compiled)
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown tool '${excerpt(name)}'`, {
        name: excerpt(name),
      });
    const { plan } = compiled;
    const label = `${this.id}/${name}`;
    let request;
    try {
      request = buildRequest(plan, args, this.config.headers);
    } catch (err) {
      if (err instanceof ArgumentError) return toolError(`${label}: ${err.message}`);
      throw err;
    }
    request.headers.set("accept", ACCEPT);
    const call = {
      label,
      timeoutMs: this.config.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      signal: ctx.signal,
      breaker: this.#breaker,
      onUpstreamCall: this.options.onUpstreamCall,
    };
    const schemes = this.#schemes;
    // Redirects are not followed: they would carry the credentials elsewhere.
    const send = async (signal: AbortSignal) => {
      // The document's schemes' credentials; a key in the query goes on the URL sent, never on
      // the one a result or an error shows.
      const carrier = { headers: request.headers, query: [] as string[] };
      await schemes?.apply(plan.security, carrier, signal);
      const url =
        carrier.query.length === 0
          ? request.url
          : `${request.url}${request.url.includes("?") ? "&" : "?"}${carrier.query.join("&")}`;
      const response = await this.#fetch(url, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined && { body: request.body }),
        signal,
        redirect: "manual",
      });
      // A refused oauth2 token is bought anew for the next call.
      if (response.status === 401) schemes?.invalidate(request.headers.get("authorization"));
      return response;
    };
    return callEndpoint(call, send, (response) => this.#result(label, plan, request.url, response));
  }

  async #result(
    label: string,
    plan: OperationPlan,
    url: string,
    response: Response,
  ): Promise<CallToolResult> {
    const ok = response.status >= 200 && response.status < 300;
    const limit = this.options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    const { bytes, complete } = await readBody(response, ok ? limit : ERROR_READ_BYTES);
    if (!ok) {
      const text = pageStart(bytes, this.#secrets());
      const redirect = response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
      return toolError(
        `${label}: upstream answered HTTP ${response.status}${redirect}${text ? `: ${text}` : ""}`,
      );
    }
    if (!complete) return toolError(`${label}: upstream reply exceeds ${limit} bytes`);
    // Credentials, not every configured header value (one may be a plain tenant name).
    const credentials = [...this.#credentials.secrets(), ...(this.#schemes?.secrets() ?? [])];
    return answer(label, plan, url, mediaType(response), bytes, credentials);
  }

  /** What no answer may show: configured header values, `auth`'s secrets, the schemes' credentials. */
  #secrets(): string[] {
    return [
      ...Object.values(this.config.headers ?? {}),
      ...this.#credentials.secrets(),
      ...(this.#schemes?.secrets() ?? []),
    ];
  }

  async getPrompt(name: string): Promise<never> {
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown prompt '${excerpt(name)}'`, {
      name: excerpt(name),
    });
  }

  async readResource(uri: string): Promise<never> {
    throw fail("PORTICO_ERR_MCP_RESOURCE_NOT_FOUND", `Resource not found: ${excerpt(uri)}`, {
      uri: excerpt(uri),
    });
  }

  async complete(_ref: CompletionRef): Promise<never> {
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", "This provider offers no completions");
  }
}
