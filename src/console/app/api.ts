// The console's one way to the admin API (docs/console.md): openapi-fetch typed from
// openapi/portico-admin.json, so a view cannot call what the API does not offer. A console session
// rides on its cookie; writes carry its CSRF token; a 401 sends the browser to the sign-in page.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./admin-api";

export type Schemas = components["schemas"];
/** Who is signed in (GET /session). */
export type Session = Schemas["ConsoleSession"];

export const SIGN_IN = "/admin/console/sign-in";

let csrf: string | undefined;

/** The CSRF token of the console session, sent on every write (`X-Portico-CSRF`). */
export function useCsrfToken(token: string | undefined): void {
  csrf = token;
}

const SAFE = new Set(["GET", "HEAD"]);

const guard: Middleware = {
  onRequest({ request }) {
    if (csrf !== undefined && !SAFE.has(request.method)) request.headers.set("x-portico-csrf", csrf);
    return request;
  },
  onResponse({ response }) {
    // No session (or it ended): sign in again. The page owns no credential it could retry with.
    if (response.status === 401) window.location.assign(SIGN_IN);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: "/admin/v1", credentials: "same-origin" });
api.use(guard);

/** An admin API refusal, its problem+json `detail` in words for the person reading the page. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function problemText(error: unknown, response: Response): string {
  const detail = (error as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === "string" && detail) return detail;
  return `The server answered ${response.status} ${response.statusText}`.trim();
}

/** The data of a successful answer; an ApiError with the problem's words otherwise. */
export async function must<T extends { data?: unknown; error?: unknown; response: Response }>(
  pending: Promise<T>,
): Promise<NonNullable<T["data"]>> {
  const { data, error, response } = await pending;
  if (!response.ok) throw new ApiError(response.status, problemText(error, response));
  return data as NonNullable<T["data"]>;
}

/** What to tell the reader about a failure. */
export function failureText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return "The server could not be reached: check the connection and try again.";
  return err instanceof Error ? err.message : String(err);
}
