// What `portico connect` says while it waits for a sign-in (src/connect/sign-in-wait.ts): on a
// terminal one line rewritten in place with the time left, cleared at the end; elsewhere plain
// lines, never control characters. The end to end wait, and Ctrl-C, are in test/e2e/connect.test.ts.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { signInWait } from "../../src/connect/sign-in-wait.js";

function stderr(tty: boolean) {
  const stream = Object.assign(new PassThrough(), tty ? { isTTY: true } : {});
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

describe("signInWait", () => {
  it("on a terminal: one line rewritten every second with the time left, cleared when it ends", async () => {
    const err = stderr(true);
    const start = Date.now();
    const stop = signInWait(err.stream, () => start + (Date.now() - start))(
      "http://as/authorize",
      start + 90_000,
    );
    await new Promise((r) => setTimeout(r, 1100));
    stop();
    const text = err.text();
    assert.ok(!text.includes("\n"), "never a new line");
    const shown = text.split("\r\x1b[K").filter(Boolean);
    assert.equal(shown[0], "portico connect: waiting for the sign-in, 1:30 left (Ctrl-C cancels)");
    assert.equal(shown[1], "portico connect: waiting for the sign-in, 1:29 left (Ctrl-C cancels)");
    assert.ok(text.endsWith("\r\x1b[K"), "the line is cleared");
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(err.text(), text, "nothing after it stopped");
  });

  it("elsewhere (a log file, a client's stderr pipe): a plain line, no control characters", () => {
    const err = stderr(false);
    const stop = signInWait(err.stream, () => 0)("http://as/authorize", 299_500);
    stop();
    assert.equal(err.text(), "portico connect: waiting for the sign-in, 5:00 left (Ctrl-C cancels)\n");
  });
});
