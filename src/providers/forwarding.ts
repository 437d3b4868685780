// A provider seen through another (docs/architecture.md §3): every member is the inner provider's,
// so a view states only what it changes — a virtual server's selection and names (server-view.ts),
// pinned tool definitions (pinned.ts), task marks (task-marked.ts). Optional capabilities
// (prepare, forUser, watch, …) are each view's to offer or not.
import type { CapabilityProfile } from "../protocol/profile.js";
import type { TaskSupportMark } from "../records/task-marks.js";
import type {
  CallContext,
  ClientEra,
  CompletionRef,
  Provider,
  ProviderEntries,
  ProviderEvents,
} from "./types.js";

export abstract class ForwardingProvider implements Provider {
  constructor(readonly inner: Provider) {}

  abstract readonly prefix: string;
  abstract entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries;
  abstract start(events: ProviderEvents): Promise<void>;
  abstract close(): Promise<void>;

  get id(): string {
    return this.inner.id;
  }
  get kind() {
    return this.inner.kind;
  }
  get healthy(): boolean {
    return this.inner.healthy;
  }
  get healthReason(): string | undefined {
    return this.inner.healthReason;
  }
  get variesByProfile(): boolean | undefined {
    return this.inner.variesByProfile;
  }
  get subscribable(): boolean | undefined {
    return this.inner.subscribable;
  }
  get connectTool(): string | undefined {
    return this.inner.connectTool;
  }
  get instructions(): string | undefined {
    return this.inner.instructions;
  }
  warnings(): readonly string[] {
    return this.inner.warnings?.() ?? [];
  }
  breakerStatus() {
    return this.inner.breakerStatus?.();
  }
  asksMidCall(protocolVersion: string): boolean {
    return this.inner.asksMidCall?.(protocolVersion) ?? false;
  }
  taskMark(name: string): TaskSupportMark | undefined {
    return this.inner.taskMark?.(name);
  }
  get taskAfterSeconds(): number | undefined {
    return this.inner.taskAfterSeconds;
  }

  callTool(name: string, args: Record<string, unknown>, ctx: CallContext) {
    return this.inner.callTool(name, args, ctx);
  }
  getPrompt(name: string, args: Record<string, string>, ctx: CallContext) {
    return this.inner.getPrompt(name, args, ctx);
  }
  readResource(uri: string, ctx: CallContext) {
    return this.inner.readResource(uri, ctx);
  }
  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    contextArguments: Record<string, string> | undefined,
    ctx: CallContext,
  ) {
    return this.inner.complete(ref, argument, contextArguments, ctx);
  }
  async subscribe(uri: string, ctx: CallContext): Promise<void> {
    await this.inner.subscribe?.(uri, ctx);
  }
  async unsubscribe(uri: string, ctx: CallContext): Promise<void> {
    await this.inner.unsubscribe?.(uri, ctx);
  }
  async endSession(sessionId: string): Promise<void> {
    await this.inner.endSession?.(sessionId);
  }
  async rootsChanged(sessionId: string): Promise<void> {
    await this.inner.rootsChanged?.(sessionId);
  }
  async setLogLevel(
    sessionId: string,
    level: Parameters<NonNullable<Provider["setLogLevel"]>>[1],
  ): Promise<void> {
    await this.inner.setLogLevel?.(sessionId, level);
  }
}
