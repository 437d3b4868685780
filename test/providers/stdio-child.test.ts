// The stdio child's plumbing (src/providers/mcp/stdio/child.ts): stdout split into lines whatever
// the chunks, a line past the bound skipped to its end without being kept, the clean environment,
// and the ulimit wrapper.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { childEnv, commandLine, LineSplitter } from "../../src/providers/mcp/stdio/child.js";

function split(max: number, chunks: string[]): { lines: string[]; tooLong: number[] } {
  const lines: string[] = [];
  const tooLong: number[] = [];
  const splitter = new LineSplitter(
    max,
    (l) => lines.push(l),
    (n) => tooLong.push(n),
  );
  for (const c of chunks) splitter.push(Buffer.from(c));
  return { lines, tooLong };
}

describe("LineSplitter", () => {
  it("joins a line split across chunks and splits chunks holding several, CRLF or not", () => {
    assert.deepEqual(split(100, ['{"a":', '1}\n{"b":2}\r\n{"c"', ":3}\n"]).lines, [
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
  });

  it("keeps multi-byte characters whole across chunk boundaries", () => {
    const bytes = Buffer.from('{"t":"é€"}\n');
    const lines: string[] = [];
    const splitter = new LineSplitter(
      100,
      (l) => lines.push(l),
      () => undefined,
    );
    for (const b of bytes) splitter.push(Buffer.from([b]));
    assert.deepEqual(lines, ['{"t":"é€"}']);
  });

  it("drops a line longer than the bound, reports its size, and goes on with the next", () => {
    const { lines, tooLong } = split(10, [
      "short\n",
      "x".repeat(8),
      "x".repeat(8),
      "x".repeat(8),
      "\nafter\n",
    ]);
    assert.deepEqual(lines, ["short", "after"]);
    assert.deepEqual(tooLong, [24]);
  });

  it("ignores empty lines", () => {
    assert.deepEqual(split(10, ["\n\n  \nok\n"]).lines, ["ok"]);
  });
});

describe("the child's environment and command line", () => {
  it("is its env and PATH, PATH from env winning", () => {
    assert.deepEqual(childEnv({ command: "x", args: [], env: { A: "1" }, path: "/bin" }), {
      PATH: "/bin",
      A: "1",
    });
    assert.deepEqual(childEnv({ command: "x", args: [], env: { PATH: "/opt" } }), { PATH: "/opt" });
  });

  it("runs the command as is without limits, under sh's ulimit with them", () => {
    assert.deepEqual(commandLine({ command: "node", args: ["s.js"], env: {} }), ["node", ["s.js"]]);
    const [command, args] = commandLine({
      command: "node",
      args: ["s.js", "a b"],
      env: {},
      limits: { memoryMiB: 256, cpuSeconds: 10, openFiles: 64 },
    });
    assert.equal(command, "/bin/sh");
    assert.deepEqual(args, [
      "-c",
      'ulimit -v 262144 && ulimit -t 10 && ulimit -n 64 && exec "$0" "$@"',
      "node",
      "s.js",
      "a b",
    ]);
  });

  it("applies the limits to the program it runs", { skip: process.platform === "win32" }, () => {
    const [command, args] = commandLine({
      command: "/bin/sh",
      args: ["-c", "echo $(ulimit -n) $(ulimit -t)"],
      env: {},
      limits: { openFiles: 64, cpuSeconds: 10 },
    });
    assert.equal(execFileSync(command, args, { encoding: "utf8" }).trim(), "64 10");
  });
});
