// `npm start`'s prestart (scripts/build-if-stale.js) in a throwaway package whose `build` script only
// counts its runs (the script works in its working directory, as npm runs it from the package root):
// stale → builds, fresh → skips, a change under src/ (an edit, a new or deleted file; the console's
// browser app too) or to a tsconfig, package.json or vite.config.ts → builds again; a failed build
// leaves no stamp.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../scripts/build-if-stale.js", import.meta.url));
const FAKE_BUILD = `import { appendFileSync, mkdirSync } from "node:fs";
if (process.env.FAIL_BUILD) { console.error("tsc: error"); process.exit(2); }
mkdirSync("dist", { recursive: true });
appendFileSync("builds.log", "built\\n");
`;

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "portico-build-if-stale-"));
  const pkg = { name: "fixture", private: true, type: "module", scripts: { build: "node build.js" } };
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg));
  writeFileSync(join(dir, "build.js"), FAKE_BUILD);
  for (const name of ["tsconfig.json", "tsconfig.build.json"]) writeFileSync(join(dir, name), "{}");
  mkdirSync(join(dir, "src/nested"), { recursive: true });
  writeFileSync(join(dir, "src/main.ts"), "export {};\n");
  writeFileSync(join(dir, "src/nested/a.ts"), "export {};\n");
  // The console's browser app and its build configuration (docs/console.md).
  mkdirSync(join(dir, "src/console/app"), { recursive: true });
  writeFileSync(join(dir, "src/console/app/main.tsx"), "export {};\n");
  writeFileSync(join(dir, "vite.config.ts"), "export default {};\n");
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the script in the fixture; what it printed, its exit code, and how many builds ran so far. */
function prestart(env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, env: { ...process.env, ...env } });
  const log = join(dir, "builds.log");
  const builds = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0;
  return { code: run.status, stderr: run.stderr.toString(), builds };
}

/**
 * Puts every input an hour back and the stamp half an hour back, so an edit made now is newer than
 * the last build and nothing else is: no test waits on file-time resolution.
 */
function settle(): void {
  const hourAgo = new Date(Date.now() - 3_600_000);
  const walk = (path: string): void => {
    utimesSync(path, hourAgo, hourAgo);
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  for (const input of ["src", "tsconfig.json", "tsconfig.build.json", "package.json", "vite.config.ts"])
    walk(join(dir, input));
  const halfHourAgo = new Date(Date.now() - 1_800_000);
  utimesSync(join(dir, "dist/.build-stamp"), halfHourAgo, halfHourAgo);
}

/** Edits a file in place, as an editor saving it would. */
function edit(path: string): void {
  appendFileSync(join(dir, path), "\n");
}

describe("scripts/build-if-stale.js", () => {
  it("never built: builds, says so on stderr, and writes the stamp", () => {
    const run = prestart();
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.builds, 1);
    assert.match(run.stderr, /sources changed since the last build: compiling/);
    assert.ok(existsSync(join(dir, "dist/.build-stamp")));
  });

  it("nothing changed: skips, silently", () => {
    settle();
    const run = prestart();
    assert.equal(run.code, 0);
    assert.equal(run.builds, 1, "no second build");
    assert.equal(run.stderr, "");
  });

  for (const path of [
    "src/nested/a.ts",
    "src/console/app/main.tsx",
    "tsconfig.json",
    "tsconfig.build.json",
    "package.json",
    "vite.config.ts",
  ])
    it(`${path} edited: builds again, then skips`, () => {
      settle();
      const before = prestart().builds;
      edit(path);
      assert.equal(prestart().builds, before + 1);
      assert.equal(prestart().builds, before + 1, "fresh again");
    });

  it("a file added under src/, then deleted: builds again each time (its folder's time changed)", () => {
    for (const change of [
      () => writeFileSync(join(dir, "src/nested/b.ts"), "export {};\n"),
      () => unlinkSync(join(dir, "src/nested/b.ts")),
    ]) {
      settle();
      const before = prestart().builds;
      change();
      assert.equal(prestart().builds, before + 1);
    }
  });

  it("a failed build: its exit code, no new stamp, so the next start compiles again", () => {
    settle();
    edit("src/main.ts");
    const stampBefore = readFileSync(join(dir, "dist/.build-stamp"), "utf8");
    const failed = prestart({ FAIL_BUILD: "1" });
    assert.equal(failed.code, 2);
    assert.match(failed.stderr, /tsc: error/);
    assert.equal(readFileSync(join(dir, "dist/.build-stamp"), "utf8"), stampBefore, "stamp untouched");
    const next = prestart();
    assert.equal(next.code, 0);
    assert.equal(next.builds, failed.builds + 1, "compiled on the next start");
  });
});
