// The console's build for tests that serve it (docs/console.md): `npm test` needs no build step of
// its own, so the first test that needs dist/console/app/ runs Vite once (about two seconds) when the
// build is missing or older than the app's sources. Test files run side by side: one builds, under a
// lock folder, and the others wait for it.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONSOLE_DIST } from "../../src/console/assets.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCES = [join(ROOT, "src/console/app"), join(ROOT, "vite.config.ts"), join(ROOT, "package.json")];
const LOCK = join(ROOT, "dist/.console-build-lock");
const BUILT = join(CONSOLE_DIST, "index.html");
const WAIT_MS = 60_000;

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const builtAt = () => statSync(BUILT, { throwIfNoEntry: false })?.mtimeMs ?? -1;
const fresh = () => builtAt() > Math.max(...SOURCES.map(newest));

/** Builds the console unless dist/console/app/ is newer than its sources. */
export async function buildConsole(): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!fresh()) {
    mkdirSync(join(ROOT, "dist"), { recursive: true });
    try {
      mkdirSync(LOCK);
    } catch {
      // Another test file is building: wait for it (a lock older than the deadline is stale).
      if (Date.now() > deadline) rmdirSync(LOCK);
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      const vite = spawnSync(process.execPath, [join(ROOT, "node_modules/vite/bin/vite.js"), "build"], {
        cwd: ROOT,
        encoding: "utf8",
      });
      if (vite.status !== 0)
        throw new Error(`vite build failed (${vite.status}):\n${vite.stderr}${vite.stdout}`);
    } finally {
      rmdirSync(LOCK);
    }
  }
}
