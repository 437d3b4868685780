// How this replica starts the child of each `stdio` upstream (docs/upstream-mcp.md "stdio
// upstreams"): the `command`, `args`, `cwd`, `env` and `limits` of a provider in the bootstrap file,
// taken out of its record before the record is stored. The store never holds them, so a write to
// the store can never become a command this replica runs (docs/security.md).

/** What a child is started with: only what the bootstrap file on this replica's filesystem says. */
export interface StdioLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** The child's whole environment besides PATH: secrets, redacted wherever they could be shown. */
  readonly env: Readonly<Record<string, string>>;
  /** Portico's own PATH, given to the child unless `env` sets one (so `npx`, `uvx` are found). */
  readonly path?: string;
  /** Resource limits set with the shell's `ulimit` before the command runs (POSIX systems). */
  readonly limits?: StdioLimits;
}

export interface StdioLimits {
  /** Virtual memory, MiB (`ulimit -v`). */
  readonly memoryMiB?: number;
  /** CPU time, seconds (`ulimit -t`): the child is killed by the kernel past it. */
  readonly cpuSeconds?: number;
  /** Open files (`ulimit -n`). */
  readonly openFiles?: number;
}

/** The launches of a bootstrap file, by launchKey(tenant, provider). */
export type StdioLaunches = ReadonlyMap<string, StdioLaunch>;

export function launchKey(tenant: string, provider: string): string {
  return `${tenant}/${provider}`;
}

/** The members of a provider entry that say how to start its child: never stored. */
export const LAUNCH_FIELDS = ["command", "args", "cwd", "env", "limits"] as const;

const LIMITS: Record<keyof StdioLimits, number> = {
  memoryMiB: 1024 * 1024,
  cpuSeconds: 365 * 24 * 3600,
  openFiles: 1024 * 1024,
};
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * The launch a `stdio` provider entry of the bootstrap file gives; throws the problem at `at`
 * (a JSON path) in words. Never names an `env` value.
 */
export function launchOf(
  entry: Readonly<Record<string, unknown>>,
  at: string,
  path: string | undefined,
): StdioLaunch {
  const { command, args = [], cwd, env = {}, limits } = entry;
  if (typeof command !== "string" || command === "" || command.length > 4096 || /\0/.test(command))
    throw new Error(`${at}.command: the program to run, a non-empty string (a stdio provider needs one)`);
  if (!Array.isArray(args) || args.length > 1000 || !args.every(plainString))
    throw new Error(`${at}.args: an array of strings (at most 1000)`);
  if (cwd !== undefined && (typeof cwd !== "string" || cwd === "" || /\0/.test(cwd)))
    throw new Error(`${at}.cwd: a directory path`);
  if (typeof env !== "object" || env === null || Array.isArray(env))
    throw new Error(`${at}.env: an object of variable names to string values`);
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name)) throw new Error(`${at}.env.${name}: not a variable name`);
    if (!plainString(value)) throw new Error(`${at}.env.${name}: must be a string`);
  }
  const checked: Record<string, number> = {};
  if (limits !== undefined) {
    if (typeof limits !== "object" || limits === null || Array.isArray(limits))
      throw new Error(`${at}.limits: an object with memoryMiB, cpuSeconds and openFiles`);
    for (const [name, value] of Object.entries(limits)) {
      const max = LIMITS[name as keyof StdioLimits];
      if (max === undefined) throw new Error(`${at}.limits.${name}: unknown limit`);
      if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max)
        throw new Error(`${at}.limits.${name}: an integer from 1 to ${max}`);
      checked[name] = value as number;
    }
  }
  const own = env as Record<string, string>;
  return {
    command,
    args: args,
    ...(cwd !== undefined && { cwd: cwd }),
    env: { ...own },
    ...(own.PATH === undefined && path !== undefined && { path }),
    ...(limits !== undefined && { limits: checked }),
  };
}

function plainString(v: unknown): v is string {
  return typeof v === "string" && v.length <= 65_536 && !v.includes("\0");
}
