// What keeps secrets out of exported spans (docs/operations.md "Tracing", docs/security.md): the
// logs' rules (logs/redaction.ts) applied to every span before it leaves the process — attribute
// values (URLs with a key in the query, credentials written out), header attributes by name,
// event attributes (exception messages and stacks), span names and status messages.
import type { Attributes, AttributeValue, Link, SpanStatus } from "@opentelemetry/api";
import type { core, tracing } from "@opentelemetry/sdk-node";
import { isSecretParam, REDACTED, redactLine, redactUrl } from "../logs/redaction.js";

/** `http.request.header.x-api-key`: header attributes by the header's name. */
const HEADER_ATTRIBUTE = /^http\.(?:request|response)\.header\.(.+)$/;

/** An attribute's value with every secret the logs would hide hidden. */
export function redactAttribute(name: string, value: AttributeValue | undefined): AttributeValue | undefined {
  const header = HEADER_ATTRIBUTE.exec(name);
  if (header !== null) {
    const headerName = header[1]!;
    return isSecretParam(headerName) || headerName.endsWith("key") ? REDACTED : value;
  }
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value))
    return value.map((item) => (typeof item === "string" ? redactText(item) : item)) as AttributeValue;
  return value;
}

/**
 * What every secret shape of logs/redaction.ts needs at least one of: `=` (parameters), `@`
 * (userinfo), `"` (JSON members), `%` (encoded parameters), `: ` (header lines), a scheme's name.
 * Most attribute values (methods, routes, names, ids) have none and are not scanned further.
 */
const MAY_HOLD_SECRET = /[=@"%]|:[ \t]|\\t|bearer|basic|dpop/i;

function redactText(text: string): string {
  return MAY_HOLD_SECRET.test(text) ? redactLine(redactUrl(text)) : text;
}

/** A copy of `attributes` redacted; the same object when nothing changed. */
export function redactAttributes(attributes: Attributes): Attributes {
  let copy: Attributes | undefined;
  for (const [name, value] of Object.entries(attributes)) {
    const redacted = redactAttribute(name, value);
    if (redacted === value) continue;
    copy ??= { ...attributes };
    copy[name] = redacted;
  }
  return copy ?? attributes;
}

/** The span as exported: itself when nothing in it may quote a secret, else a redacted view of it. */
export function redactSpan(span: tracing.ReadableSpan): tracing.ReadableSpan {
  const name = redactText(span.name);
  const attributes = redactAttributes(span.attributes);
  const message = span.status.message === undefined ? undefined : redactText(span.status.message);
  const events = span.events.map((event) => {
    if (event.attributes === undefined) return event;
    const redacted = redactAttributes(event.attributes);
    return redacted === event.attributes ? event : { ...event, attributes: redacted };
  });
  const links = span.links.map((link): Link => {
    if (link.attributes === undefined) return link;
    const redacted = redactAttributes(link.attributes);
    return redacted === link.attributes ? link : { ...link, attributes: redacted };
  });
  const same = (a: readonly unknown[], b: readonly unknown[]) => a.every((item, i) => item === b[i]);
  if (
    name === span.name &&
    attributes === span.attributes &&
    message === span.status.message &&
    same(events, span.events) &&
    same(links, span.links)
  )
    return span;
  const status: SpanStatus = message === span.status.message ? span.status : { ...span.status, message };
  // The span's own methods (spanContext()) and fields come through its prototype.
  return Object.create(span, {
    name: { value: name },
    attributes: { value: attributes },
    status: { value: status },
    events: { value: events },
    links: { value: links },
  }) as tracing.ReadableSpan;
}

/** An exporter that hands `inner` every span redacted. */
export class RedactingExporter implements tracing.SpanExporter {
  constructor(private readonly inner: tracing.SpanExporter) {}

  export(spans: tracing.ReadableSpan[], resultCallback: (result: core.ExportResult) => void): void {
    this.inner.export(spans.map(redactSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
