// Where secrets live inside provider records (header values, bearer tokens, client secrets), and
// one walker over them: sealing at rest (tenants/sealed.ts) and redaction in the admin API use it.

/**
 * JSON pointers to every secret value a provider record may hold; `*` matches any object key or
 * array index. A new credential field is secret once it is listed here.
 */
export const SECRET_POINTERS = [
  "/headers/*",
  "/tools/*/headers/*",
  "/auth/token",
  "/auth/clientSecret",
] as const;

type Json = unknown;

function isContainer(v: Json): v is Record<string, Json> | Json[] {
  return typeof v === "object" && v !== null;
}

function escape(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function walk(
  node: Json,
  tokens: readonly string[],
  at: string,
  fn: (value: Json, pointer: string) => Json,
): Json {
  if (tokens.length === 0) return fn(node, at);
  if (!isContainer(node)) return node;
  const [head, ...rest] = tokens as [string, ...string[]];
  const keys = head === "*" ? Object.keys(node) : Object.hasOwn(node, head) ? [head] : [];
  if (keys.length === 0) return node;
  const copy: Record<string, Json> | Json[] = Array.isArray(node) ? [...node] : { ...node };
  for (const key of keys)
    (copy as Record<string, Json>)[key] = walk(
      (node as Record<string, Json>)[key],
      rest,
      `${at}/${escape(key)}`,
      fn,
    );
  return copy;
}

/**
 * A copy of `record` with every secret value replaced by `fn(value, pointer)`; the rest is shared.
 * Works on validated records and on raw admin input alike (absent paths are skipped).
 */
export function mapSecrets<T>(record: T, fn: (value: Json, pointer: string) => Json): T {
  let out: Json = record;
  for (const pattern of SECRET_POINTERS) out = walk(out, pattern.split("/").slice(1), "", fn);
  return out as T;
}
