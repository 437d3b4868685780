// The admin API reference (GET /admin/docs): renders an OpenAPI 3.1 document as one self-contained
// HTML page — one inline <style>, no scripts, fonts or CDN, so it works under a CSP that allows that
// style by hash and nothing else (DOCS_PAGE_CSP). Every string taken from the document is escaped.
import { pageCsp } from "../html/page-headers.js";

export interface Ref {
  readonly $ref: string;
}

// Numeric constraints and how each reads, e.g. "length &le; 64".
const BOUNDS = {
  minimum: "&ge;",
  exclusiveMinimum: "&gt;",
  maximum: "&le;",
  exclusiveMaximum: "&lt;",
  minLength: "length &ge;",
  maxLength: "length &le;",
  minItems: "items &ge;",
  maxItems: "items &le;",
} as const;

export interface Schema extends Partial<Record<keyof typeof BOUNDS, number>> {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly format?: string;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly items?: Schema;
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly discriminator?: { readonly propertyName: string; readonly mapping?: Record<string, string> };
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly pattern?: string;
  readonly readOnly?: boolean;
  readonly writeOnly?: boolean;
  readonly [keyword: string]: unknown; // other JSON Schema keywords (title, examples, ...) are not rendered
}

export interface Parameter {
  readonly name: string;
  readonly in: "path" | "query" | "header" | "cookie";
  readonly required?: boolean;
  readonly description?: string;
  readonly schema?: Schema;
}

export type ParameterList = readonly (Parameter | Ref)[];
export type Content = Readonly<Record<string, { readonly schema?: Schema }>>;
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface RequestBody {
  readonly description?: string;
  readonly required?: boolean;
  readonly content: Content;
}

export interface Response {
  readonly description: string;
  readonly content?: Content;
  readonly headers?: Readonly<Record<string, { readonly description?: string; readonly schema?: Schema }>>;
}

export interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly deprecated?: boolean;
  readonly parameters?: ParameterList;
  readonly requestBody?: RequestBody | Ref;
  readonly responses: Readonly<Record<string, Response | Ref>>;
  readonly security?: readonly SecurityRequirement[];
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
export type PathItem = { readonly [M in (typeof METHODS)[number]]?: Operation } & {
  readonly parameters?: ParameterList;
};

export interface OpenApiDocument {
  readonly openapi?: string;
  readonly info: { readonly title: string; readonly version: string; readonly description?: string };
  readonly servers?: readonly { readonly url: string; readonly description?: string }[];
  readonly tags?: readonly { readonly name: string; readonly description?: string }[];
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly security?: readonly SecurityRequirement[];
  readonly components?: {
    readonly schemas?: Readonly<Record<string, Schema>>;
    readonly securitySchemes?: Record<string, { type: string; scheme?: string; description?: string }>;
    readonly parameters?: Readonly<Record<string, Parameter>>;
    readonly requestBodies?: Readonly<Record<string, RequestBody>>;
    readonly responses?: Readonly<Record<string, Response>>;
  };
}

const esc = (v: unknown): string => String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const code = (v: unknown): string => `<code>${esc(v)}</code>`;
const json = (v: unknown): string => code(JSON.stringify(v) ?? String(v));
/** Prose from the document: escaped first, then its Markdown inline code (`x`) set as <code>. */
const prose = (v: string): string => esc(v).replace(/`([^`\n]+)`/g, "<code>$1</code>");
const text = (v: string | undefined): string => (v ? `<div class="desc">${prose(v)}</div>` : "");
const cells = (tag: "th" | "td", xs: readonly string[]): string =>
  xs.map((x) => `<${tag}>${x}</${tag}>`).join("");
const row = (xs: readonly string[]): string => `<tr>${cells("td", xs)}</tr>`;
// A wide table scrolls inside its own box rather than widening the page.
const table = (head: readonly string[], rows: readonly string[]): string =>
  `<div class="scroll"><table><thead><tr>${cells("th", head)}</tr></thead><tbody>${rows.join("")}</tbody></table></div>`;

type Kind = "schemas" | "parameters" | "requestBodies" | "responses";

/** The component name a local `$ref` points at (RFC 6901 unescaping), or undefined. */
function refName(ref: string, kind: Kind): string | undefined {
  const prefix = `#/components/${kind}/`;
  return ref.startsWith(prefix)
    ? ref.slice(prefix.length).replace(/~1/g, "/").replace(/~0/g, "~")
    : undefined;
}

function resolve<T extends object>(doc: OpenApiDocument, kind: Kind, v: T | Ref): T | undefined {
  if (!("$ref" in v)) return v;
  const name = refName(v.$ref, kind);
  const map = doc.components?.[kind] as Readonly<Record<string, T>> | undefined;
  return name !== undefined && map && Object.hasOwn(map, name) ? map[name] : undefined;
}

const unresolved = (v: unknown): string =>
  `<p class="muted">Unresolved reference ${code((v as Ref).$ref)}</p>`;

/** A schema `$ref` is always a link to the Schemas section, never expanded: recursion cannot loop. */
function refLink(ref: string): string {
  const name = refName(ref, "schemas");
  return name === undefined ? code(ref) : `<a href="#schema-${esc(name)}">${esc(name)}</a>`;
}

/** A compact one-line type label. */
function typeOf(s: Schema): string {
  if (s.$ref !== undefined) return refLink(s.$ref);
  if (s.oneOf) return `one of ${s.oneOf.map(typeOf).join(" | ")}`;
  if (s.anyOf) return `any of ${s.anyOf.map(typeOf).join(" | ")}`;
  if (s.allOf) return `all of ${s.allOf.map(typeOf).join(" &amp; ")}`;
  const ap = s.additionalProperties;
  const label = (t: string): string =>
    t === "array"
      ? `array of ${s.items ? typeOf(s.items) : "any"}`
      : t === "object" && !s.properties && typeof ap === "object"
        ? `map of ${typeOf(ap)}`
        : esc(t);
  const types = s.type === undefined ? [] : [s.type].flat();
  return types.map(label).join(" | ") || (s.const !== undefined ? "const" : s.enum ? "enum" : "any");
}

function constraints(s: Schema): string {
  const out: string[] = [];
  if (s.format) out.push(`format ${code(s.format)}`);
  if (s.pattern) out.push(`pattern ${code(s.pattern)}`);
  if (s.const !== undefined) out.push(`const ${json(s.const)}`);
  if (s.enum) out.push(`one of ${s.enum.map(json).join(", ")}`);
  for (const [key, op] of Object.entries(BOUNDS)) {
    const bound = s[key as keyof typeof BOUNDS];
    if (bound !== undefined) out.push(`${op} ${esc(bound)}`);
  }
  if (s.default !== undefined) out.push(`default ${json(s.default)}`);
  if (s.readOnly) out.push(`<span class="mark">read-only</span>`);
  if (s.writeOnly) out.push(`<span class="mark">write-only</span>`);
  return out.length ? `<div class="c">${out.join(" &middot; ")}</div>` : "";
}

/** Expands only inline structure (properties, items, alternatives); `$ref`s stay links. */
function details(s: Schema): string {
  if (s.$ref !== undefined) return "";
  const out: string[] = [];
  const d = s.discriminator;
  if (d) {
    const map = Object.entries(d.mapping ?? {}).map(([v, ref]) => `${code(v)} &rarr; ${refLink(ref)}`);
    out.push(
      `<p class="c">Discriminated by ${code(d.propertyName)}${map.length ? `: ${map.join(", ")}` : ""}</p>`,
    );
  }
  const alts = s.oneOf ?? s.anyOf ?? s.allOf ?? [];
  if (alts.some((a) => a.$ref === undefined))
    out.push(`<ol>${alts.map((a) => `<li>${schemaBlock(a)}</li>`).join("")}</ol>`);
  if (s.properties) out.push(propertyTable(s));
  else if (typeof s.additionalProperties === "object") out.push(details(s.additionalProperties));
  if (s.items) out.push(details(s.items));
  return out.join("");
}

function propertyTable(s: Schema): string {
  const required = new Set(s.required ?? []);
  const prop = (name: string, p: Schema, req: boolean): string =>
    row([name, typeOf(p) + constraints(p), req ? "yes" : "no", text(p.description) + details(p)]);
  const rows = Object.entries(s.properties ?? {}).map(([n, p]) => prop(code(n), p, required.has(n)));
  const ap = s.additionalProperties;
  if (typeof ap === "object") rows.push(prop("<em>other keys</em>", ap, false));
  return table(["Name", "Type", "Required", "Description"], rows);
}

function schemaBlock(s: Schema): string {
  return `<div class="schema"><p>${typeOf(s)}</p>${constraints(s)}${text(s.description)}${details(s)}</div>`;
}

function contentBlock(content: Content | undefined): string {
  return Object.entries(content ?? {})
    .map(([mime, m]) => `<div>${code(mime)}${m.schema ? schemaBlock(m.schema) : ""}</div>`)
    .join("");
}

// An operation's parameter overrides a path-level one with the same name and location
// (OpenAPI 3.1, Operation Object `parameters`).
function parameters(doc: OpenApiDocument, params: ParameterList): string {
  const byKey = new Map<string, Parameter | Ref>();
  for (const raw of params) {
    const p = resolve(doc, "parameters", raw);
    byKey.set(p ? `${p.in}:${p.name}` : (raw as Ref).$ref, p ?? raw);
  }
  if (!byKey.size) return "";
  const rows = [...byKey.values()].map((p) => {
    if ("$ref" in p) return row([unresolved(p), "", "", "", ""]);
    const type = p.schema ? typeOf(p.schema) + constraints(p.schema) : "";
    return row([code(p.name), esc(p.in), p.required ? "yes" : "no", type, text(p.description)]);
  });
  return `<h4>Parameters</h4>${table(["Name", "In", "Required", "Type", "Description"], rows)}`;
}

function requestBody(doc: OpenApiDocument, raw: RequestBody | Ref | undefined): string {
  if (!raw) return "";
  const body = resolve(doc, "requestBodies", raw);
  if (!body) return `<h4>Request body</h4>${unresolved(raw)}`;
  const title = `<h4>Request body${body.required ? " (required)" : ""}</h4>`;
  return title + text(body.description) + contentBlock(body.content);
}

function responses(doc: OpenApiDocument, all: Operation["responses"]): string {
  const rows = Object.entries(all).map(([status, raw]) => {
    const r = resolve(doc, "responses", raw);
    if (!r) return row([code(status), unresolved(raw), ""]);
    const headers = Object.entries(r.headers ?? {}).map(([h, v]) => {
      const type = v.schema ? typeOf(v.schema) : "";
      return `<div class="c">Header ${code(h)} ${type} ${prose(v.description ?? "")}</div>`;
    });
    return row([code(status), text(r.description) + headers.join(""), contentBlock(r.content)]);
  });
  return `<h4>Responses</h4>${table(["Status", "Description", "Content"], rows)}`;
}

function security(reqs: readonly SecurityRequirement[] | undefined): string {
  if (!reqs) return "";
  const alts = reqs.map((r) =>
    Object.entries(r)
      .map(([n, scopes]) => code(n) + (scopes.length ? ` (${scopes.map(esc).join(", ")})` : ""))
      .join(" + "),
  );
  return `<p class="c">Authentication: ${alts.length ? alts.join(" or ") : "none"}</p>`;
}

type Entry = { id: string; method: string; path: string; op: Operation; shared: ParameterList };

const badge = (e: Entry): string =>
  `<span class="m m-${e.method}">${e.method.toUpperCase()}</span> ${code(e.path)}`;
const UNTAGGED = "Other";

function operation(doc: OpenApiDocument, e: Entry): string {
  const { op } = e;
  const flag = op.deprecated ? `<span class="mark">deprecated</span> ` : "";
  const summary = flag || op.summary ? `<p><strong>${flag}${prose(op.summary ?? "")}</strong></p>` : "";
  return [
    `<section class="op" id="${esc(e.id)}"><h3>${badge(e)}</h3>`,
    summary + text(op.description),
    security(op.security ?? doc.security),
    parameters(doc, [...e.shared, ...(op.parameters ?? [])]),
    requestBody(doc, op.requestBody),
    responses(doc, op.responses),
    `</section>`,
  ].join("");
}

/** Operations grouped by tag: declared tags first, then undeclared ones, then untagged. */
function groupByTag(doc: OpenApiDocument): [string, Entry[]][] {
  const groups = new Map<string, Entry[]>((doc.tags ?? []).map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const entry = {
        id: op.operationId ?? `${method}-${path}`,
        method,
        path,
        op,
        shared: item.parameters ?? [],
      };
      for (const tag of op.tags?.length ? op.tags : [UNTAGGED])
        groups.set(tag, [...(groups.get(tag) ?? []), entry]);
    }
  return [...groups].filter(([, entries]) => entries.length > 0);
}

function header(doc: OpenApiDocument): string {
  const { title, version, description } = doc.info;
  const servers = (doc.servers ?? []).map((s) => `<li>${code(s.url)} ${prose(s.description ?? "")}</li>`);
  const schemes = Object.entries(doc.components?.securitySchemes ?? {}).map(
    ([n, s]) => `<li>${code(n)}: ${esc(s.type)} ${esc(s.scheme ?? "")} ${prose(s.description ?? "")}</li>`,
  );
  return [
    `<header><h1>${esc(title)} <span class="muted">${esc(version)}</span></h1>${text(description)}`,
    // The console (docs/console.md) is this API's page for people.
    `<p>The same operations in a browser: <a href="/admin/console/">the admin console</a>.</p>`,
    servers.length ? `<p>Servers</p><ul>${servers.join("")}</ul>` : "",
    schemes.length ? `<p>Authentication schemes</p><ul>${schemes.join("")}</ul>` : "",
    `</header>`,
  ].join("");
}

function contents(groups: [string, Entry[]][], hasSchemas: boolean): string {
  const item = (e: Entry): string =>
    `<li><a href="#${esc(e.id)}">${badge(e)}</a> ${prose(e.op.summary ?? "")}</li>`;
  const tags = groups.map(
    ([tag, entries]) =>
      `<li><a href="#tag-${esc(tag)}">${esc(tag)}</a><ul>${entries.map(item).join("")}</ul></li>`,
  );
  const schemas = hasSchemas ? `<li><a href="#schemas">Schemas</a></li>` : "";
  return `<nav><h2>Contents</h2><ul>${tags.join("")}${schemas}</ul></nav>`;
}

// An operation with several tags is listed under each in the contents but rendered once, under its first.
function tagSection(doc: OpenApiDocument, tag: string, entries: Entry[]): string {
  const own = entries.filter((e) => (e.op.tags?.[0] ?? UNTAGGED) === tag).map((e) => operation(doc, e));
  const description = text(doc.tags?.find((t) => t.name === tag)?.description);
  return `<section id="tag-${esc(tag)}"><h2>${esc(tag)}</h2>${description}${own.join("")}</section>`;
}

function schemasSection(schemas: Readonly<Record<string, Schema>>): string {
  const each = Object.entries(schemas).map(
    ([name, s]) =>
      `<section class="op" id="schema-${esc(name)}"><h3>${esc(name)}</h3>${schemaBlock(s)}</section>`,
  );
  return `<section id="schemas"><h2>Schemas</h2>${each.join("")}</section>`;
}

/** Renders an OpenAPI document as one self-contained HTML page (inline CSS, no scripts). */
export function renderDocsPage(doc: OpenApiDocument): string {
  const groups = groupByTag(doc);
  const schemas = doc.components?.schemas ?? {};
  const hasSchemas = Object.keys(schemas).length > 0;
  return [
    `<!doctype html><html lang="en"><head><meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${esc(doc.info.title)} ${esc(doc.info.version)}</title><style>${CSS}</style></head><body>`,
    header(doc),
    contents(groups, hasSchemas),
    ...groups.map(([tag, entries]) => tagSection(doc, tag, entries)),
    hasSchemas ? schemasSection(schemas) : "",
    `</body></html>\n`,
  ].join("");
}

const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--code:#f6f8fa;
  --link:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
  --code:#151b23;--link:#4493f8}}
body{max-width:64rem;margin:0 auto;padding:1.5rem;font:15px/1.5 system-ui,sans-serif;
  background:var(--bg);color:var(--fg)}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
code{font:13px ui-monospace,Menlo,monospace;background:var(--code);padding:0 .3em;border-radius:4px;
  overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%;margin:.5rem 0}
table{border-collapse:collapse;width:100%}th{background:var(--code)}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
nav ul{list-style:none;padding-left:1rem}nav li{margin:.15rem 0}
.m{display:inline-block;min-width:4em;text-align:center;font:600 12px ui-monospace,monospace;color:#fff;
  background:#6e7781;border-radius:4px;padding:.1em .4em}
.m-get{background:#0969da}.m-post{background:#1a7f37}.m-put{background:#9a6700}
.m-patch{background:#8250df}.m-delete{background:#cf222e}
.op{border-top:1px solid var(--line);margin-top:1.5rem;padding-top:.5rem}
.desc{white-space:pre-line;overflow-wrap:anywhere}h1,h2,h3,li,p{overflow-wrap:anywhere}
.muted,.c{color:var(--muted);font-size:13px}.schema p{margin:.25rem 0}.schema table{font-size:14px}
.mark{font-size:12px;border:1px solid var(--line);border-radius:4px;padding:0 .3em}`;

/** The page's Content-Security-Policy: its one stylesheet, nothing else (docs/security.md). */
export const DOCS_PAGE_CSP = pageCsp({ styles: [CSS] });
