// The shape of an admin operation and the helpers the operation tables are written with
// (operations.ts, oauth-operations.ts).
import { ref } from "./schema-kit.js";
import { pageOf } from "./schemas.js";

type Schema = Record<string, unknown>;
export type Method = "get" | "post" | "put" | "patch" | "delete";

/**
 * "public": no key. "platform": platform keys (and platform admins) only. "tenant": platform keys,
 * or a key (or admin) of the tenant named in the path (another tenant's gets 404: existence is not
 * revealed). "any": every authenticated principal; the handler scopes what it answers.
 */
export type Access = "public" | "platform" | "tenant" | "any";

export interface Response {
  readonly description: string;
  readonly schema?: Schema;
  /** Default application/json. */
  readonly mediaType?: string;
  readonly headers?: readonly ("ETag" | "Location")[];
}

export interface Operation {
  readonly id: string;
  readonly method: Method;
  /** OpenAPI path below /admin/v1, with {parameters}. */
  readonly path: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly access: Access;
  /** Query and header parameters, by name in components.parameters. */
  readonly parameters?: readonly string[];
  /** `optional`: the request may have no body at all (as if `{}` were sent). */
  readonly body?: {
    readonly schema: Schema;
    readonly mediaTypes?: readonly string[];
    readonly optional?: boolean;
  };
  readonly responses: Readonly<Record<number, Response>>;
}

export const json = (description: string, schema: Schema, headers?: Response["headers"]): Response => ({
  description,
  schema,
  ...(headers ? { headers } : {}),
});
export const none = (description: string): Response => ({ description });
export const page = (what: string, item: string) =>
  json(`A page of ${what}, newest first where time orders them.`, pageOf(ref(item)));
export const MERGE_PATCH = ["application/merge-patch+json", "application/json"];
export const PAGED = ["limit", "cursor"];
