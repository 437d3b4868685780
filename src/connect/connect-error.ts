// The bridge's failures: one line for stderr each, never a stack trace (docs/connect.md).
import { AuthorizationResponseError, ResponseBodyError } from "oauth4webapi";

/** A failure the user can act on; the message is the line printed. */
export class ConnectError extends Error {
  override readonly name = "ConnectError";
}

/** One line describing any error, with the OAuth error code when there is one. */
export function describe(err: unknown): string {
  if (err instanceof AuthorizationResponseError || err instanceof ResponseBodyError)
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ""}`;
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined;
    const detail = typeof code === "string" ? ` (${code})` : "";
    return `${err.message}${detail}`.replace(/\s+/g, " ");
  }
  return String(err).replace(/\s+/g, " ");
}
