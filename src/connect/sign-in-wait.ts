// What the bridge says while it waits for the user's sign-in (docs/connect.md "Signing in"): the
// time left and that Ctrl-C cancels, on one stderr line rewritten in place on a terminal, else a
// plain line at the start and then once a minute (a log file gets a few lines, not a countdown).
import type { Writable } from "node:stream";

/** Starts the notice for a wait that ends at `deadlineMs`; the function returned stops it. */
export type SignInWait = (url: string, deadlineMs: number) => () => void;

const TTY_EVERY_MS = 1000;
const PLAIN_EVERY_MS = 60_000;

/** The notice on `stderr`: rewritten every second on a TTY, a line a minute otherwise. */
export function signInWait(stderr: Writable, now: () => number = Date.now): SignInWait {
  const tty = (stderr as { isTTY?: boolean }).isTTY === true;
  return (url, deadlineMs) => {
    const left = () => `${clock(deadlineMs - now())} left`;
    const write = (text: string) => void stderr.write(text);
    if (tty) {
      const show = () =>
        write(`\r\x1b[Kportico connect: waiting for the sign-in, ${left()} (Ctrl-C cancels)`);
      show();
      const timer = setInterval(show, TTY_EVERY_MS).unref();
      return () => {
        clearInterval(timer);
        write("\r\x1b[K");
      };
    }
    write(`portico connect: waiting for the sign-in, ${left()} (Ctrl-C cancels)\n`);
    const timer = setInterval(
      () => write(`portico connect: still waiting for the sign-in at ${url}, ${left()} (Ctrl-C cancels)\n`),
      PLAIN_EVERY_MS,
    ).unref();
    return () => clearInterval(timer);
  };
}

/** `4:59` for 299 s (rounded up, so the countdown never shows 0:00 while it still waits). */
function clock(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
