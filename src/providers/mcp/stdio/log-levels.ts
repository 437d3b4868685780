// Log levels of the client sessions sharing one `stdio` child (docs/upstream-mcp.md "stdio
// upstreams"): the child is set to the most verbose level any of them asked for, and each of its
// log messages tied to no call goes to every session whose own level it passes
// (server/utilities/logging).
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { isLogLevel, LOG_LEVELS, logPasses } from "../../../protocol/log-levels.js";
import type { SessionOutlet } from "../../types.js";

/** Client sessions tracked at once per provider and replica; the oldest goes past it. */
const MAX_SESSIONS = 10_000;

export class SharedLogLevels {
  readonly #levels = new Map<string, LoggingLevel>();
  #applied: LoggingLevel | undefined;

  constructor(
    private readonly outlet: SessionOutlet,
    private readonly tenantId: string,
    /** Sets the child's level (logging/setLevel). */
    private readonly apply: (level: LoggingLevel) => Promise<void>,
  ) {}

  /** The most verbose level asked for, if any. */
  get level(): LoggingLevel | undefined {
    let min: number | undefined;
    for (const level of this.#levels.values()) {
      const i = LOG_LEVELS.indexOf(level);
      if (min === undefined || i < min) min = i;
    }
    return min === undefined ? undefined : LOG_LEVELS[min];
  }

  /** A session set its level (logging/setLevel). */
  async set(sid: string, level: LoggingLevel): Promise<void> {
    this.#levels.delete(sid);
    this.#levels.set(sid, level);
    if (this.#levels.size > MAX_SESSIONS) this.#levels.delete(this.#levels.keys().next().value!);
    await this.#sync();
  }

  /** A request of a session whose level was set on another replica: known here from now on. */
  seen(sid: string, level: LoggingLevel): void {
    if (this.#levels.get(sid) !== level) void this.set(sid, level).catch(() => undefined);
  }

  remove(sid: string): void {
    this.#levels.delete(sid);
  }

  /** The child was started again: it is told the level it had. */
  async restore(): Promise<void> {
    this.#applied = undefined;
    await this.#sync();
  }

  /** A log message of the child tied to no call, to every session whose level it passes. */
  fanOut(params: Record<string, unknown>): void {
    if (!isLogLevel(params.level)) return;
    for (const [sid, level] of this.#levels)
      if (logPasses(params.level, level))
        void this.outlet.notify(this.tenantId, sid, "notifications/message", params).catch(() => undefined);
  }

  async #sync(): Promise<void> {
    const level = this.level;
    if (level === undefined || level === this.#applied) return;
    this.#applied = level;
    await this.apply(level);
  }
}
