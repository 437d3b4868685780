// Opaque, tamper-evident cursors for admin lists: a position in one list, MACed with the list's
// name so a cursor cannot be forged or carried to another list.
import { fail } from "../protocol/errors.js";
import type { Secrets } from "../crypto/secrets.js";

export const DEFAULT_LIMIT = 50;

/** A list route's validated query: `cursor` and `limit` (1–200, absent for the default). */
export interface PageQuery {
  readonly cursor?: unknown;
  readonly limit?: unknown;
}

/** The page size a query asks for. */
export function limitOf(query: PageQuery): number {
  return typeof query.limit === "number" ? query.limit : DEFAULT_LIMIT;
}

export interface Page<T> {
  readonly items: T[];
  readonly nextCursor?: string;
}

export class PageCursors {
  constructor(private readonly secrets: Secrets) {}

  encode(list: string, position: string): string {
    const body = Buffer.from(position, "utf8").toString("base64url");
    return `${body}.${this.secrets.mac("cursor", `admin|${list}|${body}`)}`;
  }

  /** The position a cursor names; undefined for the first page; 400 for one Portico did not issue. */
  decode(list: string, cursor: unknown): string | undefined {
    if (cursor === undefined) return undefined;
    const [body, mac, extra] = typeof cursor === "string" ? cursor.split(".") : [];
    if (!body || !mac || extra !== undefined || !this.secrets.verify("cursor", `admin|${list}|${body}`, mac))
      throw fail(
        "PORTICO_ERR_ADMIN_MALFORMED",
        "Invalid cursor: pass nextCursor back exactly as it was returned, to the same list",
      );
    return Buffer.from(body, "base64url").toString("utf8");
  }

  /**
   * Pages a list held in memory, ordered by `key` (unique, ascending in list order): the page
   * starts after the item whose key the cursor names.
   */
  slice<T>(list: string, items: readonly T[], key: (item: T) => string, query: PageQuery): Page<T> {
    const limit = limitOf(query);
    const after = this.decode(list, query.cursor);
    const start = after === undefined ? 0 : items.findIndex((item) => key(item) > after);
    const rest = start < 0 ? [] : items.slice(start);
    const page = rest.slice(0, limit);
    const last = page.at(-1);
    return rest.length > limit && last !== undefined
      ? { items: page, nextCursor: this.encode(list, key(last)) }
      : { items: page };
  }
}
