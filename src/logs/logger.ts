// Structured logs (pino through Fastify; JSON lines, or human-readable ones from pretty.ts):
// one child logger per request carrying its id and, where the URL and headers tell, its tenant
// and session; credentials, cookies, session ids and secrets are redacted wherever they appear in
// a logged object, and by name in URLs and whole lines (redaction.ts). With tracing on, every line
// carries the active span's `trace_id` and `span_id` (docs/operations.md "Tracing").
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from "fastify";
import type { LogFormat, LogLevel } from "./levels.js";
import { isPretty, prettyStream } from "./pretty.js";
import { redactHeaders, redactLine, redactUrl } from "./redaction.js";

const SECRET_HEADERS = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  '["mcp-session-id"]',
  '["x-api-key"]',
];
const SECRET_FIELDS = [
  "password",
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "code_verifier",
  "client_secret",
  "clientSecret",
  "secret",
];

/** Every path pino replaces with "[redacted]": headers anywhere near the top, secret body fields. */
export const REDACTED_PATHS: readonly string[] = [
  ...["req.headers", "res.headers", "headers", "*.headers", "request.headers", "response.headers"].flatMap(
    (at) => SECRET_HEADERS.map((h) => (h.startsWith("[") ? `${at}${h}` : `${at}.${h}`)),
  ),
  ...["body", "*.body", "params", "query", "*"].flatMap((at) => SECRET_FIELDS.map((f) => `${at}.${f}`)),
  // Authorization codes (not `*.code`: errors carry their own codes).
  "body.code",
  "query.code",
  // Provider records: header values and upstream credentials are secrets.
  "body.headers.*",
  "body.auth.token",
  "body.auth.clientSecret",
  "body.identity.clientSecret",
  "body.tools[*].headers.*",
  "body.providers[*].headers.*",
  "body.providers[*].auth.token",
  "body.providers[*].auth.clientSecret",
  // ioredis errors carry the failed command's arguments: values such as records.
  "err.command.args",
  "*.command.args",
];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SESSION_ID = /^[A-Za-z0-9_-]{16,64}$/;

const PROCESS_PREFIX = randomBytes(9).toString("base64url");
let requestCount = 0;

function nextRequestId(): string {
  return `${PROCESS_PREFIX}-${(++requestCount).toString(36)}`;
}

/** A session as logs name it: the first 8 characters of its id, never the id (a bearer of the session). */
export function sessionRef(sessionId: string): string {
  return sessionId.slice(0, 8);
}

/** What a request's own logger is bound to besides its id. */
function requestBindings(raw: IncomingMessage): Record<string, string> | undefined {
  const url = raw.url ?? "";
  const base = url.startsWith("/mcp/") ? 5 : url.startsWith("/admin/v1/tenants/") ? 18 : -1;
  if (base < 0) return undefined;
  const end = url.slice(base).search(/[/?#]/);
  const tenant = url.slice(base, end < 0 ? undefined : base + end);
  if (!SLUG.test(tenant)) return undefined;
  const sid = raw.headers["mcp-session-id"];
  return typeof sid === "string" && SESSION_ID.test(sid) ? { tenant, session: sessionRef(sid) } : { tenant };
}

/**
 * The Fastify options that make the logs: pino settings, request ids, per-request bindings. Lines
 * go to `destination` (tests) or stdout, as JSON or, by `format`, human-readable (pretty.ts).
 */
export function loggingOptions(
  level: LogLevel,
  destination?: { write(line: string): void },
  format: LogFormat = "json",
  /** Fields every line gets (the active span's ids when tracing is on, tracing/spans.ts); none otherwise. */
  mixin?: () => Record<string, unknown>,
): Pick<FastifyServerOptions, "logger" | "genReqId" | "requestIdHeader" | "childLoggerFactory"> {
  // `auto` asks whether stdout is a terminal; a destination given by a test never is.
  const tty = destination === undefined && process.stdout.isTTY === true;
  const stream = isPretty(format, tty) ? prettyStream(destination ?? process.stdout, tty) : destination;
  return {
    logger: {
      level,
      redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
      serializers: {
        req: (req: { method: string; url: string; headers: Record<string, unknown> }) => ({
          method: req.method,
          url: redactUrl(req.url),
          headers: redactHeaders(req.headers),
        }),
      },
      // The last line of defence: whatever a message, error or stack carries, at every level.
      hooks: { streamWrite: redactLine },
      ...(mixin ? { mixin } : {}),
      ...(stream ? { stream } : {}),
    },
    requestIdHeader: false,
    // An upstream proxy's X-Request-Id when it looks like one, so its logs and ours line up;
    // otherwise this process's random prefix and a counter: unique across replicas, and cheaper
    // than a UUID per request.
    genReqId: (raw) => {
      const given = raw.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : nextRequestId();
    },
    childLoggerFactory: (logger, bindings, opts, raw) => new LazyChild(logger, bindings, opts, raw),
  };
}

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
type ChildOptions = Parameters<FastifyBaseLogger["child"]>[1];

/**
 * A request's logger, made only when something is logged at an enabled level: a redacting pino
 * child costs more to build than most requests cost to serve, and most requests log nothing.
 */
class LazyChild {
  #real: FastifyBaseLogger | undefined;
  /** Bindings set before the logger was made. */
  #later: Record<string, unknown> | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: ChildOptions,
    private readonly raw: IncomingMessage,
  ) {}

  get level(): string {
    return this.#real?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  #logger(): FastifyBaseLogger {
    return (this.#real ??= this.parent.child(
      { ...this.bindings, ...requestBindings(this.raw), ...this.#later },
      this.options,
    ));
  }

  #log(level: Level, args: unknown[]): void {
    const enabled = (this.parent as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled;
    if (this.#real === undefined && enabled && !enabled.call(this.parent, level)) return;
    const logger = this.#logger();
    Reflect.apply(logger[level], logger, args);
  }

  fatal(...args: unknown[]): void {
    this.#log("fatal", args);
  }
  error(...args: unknown[]): void {
    this.#log("error", args);
  }
  warn(...args: unknown[]): void {
    this.#log("warn", args);
  }
  info(...args: unknown[]): void {
    this.#log("info", args);
  }
  debug(...args: unknown[]): void {
    this.#log("debug", args);
  }
  trace(...args: unknown[]): void {
    this.#log("trace", args);
  }
  silent(): void {}

  isLevelEnabled(level: string): boolean {
    const enabled = (this.parent as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled;
    return enabled ? enabled.call(this.parent, level) : true;
  }

  child(bindings: Record<string, unknown>, options?: ChildOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }

  setBindings(fields: Record<string, unknown>): void {
    if (this.#real)
      (this.#real as { setBindings?: (b: Record<string, unknown>) => void }).setBindings?.(fields);
    else this.#later = { ...this.#later, ...fields };
  }
}

/** Adds fields to a request's logger (e.g. the JSON-RPC method once the body is read). */
export function bindLog(log: FastifyBaseLogger, fields: Record<string, string>): void {
  (log as { setBindings?: (b: Record<string, string>) => void }).setBindings?.(fields);
}

/** At debug level, one line per request once answered (streams: once they end). */
export function logCompletedRequests(app: FastifyInstance): void {
  const { isLevelEnabled } = app.log as { isLevelEnabled?: (level: string) => boolean };
  // No hook at all otherwise: nothing on the hot path.
  if (!isLevelEnabled?.call(app.log, "debug")) return;
  app.addHook("onResponse", async (req, reply) => {
    req.log.debug({ req, res: { statusCode: reply.statusCode }, ms: reply.elapsedTime }, "request completed");
  });
}
