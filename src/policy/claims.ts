// Groups and roles read from a token's or an ID token's claims (docs/policy.md "Groups and roles"):
// a claim named by the tenant's identity settings, a dotted path reaching into nested objects
// (`realm_access.roles`), holding a list of names or one name. Bounded; anything else is ignored.

/** Most names taken from a claim, and the longest name kept. */
const MAX_NAMES = 100;
const MAX_NAME_CHARS = 256;

/** The names a claim holds, or [] when the claim is absent or not names. */
export function namesFromClaim(claims: Record<string, unknown>, path: string | undefined): string[] {
  if (path === undefined) return [];
  let value: unknown = claims;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
    value = Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
  }
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
  const names = list.filter(
    (v): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_NAME_CHARS,
  );
  return [...new Set(names)].slice(0, MAX_NAMES);
}
