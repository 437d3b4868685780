// `npm start`'s prestart: compiles src/ into dist/ only when something changed since the last
// successful build (a file or folder under src/ — the console's browser app in src/console/app/
// included —, a tsconfig, package.json, the console's vite.config.ts), so a second start
// does not spend seconds in tsc. `npm run build` still always compiles. Paths are relative to the
// working directory, which npm sets to the package root; test/scripts/build-if-stale.test.ts runs
// the script in a small fixture package that way.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";

const STAMP = "dist/.build-stamp";
const INPUTS = ["tsconfig.json", "tsconfig.build.json", "package.json", "vite.config.ts"];

/** The newest modification time under a path; folders count too (a deleted file changes its folder). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return -1;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

function builtAt() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return -1;
  }
}

const changed = Math.max(newest("src"), ...INPUTS.map(newest));
if (changed < builtAt()) process.exit(0);

process.stderr.write("portico: sources changed since the last build: compiling (npm run build)\n");
const build = spawnSync("npm", ["run", "--silent", "build"], {
  stdio: "inherit",
  shell: process.platform === "win32",
});
if (build.status !== 0) process.exit(build.status ?? 1);
// Written only after a successful build: a failed one compiles again next time.
writeFileSync(STAMP, `${new Date().toISOString()}\n`);
