// A request's Cancellation (basic/utilities/cancellation) as a provider's Deadline follows it: with
// no AbortSignal made, and the same verdicts as one.
import assert from "node:assert/strict";
import { it } from "node:test";
import { Cancellation } from "../../src/mcp/cancellation.js";
import { Deadline } from "../../src/providers/deadline.js";

it("a Deadline following a Cancellation aborts with its reason, and stops listening once disposed", () => {
  const cancellation = new Cancellation();
  const deadline = new Deadline(60_000, cancellation);
  const later = new Deadline(60_000, cancellation);
  later.dispose();
  const reason = new Error("cancelled by the client");
  cancellation.abort(reason);
  assert.equal(deadline.aborted, true);
  assert.equal(deadline.reason, reason);
  assert.equal(deadline.timedOut, false);
  // A disposed deadline took its listener back: the abort never reached it.
  assert.equal(later.aborted, false);
  deadline.dispose();
});

it("listeners run once; none added after the abort, none removed before it", () => {
  const cancellation = new Cancellation();
  let runs = 0;
  let removedRuns = 0;
  const listener = { handleEvent: () => void runs++ };
  const removed = { handleEvent: () => void removedRuns++ };
  cancellation.addEventListener("abort", listener);
  cancellation.addEventListener("abort", removed);
  cancellation.removeEventListener("abort", removed);
  cancellation.abort(new Error("first"));
  cancellation.abort(new Error("second"));
  cancellation.addEventListener("abort", listener);
  assert.equal(runs, 1);
  assert.equal(removedRuns, 0);
  assert.equal((cancellation.reason as Error).message, "first");
});

it("a Deadline made after the abort starts aborted; an AbortSignal asked for later is aborted too", () => {
  const cancellation = new Cancellation();
  cancellation.abort(new Error("gone"));
  const deadline = new Deadline(60_000, cancellation);
  assert.equal(deadline.aborted, true);
  deadline.dispose();
  assert.equal(cancellation.signal.aborted, true);
  assert.equal((cancellation.signal.reason as Error).message, "gone");
});
