// One user's view of a per-user provider (docs/architecture.md §3): while the user has not connected,
// the provider's connect tool; once they have, their own upstream (an `mcp` provider whose every
// request carries their token, with its own upstream sessions and catalogs per profile), never
// shared with another user. The client's own token never goes upstream.
import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  LoggingLevel,
  ReadResourceResult,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../../protocol/errors.js";
import type { CapabilityProfile } from "../../protocol/profile.js";
import type {
  CallContext,
  ClientEra,
  CompletionRef,
  Provider,
  ProviderEntries,
  ProviderEvents,
  ProviderKind,
  UpstreamTasks,
} from "../types.js";
import {
  askToConnect,
  CONNECT_STATE,
  connectToolName,
  declined,
  textResult,
  type ConnectPrompt,
} from "./connect.js";
import type { UserCredentials } from "./user-credentials.js";

export interface UserUpstreamParts {
  readonly kind: ProviderKind;
  readonly id: string;
  readonly prefix: string;
  readonly separator: string | undefined;
  /** The connect tool alone (kept callable, unlisted, once the user connected). */
  readonly connectEntries: ProviderEntries;
  /** What a user who has not connected lists: the connect tool, after the pinned reference's tools if any. */
  unconnected(): ProviderEntries;
  readonly credentials: UserCredentials;
  /** False for sources with nothing to connect (token exchange): the upstream is always used. */
  readonly connectable: boolean;
  /** Builds the user's upstream provider (an `mcp` provider with the user's credentials). */
  build(): Provider;
  /** Events of the user's upstream: its list changes are this user's. */
  readonly events: ProviderEvents;
  /** A fresh connect link for this user, remembered for the request's session. */
  prompt(ctx: CallContext): Promise<ConnectPrompt>;
}

export class UserUpstream implements Provider {
  readonly kind: ProviderKind;
  readonly id: string;
  readonly prefix: string;
  readonly separator: string | undefined;
  readonly connectTool: string;
  /** Set once evicted or the provider closed: catalogs holding it are built again. */
  closed = false;
  /** When it was last used (ms): idle ones are closed by the per-user provider. */
  usedAt = Date.now();
  #inner: Provider | undefined;
  #starting: Promise<void> | undefined;
  readonly #withConnect = new WeakMap<ProviderEntries, ProviderEntries>();
  /**
   * The tools the user's upstream listed last: once the account is gone they stay callable,
   * unlisted, so a call from a list the client has not fetched again asks to connect.
   */
  #lastTools: readonly Tool[] = [];
  #gone: { from: ProviderEntries; tools: readonly Tool[]; entries: ProviderEntries } | undefined;
  /** Why no token could be had for a source with nothing to connect (the STS refused): safe words. */
  #failure: string | undefined;

  constructor(private readonly parts: UserUpstreamParts) {
    this.kind = parts.kind;
    this.id = parts.id;
    this.prefix = parts.prefix;
    this.separator = parts.separator;
    this.connectTool = connectToolName(parts.id);
  }

  /** True while the user's upstream serves them (they connected, or nothing needs connecting). */
  get connected(): boolean {
    return this.#inner !== undefined && this.parts.credentials.connected !== false;
  }

  /** Asks the source once, and starts the user's upstream when they have a token. */
  async ready(): Promise<this> {
    this.usedAt = Date.now();
    if (this.#inner || this.closed) return this;
    this.#starting ??= this.#start().finally(() => (this.#starting = undefined));
    await this.#starting;
    return this;
  }

  async #start(): Promise<void> {
    try {
      if (!(await this.parts.credentials.check())) return;
    } catch (err) {
      // UpstreamAuthError's words are safe for the client: a status and an RFC 6749 code at most.
      this.#failure = err instanceof Error ? err.message : "no token";
      return;
    }
    this.#failure = undefined;
    const inner = this.parts.build();
    await inner.start(this.parts.events);
    if (this.closed) return void inner.close().catch(() => undefined);
    this.#inner = inner;
  }

  /**
   * The user's account changed (connected again, disconnected, or its token refused): their
   * upstream closes, and starts again with what the source has at their next use.
   */
  async accountChanged(): Promise<void> {
    const inner = this.#inner;
    this.#inner = undefined;
    await inner?.close().catch(() => undefined);
  }

  get healthy(): boolean {
    return this.#inner?.healthy ?? true;
  }

  get healthReason(): string | undefined {
    return this.#inner?.healthReason;
  }

  get variesByProfile(): boolean {
    return this.#inner?.variesByProfile ?? false;
  }

  get subscribable(): boolean {
    return this.#inner?.subscribable ?? false;
  }

  entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries {
    if (!this.connected) return this.#unconnected();
    const entries = this.#inner!.entries(profile, era);
    if (entries.tools.length > 0) this.#lastTools = entries.tools;
    let withConnect = this.#withConnect.get(entries);
    if (!withConnect) {
      // The connect tool stays callable (a retry, a stale list): it says the account is connected.
      withConnect = { ...entries, hiddenTools: this.parts.connectEntries.tools };
      this.#withConnect.set(entries, withConnect);
    }
    return withConnect;
  }

  /** What a user who has not connected lists, with the tools they had (if any) hidden. */
  #unconnected(): ProviderEntries {
    const from = this.parts.unconnected();
    const tools = this.#lastTools;
    if (tools.length === 0) return from;
    if (this.#gone?.from !== from || this.#gone.tools !== tools)
      this.#gone = {
        from,
        tools,
        entries: { ...from, hiddenTools: [...(from.hiddenTools ?? []), ...tools] },
      };
    return this.#gone.entries;
  }

  async prepare(profile: CapabilityProfile): Promise<void> {
    await this.#inner?.prepare?.(profile);
  }

  readonly asksMidCall = (protocolVersion: string): boolean =>
    this.connected ? (this.#inner!.asksMidCall?.(protocolVersion) ?? true) : false;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    await this.accountChanged();
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    this.usedAt = Date.now();
    if (name === connectToolName(this.id) && !this.connected) return this.#ask(ctx);
    if (name === connectToolName(this.id))
      return textResult(`Your ${this.id} account is connected: its tools are listed.`, false);
    if (!this.connected) return this.#ask(ctx);
    const result = await this.#inner!.callTool(name, args, withoutConnectState(ctx));
    // The token was refused or revoked during the call: the user is asked to connect again.
    return this.parts.credentials.connected === false && this.parts.connectable ? this.#ask(ctx) : result;
  }

  async #ask(ctx: CallContext): Promise<CallToolResult> {
    if (!this.parts.connectable) return this.#tryAgain();
    if (declined(ctx))
      return textResult(`Your ${this.id} account is not connected: the link was declined.`, true);
    return askToConnect(await this.parts.prompt(ctx), ctx);
  }

  /** A source with nothing to connect failed: calling the connect tool tries once more. */
  async #tryAgain(): Promise<CallToolResult> {
    await this.ready();
    if (!this.connected)
      return textResult(
        `Provider '${this.id}' ${this.#failure ?? "could not obtain a token for this user"}`,
        true,
      );
    this.parts.events.listChanged("tools");
    return textResult(`Your ${this.id} account is connected: its tools are listed.`, false);
  }

  /**
   * The user's upstream's own tasks, once they connected (docs/upstream-mcp.md "Tasks passed
   * through"): their task sessions are opened with their token, as their calls' sessions are.
   */
  readonly tasks: UpstreamTasks = {
    support: (name, ctx) => (this.connected ? this.#inner!.tasks?.support(name, ctx) : undefined),
    start: (name, args, task, ctx) => this.#tasks().start(name, args, task, withoutConnectState(ctx)),
    get: (ref, ctx) => this.#tasks().get(ref, ctx),
    result: (ref, ctx) => this.#tasks().result(ref, withoutConnectState(ctx)),
    cancel: (ref, ctx) => this.#tasks().cancel(ref, ctx),
    watch: (ref, onStatus, ctx) => this.#inner?.tasks?.watch(ref, onStatus, ctx) ?? (() => undefined),
  };

  #tasks(): UpstreamTasks {
    const tasks = this.#use().tasks;
    if (tasks) return tasks;
    throw fail("PORTICO_ERR_PROVIDER_UNAVAILABLE", `Provider '${this.id}' runs no tasks of its own`);
  }

  #use(): Provider {
    this.usedAt = Date.now();
    if (this.connected) return this.#inner!;
    throw fail(
      "PORTICO_ERR_PROVIDER_UNAVAILABLE",
      `Connect your ${this.id} account first: call the tool ${connectToolName(this.id)}`,
    );
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: CallContext): Promise<GetPromptResult> {
    return this.#use().getPrompt(name, args, withoutConnectState(ctx));
  }

  async readResource(uri: string, ctx: CallContext): Promise<ReadResourceResult> {
    return this.#use().readResource(uri, withoutConnectState(ctx));
  }

  async complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    contextArguments: Record<string, string> | undefined,
    ctx: CallContext,
  ): Promise<CompleteResult> {
    return this.#use().complete(ref, argument, contextArguments, ctx);
  }

  async subscribe(uri: string, ctx: CallContext): Promise<void> {
    await this.#use().subscribe?.(uri, ctx);
  }

  async unsubscribe(uri: string, ctx: CallContext): Promise<void> {
    await this.#inner?.unsubscribe?.(uri, ctx);
  }

  async endSession(sessionId: string): Promise<void> {
    await this.#inner?.endSession?.(sessionId);
  }

  async rootsChanged(sessionId: string): Promise<void> {
    await this.#inner?.rootsChanged?.(sessionId);
  }

  async setLogLevel(sessionId: string, level: LoggingLevel): Promise<void> {
    await this.#inner?.setLogLevel?.(sessionId, level);
  }
}

/**
 * The context of a retry that answered a connect prompt, without that prompt's state: the
 * upstream never sees Portico's requestState. Getters and methods run on the real context.
 */
function withoutConnectState(ctx: CallContext): CallContext {
  if (ctx.mrtr?.requestState !== CONNECT_STATE) return ctx;
  return new Proxy(ctx, {
    get(target, prop) {
      if (prop === "mrtr") return {};
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
