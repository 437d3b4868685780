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

function redactText(text: string): string {
  return redactLine(redactUrl(text));
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

/** The span as exported: its own fields unchanged, everything that may quote a secret redacted. */
export function redactSpan(span: tracing.ReadableSpan): tracing.ReadableSpan {
  const status: SpanStatus =
    span.status.message === undefined
      ? span.status
      : { ...span.status, message: redactText(span.status.message) };
  const view: tracing.ReadableSpan = Object.create(span as object, {
    name: { value: redactText(span.name) },
    attributes: { value: redactAttributes(span.attributes) },
    status: { value: status },
    events: {
      value: span.events.map((event) =>
        event.attributes === undefined ? event : { ...event, attributes: redactAttributes(event.attributes) },
      ),
    },
    links: {
      value: span.links.map((link): Link =>
        link.attributes === undefined ? link : { ...link, attributes: redactAttributes(link.attributes) },
      ),
    },
  }) as tracing.ReadableSpan;
  return view;
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
