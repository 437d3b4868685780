// The one MCP session a `stdio` upstream's child speaks (docs/upstream-mcp.md "stdio upstreams";
// basic/transports §stdio: newline-delimited JSON-RPC on stdin and stdout). It has the face of an
// HTTP upstream session (session/client.ts), so the session-era part's catalog, calls, healing and
// health serve it unchanged. What stdio cannot say, Portico decides here: which call a message
// belongs to. Progress names its call (its token); a log message or a request of the child is tied
// to a call only while exactly one client call is in flight, else logs go to the sessions that set
// a level and requests to `handlers` (refused on a shared child). `roots/list` is answered from the
// provider's configuration.
import { SUPPORTED_PROTOCOL_VERSIONS, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../../protocol/codes.js";
import { isRecord } from "../../../protocol/jsonrpc.js";
import { keepText, PASSED_ON } from "../../../protocol/verbatim.js";
import { PORTICO_INFO } from "../../../protocol/version.js";
import type { CallSignal } from "../exchange.js";
import { rpcError, UpstreamGone, UpstreamProtocolError } from "../upstream-errors.js";
import {
  errorObject,
  MAX_OUTSTANDING_QUESTIONS,
  SESSION_ERA_VERSION,
  type CallHooks,
  type SessionHandlers,
  type SessionRecord,
  type UpstreamSession,
} from "../session/client.js";
import { STDIN_BACKLOG_LIMIT, type StdioChild } from "./child.js";

export interface StdioSessionOptions {
  /** The roots `roots/list` is answered with (the provider's `roots`); absent: asked of `handlers`. */
  readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string }>;
  /** A log message tied to no call (the shared child's: fanned out to the sessions that set a level). */
  readonly onLog?: (params: Record<string, unknown>) => void;
  /** A request of the child tied to no call: true asks `handlers` (a child of one client's own). */
  readonly askHandlers?: boolean;
}

interface Pending {
  readonly method: string;
  readonly hooks: CallHooks | undefined;
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (err: Error) => void;
}

const NO_PARAMS: Record<string, unknown> = Object.freeze({});

export class StdioSession implements UpstreamSession {
  readonly record: SessionRecord | undefined = undefined;
  #capabilities: ServerCapabilities | undefined;
  #instructions: string | undefined;
  #nextId = 1;
  #gone: string | undefined;
  readonly #pending = new Map<number, Pending>();
  /** Client calls in flight (requests with hooks): the one a message may belong to. */
  readonly #calls = new Set<number>();
  #asking = 0;

  private constructor(
    private readonly child: StdioChild,
    private readonly handlers: SessionHandlers,
    private readonly options: StdioSessionOptions,
  ) {
    child.onLine = (line) => this.#onLine(line);
    void child.exited.then((exit) => {
      this.#ended(exit.reason);
      // A child that ended on its own: its owner replaces the session (a client's own is forgotten,
      // so its next call starts another; the shared one is opened again after the back-off).
      if (!child.stopping) handlers.gone?.(this);
    });
  }

  /** Initializes the session on a started child; the child is stopped when that fails. */
  static async initialize(
    child: StdioChild,
    capabilities: object,
    handlers: SessionHandlers,
    signal: AbortSignal,
    options: StdioSessionOptions,
  ): Promise<StdioSession> {
    const session = new StdioSession(child, handlers, options);
    try {
      const params = { protocolVersion: SESSION_ERA_VERSION, capabilities, clientInfo: PORTICO_INFO };
      const result = await session.request("initialize", params, signal);
      const version = result.protocolVersion;
      if (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
        throw new Error(`Server's protocol version is not supported: ${String(version).slice(0, 40)}`);
      session.#capabilities = isRecord(result.capabilities) ? result.capabilities : {};
      if (typeof result.instructions === "string") session.#instructions = result.instructions;
      await session.notify("notifications/initialized");
      return session;
    } catch (err) {
      void child.stop();
      throw err;
    }
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.#capabilities;
  }

  get instructions(): string | undefined {
    return this.#instructions;
  }

  /** True until the child is gone. */
  get alive(): boolean {
    return this.#gone === undefined;
  }

  request(
    method: string,
    params: Record<string, unknown> | undefined,
    signal: CallSignal | undefined,
    hooks?: CallHooks,
  ): Promise<Record<string, unknown>> {
    if (this.#gone !== undefined) return Promise.reject(new UpstreamGone(this.#gone));
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.child.backlogged) return Promise.reject(new UpstreamGone(backlogged(this.child.backlog)));
    const id = this.#nextId++;
    hooks?.sent?.(id);
    const sent = hooks?.progress
      ? { ...params, _meta: { ...(params?._meta as object), progressToken: id } }
      : params;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        this.#calls.delete(id);
        const reason = signal?.reason instanceof Error ? signal.reason.message : String(signal?.reason);
        this.#send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } });
        reject(signal?.reason as Error);
      };
      const done = () => {
        if (!signal) return;
        if (signal instanceof AbortSignal) signal.removeEventListener("abort", onAbort);
        else signal.removeListener("abort", onAbort);
      };
      this.#pending.set(id, {
        method,
        hooks,
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
      });
      if (hooks) this.#calls.add(id);
      if (signal instanceof AbortSignal) signal.addEventListener("abort", onAbort, { once: true });
      else signal?.once("abort", onAbort);
      this.#send(sent ? { jsonrpc: "2.0", id, method, params: sent } : { jsonrpc: "2.0", id, method });
    });
  }

  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.#gone !== undefined) return Promise.reject(new UpstreamGone(this.#gone));
    this.#send(params ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", method });
    return Promise.resolve();
  }

  /** Ends the session: the child is stopped (stdin closed, SIGTERM, SIGKILL). */
  async terminate(): Promise<void> {
    await this.child.stop();
  }

  /** A stdio session cannot outlive its child, nor be resumed elsewhere: closing it stops the child. */
  close(): void {
    void this.child.stop();
  }

  /** Everything arrives on stdout already: there is no stream to open. */
  openStream(): void {}

  #send(message: object): void {
    if (!this.child.write(JSON.stringify(message))) this.#ended("the stdio server is not running");
  }

  #onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return this.child.noise("a stdout line that is not JSON was ignored");
    }
    if (!isRecord(message))
      return this.child.noise("a stdout line that is not a JSON-RPC message was ignored");
    if (typeof message.method === "string") return this.#onRequestOrNotification(message, message.method);
    const id = message.id;
    const pending = typeof id === "number" ? this.#pending.get(id) : undefined;
    if (!pending) return; // an answer to nothing in flight (a cancelled request's, late)
    this.#pending.delete(id as number);
    this.#calls.delete(id as number);
    if (message.error !== undefined) return pending.reject(rpcError(message.error));
    if (!isRecord(message.result))
      return pending.reject(new UpstreamProtocolError(-1, "the upstream answered with a malformed result"));
    if (PASSED_ON.has(pending.method)) keepText(line, id as number, message, message.result);
    pending.resolve(message.result);
  }

  /** The one client call in flight, when there is exactly one. */
  #onlyCall(): CallHooks | undefined {
    if (this.#calls.size !== 1) return undefined;
    const [id] = this.#calls;
    return this.#pending.get(id!)?.hooks;
  }

  #onRequestOrNotification(message: Record<string, unknown>, method: string): void {
    const params = isRecord(message.params) ? message.params : NO_PARAMS;
    if (message.id === undefined) {
      if (method === "notifications/progress") {
        const token = params.progressToken;
        if (typeof token === "number") this.#pending.get(token)?.hooks?.progress?.(params);
      } else if (method === "notifications/message") {
        const only = this.#onlyCall();
        if (only?.log) only.log(params);
        else if (this.options.onLog) this.options.onLog(params);
        else this.handlers.notification(method, params);
      } else if (method !== "notifications/cancelled") this.handlers.notification(method, params);
      return;
    }
    const id = message.id;
    // basic/utilities/ping: the receiver MUST respond promptly, with an empty result.
    if (method === "ping") return this.#send({ jsonrpc: "2.0", id, result: {} });
    if (method === "roots/list" && this.options.roots)
      return this.#send({ jsonrpc: "2.0", id, result: { roots: this.options.roots } });
    if (this.#asking >= MAX_OUTSTANDING_QUESTIONS)
      return this.#send({ jsonrpc: "2.0", id, error: TOO_MANY_QUESTIONS });
    const only = this.#onlyCall();
    const ask = only?.request
      ? only.request
      : this.options.askHandlers
        ? (m: string, p: Record<string, unknown> | undefined) => this.handlers.request(m, p)
        : undefined;
    if (!ask) return this.#send({ jsonrpc: "2.0", id, error: this.#unroutable() });
    this.#asking++;
    void ask(method, isRecord(message.params) ? message.params : undefined).then(
      (result) => {
        this.#asking--;
        this.#send({ jsonrpc: "2.0", id, result });
      },
      (err: unknown) => {
        this.#asking--;
        this.#send({ jsonrpc: "2.0", id, error: errorObject(err) });
      },
    );
  }

  /** Why a request of the shared child reaches no client (docs/upstream-mcp.md "stdio upstreams"). */
  #unroutable(): { code: number; message: string } {
    const n = this.#calls.size;
    return {
      code: RpcCode.InternalError,
      message:
        n === 0
          ? "No client call is in flight: the gateway has no client to ask"
          : `${n} client calls are in flight on this server, and stdio does not say which one asks: refused`,
    };
  }

  #ended(reason: string): void {
    if (this.#gone !== undefined) return;
    this.#gone = reason;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#calls.clear();
    for (const p of pending) p.reject(new UpstreamGone(reason));
  }
}

/** Why a request is refused while the child reads no stdin (docs/upstream-mcp.md "stdio upstreams"). */
function backlogged(bytes: number): string {
  const mib = Math.round((bytes / (1024 * 1024)) * 10) / 10;
  return `the stdio server is not reading its input (${mib} MiB waiting, over ${STDIN_BACKLOG_LIMIT / (1024 * 1024)} MiB): request refused`;
}

const TOO_MANY_QUESTIONS = Object.freeze({
  code: RpcCode.InternalError,
  message: `More than ${MAX_OUTSTANDING_QUESTIONS} requests are waiting on the client`,
});
