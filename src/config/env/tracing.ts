// Environment variables of tracing (docs/operations.md "Tracing"): OpenTelemetry's own names. Portico
// reads the endpoints to decide whether tracing is on; the SDK reads these and the other `OTEL_*`
// variables itself (protocol, sampler, batch delays, resource attributes).
import type { VarSpec } from "./types.js";

export const TRACING_VARS: readonly VarSpec[] = [
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    key: "otlpEndpoint",
    type: "url",
    description:
      "Where traces are exported with OTLP (e.g. `http://jaeger:4318`; `/v1/traces` is appended for the HTTP protocols). Set, or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set: tracing is on. Unset: tracing is off and no OpenTelemetry SDK is loaded ([docs/operations.md](operations.md#tracing)).",
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    key: "otlpTracesEndpoint",
    type: "url",
    description:
      "The full URL traces are exported to (e.g. `http://jaeger:4318/v1/traces`), instead of `OTEL_EXPORTER_OTLP_ENDPOINT`; setting it turns tracing on too.",
  },
  {
    name: "OTEL_EXPORTER_OTLP_PROTOCOL",
    key: "otlpProtocol",
    type: "enum",
    values: ["http/protobuf", "http/json", "grpc"],
    description:
      "How traces are exported: `http/protobuf` (the SDK's default), `http/json`, or `grpc` (port 4317). `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` overrides it for traces. Read by the SDK; checked here so a typo fails at boot.",
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    key: "otlpTracesProtocol",
    type: "enum",
    values: ["http/protobuf", "http/json", "grpc"],
    description: "The protocol of traces, instead of `OTEL_EXPORTER_OTLP_PROTOCOL`.",
  },
  {
    name: "OTEL_SERVICE_NAME",
    key: "otelServiceName",
    type: "string",
    default: "portico",
    description:
      "The `service.name` of Portico's spans. Other resource attributes come from `OTEL_RESOURCE_ATTRIBUTES`; the sampler from `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` (default: every trace, or as the client's `traceparent` says).",
  },
  {
    name: "OTEL_SDK_DISABLED",
    key: "otelSdkDisabled",
    type: "bool",
    default: "false",
    description: "`true`: tracing stays off even with an endpoint set.",
  },
];
