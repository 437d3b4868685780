// A provider's task settings (docs/upstream-mcp.md "Task marks"): the tools an admin marks
// task-required or task-optional — shown to clients as the tool's `execution.taskSupport`
// (2025-11-25 basic/utilities/tasks "Tool-Level Negotiation") — and after how long a call still
// running becomes a task. The schema is the setting's one description; `TaskMarks` reads it.
import { Type, type Static } from "@sinclair/typebox";
import { globMatch } from "./glob.js";
import { named } from "./schema-kit.js";

/** What a mark makes of a tool: a task it must be called as, or one it may be. */
export type TaskSupportMark = "required" | "optional";

/** A tool's own name, or a pattern of them where `*` matches any run of characters. */
const TOOL_PATTERN = /^[A-Za-z0-9_.*-]{1,128}$/;

/** The longest `afterSeconds` (an hour: the longest `timeoutMs` of an `mcp` provider). */
export const MAX_AFTER_SECONDS = 3600;

export const ProviderTasks = named(
  "ProviderTasks",
  Type.Object(
    {
      tools: Type.Optional(
        Type.Unsafe<Record<string, TaskSupportMark>>({
          type: "object",
          description:
            'Marks by the tool\'s own name (without the provider\'s prefix) or a pattern of names where `*` matches any run of characters: "required" (clients must call it as a task) or "optional" (they may). Listed to 2025-11-25 and 2026-07-28 clients as the tool\'s `execution.taskSupport`; an exact name wins over a pattern, a pattern with more characters other than `*` over one with fewer. A tool without a mark keeps what its upstream says.',
          propertyNames: {
            pattern: TOOL_PATTERN.source,
            "x-message":
              "must be a tool name or a pattern of 1–128 characters of A–Z a–z 0–9 _ . - where * matches any run of characters (no other wildcard syntax)",
          },
          additionalProperties: Type.Union([Type.Literal("required"), Type.Literal("optional")]),
          maxProperties: 1000,
        }),
      ),
      afterSeconds: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: MAX_AFTER_SECONDS,
          description:
            "For 2026-07-28 clients, whose server decides what becomes a task: a call of this provider's tools still running after this many seconds becomes a task Portico keeps. Absent: only marked tools become tasks.",
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Which of the provider\'s tools run as tasks (docs/upstream-mcp.md "Task marks"), so a long tool is never held as a plain call.',
    },
  ),
);
export type ProviderTasks = Static<typeof ProviderTasks>;

/** The patterns among a `tools` map's keys (those with a `*`). */
export function isToolPattern(key: string): boolean {
  return key.includes("*");
}

/**
 * A provider's marks, read once: the mark of a tool by its own name. An exact name wins; among
 * patterns the one with the most characters other than `*`, and at a tie "required", so the order
 * the keys were written in never matters.
 */
export class TaskMarks {
  readonly #exact = new Map<string, TaskSupportMark>();
  readonly #patterns: ReadonlyArray<readonly [pattern: string, mark: TaskSupportMark]>;
  /** After how long a call still running becomes a task (2026-07-28 clients); undefined: never. */
  readonly afterSeconds: number | undefined;

  constructor(tasks: ProviderTasks) {
    const patterns: Array<readonly [string, TaskSupportMark]> = [];
    for (const [key, mark] of Object.entries(tasks.tools ?? {}))
      if (isToolPattern(key)) patterns.push([key, mark]);
      else this.#exact.set(key, mark);
    const literal = (p: string) => p.replaceAll("*", "").length;
    patterns.sort(
      ([a, ma], [b, mb]) => literal(b) - literal(a) || (ma === mb ? 0 : ma === "required" ? -1 : 1),
    );
    this.#patterns = patterns;
    this.afterSeconds = tasks.afterSeconds;
  }

  /** The mark of the tool the provider knows as `name`; undefined when none applies. */
  of(name: string): TaskSupportMark | undefined {
    const exact = this.#exact.get(name);
    if (exact !== undefined) return exact;
    for (const [pattern, mark] of this.#patterns) if (globMatch(pattern, name)) return mark;
    return undefined;
  }
}

/** A provider record's marks; undefined when it sets none (so it lists its tools unchanged). */
export function taskMarksOf(config: { readonly tasks?: ProviderTasks }): TaskMarks | undefined {
  const tasks = config.tasks;
  if (!tasks || (Object.keys(tasks.tools ?? {}).length === 0 && tasks.afterSeconds === undefined))
    return undefined;
  return new TaskMarks(tasks);
}
