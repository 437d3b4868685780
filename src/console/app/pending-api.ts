// The admin API operations the console relies on that the OpenAPI document does not have yet: typed
// here from their agreed contract (docs/console.md). The typed client takes a generated path over
// one of these as soon as the document has it (AdminPaths in api.ts), so this file only shrinks;
// delete each entry once `npm run docs` brings its operation into admin-api.d.ts.
import type { components } from "./admin-api";

type Problem = { content: { "application/problem+json": components["schemas"]["Problem"] } };
type Never = { query?: never; header?: never; path?: never; cookie?: never };

/** Who is signed in: a console session (with its CSRF token) or an API key. */
export interface SessionInfo {
  via: "session" | "key";
  platform: boolean;
  tenant: string | null;
  name: string;
  csrf?: string;
  expiresAt?: string;
}

export type TryMethod =
  | "tools/list"
  | "tools/call"
  | "resources/list"
  | "resources/templates/list"
  | "resources/read"
  | "prompts/list"
  | "prompts/get";

export type TryAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };

/** A time series: `[unixSeconds, value]` pairs. */
export type Series = { tenant: string; provider?: string; points: number[][] };

export interface Traffic {
  source: "prometheus" | "replica";
  replica?: string;
  stepSeconds: number;
  from: string;
  to: string;
  requests: Series[];
  errors: Series[];
  latency: { tenant: string; quantile: "0.5" | "0.95" | "0.99"; points: number[][] }[];
}

export interface PendingPaths {
  "/session": {
    parameters: Never;
    get: {
      parameters: Never;
      requestBody?: never;
      responses: { 200: { content: { "application/json": SessionInfo } }; 401: Problem };
    };
    delete: {
      parameters: Never;
      requestBody?: never;
      responses: { 204: { content?: never }; 401: Problem; 403: Problem };
    };
  };
  "/tenants/{tenant}/try": {
    parameters: Never;
    post: {
      parameters: { query?: never; header?: never; path: { tenant: string }; cookie?: never };
      requestBody: {
        content: {
          "application/json": { method: TryMethod; params?: Record<string, unknown>; server?: string };
        };
      };
      responses: {
        200: { content: { "application/json": TryAnswer } };
        400: Problem;
        403: Problem;
        404: Problem;
      };
    };
  };
  "/traffic": {
    parameters: Never;
    get: {
      parameters: {
        query?: { minutes?: number; tenant?: string };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: { 200: { content: { "application/json": Traffic } }; 400: Problem; 403: Problem };
    };
  };
}
