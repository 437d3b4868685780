// A small OTLP/HTTP receiver of the JSON encoding (OTLP's `http/json`, part of the protocol): POST
// /v1/traces bodies are kept, their spans flattened with their resource's attributes. A fair peer
// for the exporter where no collector can be installed (docs/operations.md "Tracing").
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One exported span, as OTLP/JSON writes it (ids in hex), with its resource's attributes. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly resource: Record<string, unknown>;
  readonly links: readonly { traceId: string; spanId: string }[];
  readonly status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  /** Every body received, as sent (for searching them whole). */
  readonly bodies: string[];
  /** Other paths POSTed to (metrics, logs): none expected. */
  readonly otherPaths: string[];
  spans(): ReceivedSpan[];
  /** Resolves once `check` holds for the spans received (polled), or rejects after `ms`. */
  waitFor(check: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

function valueOf(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const otherPaths: string[] = [];
  const received: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        otherPaths.push(`${req.method} ${req.url}`);
        return void res.writeHead(404).end();
      }
      if (!String(req.headers["content-type"]).startsWith("application/json")) {
        otherPaths.push(`POST ${req.url} ${req.headers["content-type"]}`);
        return void res.writeHead(415).end();
      }
      bodies.push(body);
      const parsed = JSON.parse(body) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: { spans?: Record<string, any>[] }[];
        }[];
      };
      for (const rs of parsed.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? [])
            received.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              resource,
              links: (span.links ?? []).map((l: { traceId: string; spanId: string }) => ({
                traceId: l.traceId,
                spanId: l.spanId,
              })),
              status: span.status,
            });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const spans = () => [...received];
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    otherPaths,
    spans,
    async waitFor(check, ms = 15_000) {
      const until = Date.now() + ms;
      while (!check(spans())) {
        if (Date.now() > until)
          throw new Error(
            `spans not received in ${ms} ms; got: ${spans()
              .map((s) => s.name)
              .join(", ")}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
      return spans();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
