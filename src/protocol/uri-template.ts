// RFC 6570 level 1 URI templates (simple string expansion, `{var}`) for static resource templates:
// parsing with precise complaints, expansion (RFC 6570 §3.2.2) and the reverse match of a URI.

type Part = string | { readonly name: string };

/** RFC 6570 §2.3 varname, without pct-encoded characters. */
const VARNAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;

function parse(template: string): Part[] {
  const parts: Part[] = [];
  const seen = new Set<string>();
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf("{");
    const close = rest.indexOf("}");
    if (close !== -1 && (open === -1 || close < open)) throw new Error(`"}" without a matching "{"`);
    if (open === -1) {
      parts.push(rest);
      break;
    }
    if (open > 0) parts.push(rest.slice(0, open));
    if (close === -1) throw new Error(`"{" without a matching "}"`);
    const name = rest.slice(open + 1, close);
    if (!VARNAME.test(name))
      throw new Error(`"{${name}}" is not a simple {name} expression (only RFC 6570 level 1 is supported)`);
    if (seen.has(name)) throw new Error(`variable "${name}" appears twice`);
    seen.add(name);
    parts.push({ name });
    rest = rest.slice(close + 1);
  }
  const literal = parts.filter((p) => typeof p === "string").join("");
  if (/[\s"'<>\\^`|]/.test(literal)) throw new Error("contains characters not allowed in a URI template");
  return parts;
}

/** The template's variable names, in order. Throws an Error saying what is wrong with the template. */
export function templateVariables(template: string): string[] {
  return parse(template).flatMap((p) => (typeof p === "string" ? [] : [p.name]));
}

/** Percent-encodes everything but RFC 3986 unreserved characters (RFC 6570 §3.2.2, `U` set). */
function encodeUnreserved(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** Expands `{var}` expressions; an undefined variable expands to "" (RFC 6570 §3.2.1). */
export function expandTemplate(template: string, vars: Readonly<Record<string, string | undefined>>): string {
  return parse(template)
    .map((p) =>
      typeof p === "string" ? p : encodeUnreserved(Object.hasOwn(vars, p.name) ? (vars[p.name] ?? "") : ""),
    )
    .join("");
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Matches a URI against a template: each variable takes one or more characters other than "/".
 * Returns the percent-decoded values, or undefined when the URI does not match.
 */
export function matchTemplate(template: string, uri: string): Record<string, string> | undefined {
  const parts = parse(template);
  const names = parts.flatMap((p) => (typeof p === "string" ? [] : [p.name]));
  const source = parts.map((p) => (typeof p === "string" ? escapeRegExp(p) : "([^/]+)")).join("");
  const match = new RegExp(`^${source}$`, "u").exec(uri);
  if (!match) return undefined;
  const entries: [string, string][] = [];
  for (const [i, name] of names.entries()) {
    try {
      entries.push([name, decodeURIComponent(match[i + 1] ?? "")]);
    } catch {
      return undefined; // malformed percent-encoding: not a URI this template produces
    }
  }
  // fromEntries defines own properties, so a variable named "__proto__" stays a plain value.
  return Object.fromEntries(entries);
}
