// A provider whose tools an admin marked task-required or task-optional (docs/upstream-mcp.md "Task
// marks"): it answers taskMark() from its record's marks, which catalogs list as the tools'
// `execution.taskSupport`. Its lists are the inner provider's, untouched, so pinned definitions
// (pinned.ts, which wraps this) never see a mark; everything else is the inner provider's.
import type { CapabilityProfile } from "../protocol/profile.js";
import type { TaskMarks, TaskSupportMark } from "../records/task-marks.js";
import { ForwardingProvider } from "./forwarding.js";
import type { ClientEra, Provider, ProviderEntries, ProviderEvents, UpstreamTasks } from "./types.js";

export class TaskMarkedProvider extends ForwardingProvider {
  /** One view per user's own provider (forUser), as long as that provider lives. */
  readonly #users = new WeakMap<Provider, TaskMarkedProvider>();
  readonly prepare?: (profile: CapabilityProfile) => Promise<void>;
  readonly forUser?: (user: string) => Promise<Provider>;
  readonly refresh?: () => Promise<void>;
  readonly probe?: (timeoutMs: number) => Promise<number>;
  readonly watch?: (uri: string) => () => void;

  constructor(
    inner: Provider,
    private readonly marks: TaskMarks,
  ) {
    super(inner);
    if (inner.prepare) this.prepare = (profile) => inner.prepare!(profile);
    if (inner.forUser) this.forUser = async (user) => this.#viewOf(await inner.forUser!(user));
    if (inner.refresh) this.refresh = () => inner.refresh!();
    if (inner.probe) this.probe = (timeoutMs) => inner.probe!(timeoutMs);
    if (inner.watch) this.watch = (uri) => inner.watch!(uri);
  }

  #viewOf(own: Provider): TaskMarkedProvider {
    let view = this.#users.get(own);
    if (!view) {
      view = new TaskMarkedProvider(own, this.marks);
      this.#users.set(own, view);
    }
    return view;
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
  /** The upstream's own tasks, passed through as the inner provider offers them. */
  get tasks(): UpstreamTasks | undefined {
    return this.inner.tasks;
  }

  /** Portico's own connect tool (per-user providers) is never a task. */
  override taskMark(name: string): TaskSupportMark | undefined {
    return name === this.inner.connectTool ? undefined : this.marks.of(name);
  }
  override get taskAfterSeconds(): number | undefined {
    return this.marks.afterSeconds;
  }

  entries(profile?: CapabilityProfile, era?: ClientEra): ProviderEntries {
    return this.inner.entries(profile, era);
  }
  start(events: ProviderEvents): Promise<void> {
    return this.inner.start(events);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
