// Portico's own spans (docs/operations.md "Tracing"): one per MCP message served and per upstream MCP
// exchange, after the OpenTelemetry semantic conventions for MCP (span name `{mcp.method.name}
// {target}`, `mcp.*`, `gen_ai.*`, `jsonrpc.request.id`, `error.type`), one per store command, and
// the W3C trace context carried in `params._meta` (SEP-414). Off (no SDK started, sdk.ts), each
// helper costs one boolean test and calls its work as is.
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";

let tracer: Tracer | undefined;

/** True once sdk.ts registered a tracer provider: the one test every hot path makes. */
export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** Called by sdk.ts once the provider is registered (process-wide, like the provider itself). */
export function markTracingOn(version: string): void {
  tracer = trace.getTracer("portico", version);
}

/** A JSON-RPC message as the helpers read it. */
export interface TracedMessage {
  readonly method: string;
  readonly id?: string | number | null;
  readonly params?: Record<string, unknown>;
}

/** What a served message's span says besides the message. */
export interface ServedDetails {
  readonly tenant: string;
  readonly session?: string;
  readonly protocolVersion?: string;
}

/** A JSON-RPC answer's outcome as the span records it. */
type Outcome = {
  readonly error?: { readonly code?: unknown; readonly message?: unknown };
  readonly result?: unknown;
};

const metaGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === "string" ? value : undefined;
  },
};

/**
 * Runs `work` (serving `message`) inside a SERVER span. Its parent is the client's
 * `params._meta.traceparent` when it sends one, else the HTTP request's span (continuing the
 * `traceparent` header), which is then linked (the conventions' "Context propagation").
 * `outcome` reads the answer `work` returns: a JSON-RPC error or a tool's `isError` marks the span.
 */
export function served<T>(
  message: TracedMessage,
  details: ServedDetails,
  work: () => Promise<T>,
  outcome?: (value: T) => Outcome | undefined,
): Promise<T> {
  if (tracer === undefined) return work();
  const active = context.active();
  const meta = message.params?._meta;
  let parent = active;
  const links: Link[] = [];
  if (
    typeof meta === "object" &&
    meta !== null &&
    typeof (meta as Record<string, unknown>).traceparent === "string"
  ) {
    const extracted = propagation.extract(ROOT_CONTEXT, meta as Record<string, unknown>, metaGetter);
    if (trace.getSpanContext(extracted) !== undefined) {
      parent = extracted;
      const ambient = trace.getSpanContext(active);
      if (ambient !== undefined) links.push({ context: ambient });
    }
  }
  const attributes = messageAttributes(message);
  attributes["portico.tenant"] = details.tenant;
  if (details.session !== undefined) attributes["mcp.session.id"] = details.session;
  if (details.protocolVersion !== undefined) attributes["mcp.protocol.version"] = details.protocolVersion;
  const span = tracer.startSpan(spanName(message), { kind: SpanKind.SERVER, attributes, links }, parent);
  return run(span, trace.setSpan(parent, span), work, outcome);
}

/** What an upstream exchange's span says besides the message. */
export interface UpstreamDetails {
  /** The provider's id. */
  readonly provider: string;
  /** The upstream's URL: `server.address` and `server.port` come from it. */
  readonly url: string;
  readonly protocolVersion?: string;
}

/** The rounds of one call (the era bridge retrying an upstream's input_required): each links to the one before. */
export interface Rounds {
  last?: SpanContext;
}

/**
 * Runs `work` (one JSON-RPC exchange with an upstream MCP server) inside a CLIENT span, handing it
 * the params to send: `params` with the span's `traceparent` and `tracestate` in `_meta` (SEP-414);
 * the HTTP request carries them as headers too (undici's instrumentation, sdk.ts). With `rounds`,
 * the span links to the previous round's and becomes the last.
 */
export function upstream<T>(
  message: TracedMessage,
  details: UpstreamDetails,
  work: (params: Record<string, unknown> | undefined) => Promise<T>,
  outcome?: (value: T) => Outcome | undefined,
  rounds?: Rounds,
): Promise<T> {
  if (tracer === undefined) return work(message.params);
  const attributes = messageAttributes(message);
  attributes["portico.provider"] = details.provider;
  if (details.protocolVersion !== undefined) attributes["mcp.protocol.version"] = details.protocolVersion;
  try {
    const url = new URL(details.url);
    attributes["server.address"] = url.hostname;
    attributes["server.port"] = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  } catch {
    // An upstream URL was checked when its provider was saved; nothing to say otherwise.
  }
  const active = context.active();
  const links: Link[] = rounds?.last === undefined ? [] : [{ context: rounds.last }];
  const span = tracer.startSpan(spanName(message), { kind: SpanKind.CLIENT, attributes, links }, active);
  if (rounds !== undefined) rounds.last = span.spanContext();
  const inner = trace.setSpan(active, span);
  const carrier: Record<string, string> = {};
  propagation.inject(inner, carrier);
  const meta = message.params?._meta;
  const params = {
    ...message.params,
    _meta: { ...(typeof meta === "object" && meta !== null ? meta : undefined), ...carrier },
  };
  return run(span, inner, () => work(params), outcome);
}

/**
 * Runs `work`, one store command, inside a CLIENT span of the request it serves. Only the
 * operation is named: keys carry session ids, token digests and tenant names, values carry
 * records, so neither is recorded. Commands outside any request (heartbeats, rate-limit flushes)
 * start no trace.
 */
export function storeCommand<T>(operation: string, system: string, work: () => Promise<T>): Promise<T> {
  if (tracer === undefined) return work();
  const active = context.active();
  if (trace.getSpanContext(active) === undefined) return work();
  const span = tracer.startSpan(
    operation,
    { kind: SpanKind.CLIENT, attributes: { "db.system.name": system, "db.operation.name": operation } },
    active,
  );
  return run(span, trace.setSpan(active, span), work);
}

/** Adds attributes known only once the work ran (a new session's id) to the active span. */
export function annotate(attributes: Attributes): void {
  if (tracer !== undefined) trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * `{trace_id, span_id}` of the active span, for log lines (logs/logger.ts's mixin); empty without
 * one. A new object each time: pino merges the line's own fields into it.
 */
export function traceFields(): Record<string, string> {
  const current = trace.getSpanContext(context.active());
  return current === undefined ? {} : { trace_id: current.traceId, span_id: current.spanId };
}

/** The active span as a W3C `traceparent`, to keep beside work that resumes later (MRTR); undefined when off. */
export function currentTraceparent(): string | undefined {
  if (tracer === undefined) return undefined;
  const current = trace.getSpanContext(context.active());
  if (current === undefined) return undefined;
  return `00-${current.traceId}-${current.spanId}-0${(current.traceFlags & 1).toString(16)}`;
}

/** Links the active span to the earlier one `traceparent` names (an MRTR round before its retry). */
export function linkEarlier(traceparent: string | undefined): void {
  if (tracer === undefined || traceparent === undefined) return;
  const earlier = linkedSpan(traceparent);
  if (earlier !== undefined) trace.getActiveSpan()?.addLink({ context: earlier });
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a kept `traceparent` names, to link to; undefined when absent or malformed. */
export function linkedSpan(traceparent: unknown): SpanContext | undefined {
  if (typeof traceparent !== "string") return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true };
}

function spanName(message: TracedMessage): string {
  const target = targetOf(message);
  return target === undefined ? message.method : `${message.method} ${target}`;
}

/** The tool or prompt a message names (the conventions' low-cardinality target); never a URI. */
function targetOf(message: TracedMessage): string | undefined {
  if (message.method !== "tools/call" && message.method !== "prompts/get") return undefined;
  const name = message.params?.name;
  return typeof name === "string" ? name : undefined;
}

function messageAttributes(message: TracedMessage): Attributes {
  const attributes: Attributes = {
    "mcp.method.name": message.method,
    "network.transport": "tcp",
    "network.protocol.name": "http",
  };
  if (message.id !== undefined && message.id !== null) attributes["jsonrpc.request.id"] = String(message.id);
  const target = targetOf(message);
  if (message.method === "tools/call" && target !== undefined) {
    attributes["gen_ai.tool.name"] = target;
    attributes["gen_ai.operation.name"] = "execute_tool";
  } else if (target !== undefined) attributes["gen_ai.prompt.name"] = target;
  const uri = message.params?.uri;
  if (typeof uri === "string" && message.method.startsWith("resources/"))
    attributes["mcp.resource.uri"] = uri;
  return attributes;
}

async function run<T>(
  span: Span,
  inner: Context,
  work: () => Promise<T>,
  outcome?: (value: T) => Outcome | undefined,
): Promise<T> {
  try {
    const value = await context.with(inner, work);
    const answered = outcome?.(value);
    if (answered?.error !== undefined) {
      const code = String(answered.error.code);
      span.setAttributes({ "error.type": code, "rpc.response.status_code": code });
      const message = answered.error.message;
      span.setStatus({ code: SpanStatusCode.ERROR, ...(typeof message === "string" && { message }) });
    } else if (isToolError(answered?.result)) {
      span.setAttribute("error.type", "tool_error");
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return value;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "number") span.setAttribute("rpc.response.status_code", String(code));
    span.setAttribute("error.type", typeof code === "number" ? String(code) : errorName(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

function isToolError(result: unknown): boolean {
  return typeof result === "object" && result !== null && (result as { isError?: unknown }).isError === true;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : "_OTHER";
}
