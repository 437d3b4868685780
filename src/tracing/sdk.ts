// Starts OpenTelemetry tracing for the process (docs/operations.md "Tracing"): the Node SDK (which
// reads the standard `OTEL_*` variables itself: sampler, batch delays, resource attributes), an OTLP
// exporter of the configured protocol behind the redaction (redaction.ts), and undici's
// instrumentation (upstream HTTP requests: client spans, `traceparent`/`tracestate` headers).
// Imported only when tracing is on (main.ts): off, none of the SDK is loaded.
import { trace, type ProxyTracerProvider } from "@opentelemetry/api";
import { NodeSDK, type tracing } from "@opentelemetry/sdk-node";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { redactAttribute, RedactingExporter } from "./redaction.js";
import { markTracingOn } from "./spans.js";

export type OtlpProtocol = "http/protobuf" | "http/json" | "grpc";

export interface TracingOptions {
  readonly serviceName: string;
  readonly serviceVersion: string;
  /** Default http/protobuf, as the SDK's. */
  readonly protocol?: OtlpProtocol;
}

export interface Tracing {
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
  /** Exports the spans ended so far (tests). */
  flush(): Promise<void>;
}

/** The exporter of `protocol`; each reads its endpoint, headers and timeout from `OTEL_*`. */
async function exporterFor(protocol: OtlpProtocol): Promise<tracing.SpanExporter> {
  switch (protocol) {
    case "http/json":
      return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
    case "grpc":
      return new (await import("@opentelemetry/exporter-trace-otlp-grpc")).OTLPTraceExporter();
    case "http/protobuf":
      return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
  }
}

/** Registers the global tracer provider; Portico's spans (spans.ts) start from here on. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const exporter = new RedactingExporter(await exporterFor(options.protocol ?? "http/protobuf"));
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    traceExporter: exporter,
    // Portico's metrics are Prometheus's (/metrics) and its logs go to stdout: traces only.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new UndiciInstrumentation({
        // Health checks and catalog refreshes outside any request start no trace of their own.
        requireParentforSpans: true,
        // The URL as recorded at the span's start may carry a key in its query: redacted here too,
        // not only at export, so no processor ever holds it.
        requestHook: (span, request) => {
          const full = `${request.origin}${request.path}`;
          span.setAttribute("url.full", redactAttribute("url.full", full) as string);
        },
      }),
    ],
  });
  sdk.start();
  markTracingOn(options.serviceVersion);
  return {
    shutdown: () => sdk.shutdown(),
    flush: async () => {
      const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as {
        forceFlush?: () => Promise<void>;
      };
      await provider.forceFlush?.();
    },
  };
}
