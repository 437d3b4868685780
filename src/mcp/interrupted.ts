// What a request gets, on either lane, when the replica running it died before answering
// (docs/architecture.md §4, docs/errors.md): its outcome is unknown, and the error says so.
import { fail, type PorticoError } from "../protocol/errors.js";

/** The error a request gets when the replica running it is gone; `data` says the outcome is unknown. */
export function interrupted(): PorticoError {
  return fail(
    "PORTICO_ERR_MCP_REQUEST_INTERRUPTED",
    "Request interrupted: the gateway replica running it stopped before answering; the work may or may not have completed, so check before sending it again",
    { interrupted: true, completed: "unknown" },
  );
}
