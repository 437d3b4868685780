// A provider whose tool definitions are pinned (docs/security.md "Pinned tool definitions"): every
// list it gives — any capability profile, either era, any user's own upstream (forUser) — passes
// through its PinBook, which serves, notices or holds back each tool, and so do its upstream's
// instructions. Everything else is the inner provider's, untouched: calls reach only tools a list
// served, since catalogs route by them.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { FULL_PROFILE, NO_PROFILE, type CapabilityProfile } from "../protocol/profile.js";
import {
  definitionOf,
  INSTRUCTIONS,
  instructionsDefinition,
  toolDigest,
  type Definition,
  type PinBook,
} from "./pin-book.js";
import { ForwardingProvider } from "./forwarding.js";
import type { ClientEra, Provider, ProviderEntries, ProviderEvents, UpstreamTasks } from "./types.js";

/** How often the approved set is read again, in case an approval's announcement was lost. */
const PINS_REREAD_MS = 60_000;

interface Filtered {
  readonly version: number;
  readonly tools: readonly Tool[];
}

export class PinnedProvider extends ForwardingProvider {
  /** Filtered lists by the inner list they came from, for the pins' version they were made under. */
  readonly #filtered = new WeakMap<readonly Tool[], Filtered>();
  #events: ProviderEvents | undefined;
  #reread: NodeJS.Timeout | undefined;
  readonly prepare?: (profile: CapabilityProfile) => Promise<void>;
  readonly forUser?: (user: string) => Promise<Provider>;
  readonly refresh?: () => Promise<void>;
  readonly probe?: (timeoutMs: number) => Promise<number>;
  readonly watch?: (uri: string) => () => void;

  /** `owner`: the tenant's pinned provider, for one user's (forUser): it starts and closes the book. */
  constructor(
    inner: Provider,
    readonly book: PinBook,
    private readonly owner?: PinnedProvider,
  ) {
    super(inner);
    if (inner.prepare) this.prepare = (profile) => inner.prepare!(profile);
    if (inner.forUser)
      this.forUser = async (user) => new PinnedProvider(await inner.forUser!(user), book, this);
    if (inner.refresh) this.refresh = () => inner.refresh!();
    if (inner.probe) this.probe = (timeoutMs) => inner.probe!(timeoutMs);
    if (inner.watch) this.watch = (uri) => inner.watch!(uri);
  }

  /** The inner provider's tasks: only tools a list served reach them, as calls do. */
  get tasks(): UpstreamTasks | undefined {
    return this.inner.tasks;
  }

  get prefix(): string {
    return this.inner.prefix;
  }
  get separator(): string | undefined {
    return this.inner.separator;
  }
  /** A user's own provider closes when evicted or reconnected (tenants/user-views.ts reads it). */
  get closed(): boolean | undefined {
    return (this.inner as { closed?: boolean }).closed;
  }

  /** The upstream's instructions as the pins let clients see them (PinBook.instructions). */
  override get instructions(): string | undefined {
    return this.book.instructions(this.inner.instructions);
  }

  entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries {
    const all = this.inner.entries(profile, era);
    // Portico's own connect tool is never pinned: listed by the tenant's provider (to users not
    // connected), hidden by a user's own. A user's own listed tools are the upstream's, whatever
    // their names: one called like the connect tool is checked as any other.
    const connect = this.inner.connectTool;
    const tools = this.#pinned(all.tools, this.owner ? undefined : connect);
    const hiddenTools = all.hiddenTools && this.#pinned(all.hiddenTools, connect);
    if (tools === all.tools && hiddenTools === all.hiddenTools) return all;
    return { ...all, tools, ...(hiddenTools && { hiddenTools }) };
  }

  #pinned(tools: readonly Tool[], keep: string | undefined): readonly Tool[] {
    const kept = this.#filtered.get(tools);
    if (kept?.version === this.book.version) return kept.tools;
    const filtered = this.book.filter(tools, keep);
    this.#filtered.set(tools, { version: this.book.version, tools: filtered });
    return filtered;
  }

  async start(events: ProviderEvents): Promise<void> {
    this.#events = events;
    if (!this.owner) {
      this.book.reloaded = () => this.reloadPins();
      await this.book.load();
      // Approvals are announced on the tenants channel; a message lost there is caught up here.
      this.#reread = setInterval(() => void this.reloadPins(), PINS_REREAD_MS);
      this.#reread.unref();
    }
    await this.inner.start(events);
  }

  /**
   * Approves what the upstream lists now, when nothing was approved yet (the provider was just
   * saved): to a client declaring nothing and one declaring every capability, in either era; and
   * its instructions. Resolves with the definitions approved, or undefined when a set existed
   * (here or on another replica).
   */
  async adopt(actor: string): Promise<Definition[] | undefined> {
    if (this.book.adopted) return undefined;
    await this.inner.prepare?.(FULL_PROFILE);
    const seen = new Map<string, Tool>();
    for (const profile of [NO_PROFILE, FULL_PROFILE])
      for (const era of ["session", "stateless"] as const)
        for (const tool of this.inner.entries(profile, era).tools)
          if (tool.name !== this.inner.connectTool && tool.name !== INSTRUCTIONS)
            seen.set(toolDigest(tool), tool);
    const text = this.inner.instructions;
    const definitions = [
      ...[...seen.values()].map(definitionOf),
      ...(text?.trim() ? [instructionsDefinition(text)] : []),
    ];
    if (!(await this.book.adopt(definitions, actor))) return undefined;
    await this.reloadPins();
    return definitions;
  }

  /** Reads the approved definitions again (an admin approved some, on any replica) and re-lists. */
  async reloadPins(): Promise<void> {
    if (await this.book.load()) this.#events?.listChanged("tools");
  }

  async close(): Promise<void> {
    clearInterval(this.#reread);
    if (!this.owner) this.book.close();
    await this.inner.close();
  }
}
