// Provider and tenant records as configured (bootstrap file now, admin API later), and their
// validation. A record that passes validateTenant() is safe to build providers from.
import { fail } from "../errors.js";
import { templateVariables } from "./uri-template.js";

export interface ProviderConfigBase {
  /** Slug, unique within the tenant. */
  readonly id: string;
  /** Name prefix for this provider's tools and prompts; "" or absent for none. */
  readonly prefix?: string;
  /** Between prefix and name; default "__". */
  readonly separator?: string;
}

export interface StaticPromptArgument {
  readonly name: string;
  readonly description?: string;
  readonly required?: boolean;
  /** Completion values offered for this argument. */
  readonly values?: readonly string[];
}

export interface StaticPromptMessage {
  readonly role: "user" | "assistant";
  /** Text with {{argument}} placeholders. */
  readonly text: string;
}

export interface StaticPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly StaticPromptArgument[];
  readonly messages: readonly StaticPromptMessage[];
}

export interface StaticResource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Exactly one of text and blob (base64). */
  readonly text?: string;
  readonly blob?: string;
}

export interface StaticResourceTemplate {
  /** RFC 6570 level-1 template, e.g. "docs://pages/{page}". */
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  /** Content with {variable} placeholders, expanded with the values taken from the URI. */
  readonly text: string;
  /** Completion values per template variable. */
  readonly values?: Readonly<Record<string, readonly string[]>>;
}

export interface StaticProviderConfig extends ProviderConfigBase {
  readonly kind: "static";
  readonly prompts?: readonly StaticPrompt[];
  readonly resources?: readonly StaticResource[];
  readonly resourceTemplates?: readonly StaticResourceTemplate[];
}

export interface HttpTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default 30 000. */
  readonly timeoutMs?: number;
}

export interface HttpProviderConfig extends ProviderConfigBase {
  readonly kind: "http";
  readonly tools: readonly HttpTool[];
}

export interface McpProviderConfig extends ProviderConfigBase {
  readonly kind: "mcp";
  /** Streamable HTTP endpoint of the upstream MCP server. */
  readonly url: string;
  /** Static headers sent upstream (e.g. an API key); never the client's token. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-call timeout; default PORTICO_UPSTREAM_TIMEOUT_MS. */
  readonly timeoutMs?: number;
}

export type ProviderConfig = StaticProviderConfig | HttpProviderConfig | McpProviderConfig;

export interface TenantConfig {
  /** Slug `^[a-z0-9][a-z0-9-]{0,62}$`; the MCP URL is /mcp/{id}. */
  readonly id: string;
  /** "none" serves without authentication (demos, conformance); "oauth" arrives with OAuth. */
  readonly auth: "none" | "oauth";
  readonly name?: string;
  readonly providers: readonly ProviderConfig[];
}

export const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Exposed tool and prompt names: 1–64 characters (conformance `tools-name-format`). */
export const EXPOSED_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const DEFAULT_SEPARATOR = "__";

/** The name a client sees for a provider's tool or prompt. */
export function exposedName(provider: ProviderConfigBase, name: string): string {
  return provider.prefix ? `${provider.prefix}${provider.separator ?? DEFAULT_SEPARATOR}${name}` : name;
}

// ---- Validation: hand-written so every message names the JSON path of the offending value. ----

type Obj = Record<string, unknown>;

function bad(path: string, problem: string): never {
  throw fail("PORTICO_ERR_CONFIG_INVALID", `${path}: ${problem}`, { path });
}

function at(path: string, key: string | number): string {
  return typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
}

function isObject(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Levenshtein distance, to suggest the key a typo meant. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length] ?? 0;
}

/** A plain object whose keys are all known; typos get a suggestion. */
function record(v: unknown, path: string, keys: readonly string[]): Obj {
  if (!isObject(v)) bad(path, "must be an object");
  for (const key of Object.keys(v)) {
    if (keys.includes(key)) continue;
    const near = keys.find((k) => distance(k.toLowerCase(), key.toLowerCase()) <= 2);
    const hint = near ? `did you mean "${near}"?` : `known keys: ${keys.join(", ")}`;
    bad(at(path, key), `unknown key (${hint})`);
  }
  return v;
}

function str(o: Obj, key: string, path: string, required: true): string;
function str(o: Obj, key: string, path: string, required?: false): string | undefined;
function str(o: Obj, key: string, path: string, required = false): string | undefined {
  const v = o[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string" || (required && v === "")) bad(at(path, key), "must be a non-empty string");
  return v;
}

function matching(o: Obj, key: string, path: string, pattern: RegExp, rule: string): string {
  const v = o[key];
  if (typeof v !== "string") bad(at(path, key), `must be a string: ${rule}`);
  if (!pattern.test(v)) bad(at(path, key), `${JSON.stringify(v)} must be ${rule}`);
  return v;
}

function optional(o: Obj, key: string, path: string, pattern: RegExp, rule: string): string | undefined {
  return o[key] === undefined ? undefined : matching(o, key, path, pattern, rule);
}

function bool(o: Obj, key: string, path: string): boolean | undefined {
  const v = o[key];
  if (v !== undefined && typeof v !== "boolean") bad(at(path, key), "must be true or false");
  return v;
}

function int(o: Obj, key: string, path: string, min: number, max: number): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    bad(at(path, key), `must be a whole number from ${min} to ${max}`);
  return v;
}

function list(o: Obj, key: string, path: string, required = false): unknown[] {
  const v = o[key];
  if (v === undefined && !required) return [];
  if (!Array.isArray(v)) bad(at(path, key), "must be an array");
  return v;
}

function strings(o: Obj, key: string, path: string): string[] | undefined {
  if (o[key] === undefined) return undefined;
  return list(o, key, path).map((v, i) =>
    typeof v === "string" ? v : bad(at(at(path, key), i), "must be a string"),
  );
}

function httpUrl(o: Obj, key: string, path: string): string {
  const v = str(o, key, path, true);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    bad(at(path, key), "must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") bad(at(path, key), "must be an http(s) URL");
  if (url.username || url.password) bad(at(path, key), "must not carry credentials; put them in headers");
  return v;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HOP_HEADER = /^(?:host|content-length|connection|transfer-encoding|keep-alive|upgrade|te)$/i;

/** Header values never appear in messages: they are often secrets. */
function headers(o: Obj, key: string, path: string): Record<string, string> | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!isObject(v)) bad(at(path, key), "must be an object of header name → string value");
  for (const [name, value] of Object.entries(v)) {
    const where = at(at(path, key), name);
    if (!HEADER_NAME.test(name)) bad(where, "is not a valid header name");
    if (HOP_HEADER.test(name)) bad(where, "is set by Portico and cannot be configured");
    if (typeof value !== "string" || /[\r\n\0]/.test(value))
      bad(where, "value must be a string without line breaks");
  }
  return { ...(v as Record<string, string>) };
}

function jsonObject(o: Obj, key: string, path: string, schema = false): Record<string, unknown> | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!isObject(v) || (schema && v.type !== "object"))
    bad(at(path, key), schema ? 'must be a JSON Schema object with "type": "object"' : "must be an object");
  return structuredClone(v);
}

/** Drops undefined members so records round-trip as the JSON they came from. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Rejects a second entry with the same key; `label` says what the key is. */
function unique(seen: Map<string, string>, value: string, path: string, label: string): void {
  const first = seen.get(value);
  if (first !== undefined) bad(path, `duplicate ${label} ${JSON.stringify(value)} (also ${first})`);
  seen.set(value, path);
}

const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/;
const ARGUMENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const PLACEHOLDER = /\{\{\s*([^{}\s]*)\s*\}\}/g;
const PREFIX = /^[A-Za-z0-9_.-]{0,32}$/;
const SEPARATOR = /^[A-Za-z0-9_.-]{0,8}$/;
const NAME_RULE = "1–64 characters of A–Z a–z 0–9 _ . -";
const SLUG_RULE = "a lowercase slug: a–z, 0–9 and -, starting with a letter or digit, at most 63 characters";

const META_KEYS = ["name", "title", "description"];

/** Name, title and description: the metadata every entry shares. */
function meta(o: Obj, path: string): { name: string; title?: string; description?: string } {
  return {
    name: str(o, "name", path, true),
    title: str(o, "title", path),
    description: str(o, "description", path),
  };
}

function mimeType(o: Obj, path: string): string | undefined {
  return optional(o, "mimeType", path, MIME_TYPE, "a MIME type such as text/plain");
}

function exposed(provider: ProviderConfigBase, o: Obj, path: string): void {
  const name = exposedName(provider, o.name as string);
  if (!EXPOSED_NAME.test(name))
    bad(at(path, "name"), `exposed name ${JSON.stringify(name)} must be ${NAME_RULE}`);
}

function promptArgument(v: unknown, path: string): StaticPromptArgument {
  const o = record(v, path, ["name", "description", "required", "values"]);
  return compact({
    name: matching(o, "name", path, ARGUMENT_NAME, NAME_RULE),
    description: str(o, "description", path),
    required: bool(o, "required", path),
    values: strings(o, "values", path),
  });
}

function promptMessage(v: unknown, path: string, args: readonly string[]): StaticPromptMessage {
  const o = record(v, path, ["role", "text"]);
  if (o.role !== "user" && o.role !== "assistant") bad(at(path, "role"), 'must be "user" or "assistant"');
  const text = o.text;
  if (typeof text !== "string") bad(at(path, "text"), "must be a string");
  for (const [, name] of text.matchAll(PLACEHOLDER))
    if (!args.includes(name ?? ""))
      bad(at(path, "text"), `placeholder {{${name}}} names no argument of the prompt`);
  return { role: o.role, text };
}

function prompt(v: unknown, path: string, provider: ProviderConfigBase): StaticPrompt {
  const o = record(v, path, [...META_KEYS, "arguments", "messages"]);
  const head = meta(o, path);
  exposed(provider, o, path);
  const seen = new Map<string, string>();
  const args = list(o, "arguments", path).map((a, i) => {
    const arg = promptArgument(a, at(at(path, "arguments"), i));
    unique(seen, arg.name, at(at(at(path, "arguments"), i), "name"), "argument");
    return arg;
  });
  const names = args.map((a) => a.name);
  const messages = list(o, "messages", path, true).map((m, i) =>
    promptMessage(m, at(at(path, "messages"), i), names),
  );
  if (messages.length === 0) bad(at(path, "messages"), "must hold at least one message");
  return compact({ ...head, arguments: o.arguments === undefined ? undefined : args, messages });
}

function resource(v: unknown, path: string): StaticResource {
  const o = record(v, path, ["uri", ...META_KEYS, "mimeType", "text", "blob"]);
  const uri = matching(o, "uri", path, URI_SCHEME, "an absolute URI with a scheme, e.g. docs://guide");
  if ((o.text === undefined) === (o.blob === undefined)) bad(path, 'set exactly one of "text" and "blob"');
  if (o.text !== undefined && typeof o.text !== "string") bad(at(path, "text"), "must be a string");
  if (o.blob !== undefined && (typeof o.blob !== "string" || !BASE64.test(o.blob)))
    bad(at(path, "blob"), "must be base64 (RFC 4648 §4, with padding)");
  return compact({
    uri,
    ...meta(o, path),
    mimeType: mimeType(o, path),
    text: o.text,
    blob: o.blob,
  });
}

function templateValues(
  o: Obj,
  path: string,
  variables: readonly string[],
): StaticResourceTemplate["values"] {
  const v = o.values;
  if (v === undefined) return undefined;
  if (!isObject(v)) bad(at(path, "values"), "must be an object of template variable → array of strings");
  for (const key of Object.keys(v))
    if (!variables.includes(key)) bad(at(at(path, "values"), key), "is not a variable of the uriTemplate");
  return Object.fromEntries(Object.keys(v).map((key) => [key, strings(v, key, at(path, "values")) ?? []]));
}

function resourceTemplate(v: unknown, path: string): StaticResourceTemplate {
  const o = record(v, path, ["uriTemplate", ...META_KEYS, "mimeType", "text", "values"]);
  const uriTemplate = matching(o, "uriTemplate", path, URI_SCHEME, "an absolute URI template with a scheme");
  let variables: string[];
  try {
    variables = templateVariables(uriTemplate);
  } catch (err) {
    bad(at(path, "uriTemplate"), (err as Error).message);
  }
  if (variables.length === 0)
    bad(at(path, "uriTemplate"), "has no {variable}; declare it as a resource instead");
  if (typeof o.text !== "string") bad(at(path, "text"), "must be a string");
  const values = templateValues(o, path, variables);
  return compact({ uriTemplate, ...meta(o, path), mimeType: mimeType(o, path), text: o.text, values });
}

/** The entries under `key`, each checked, unique by `field`; undefined when the key is absent. */
function entriesOf<T extends object, K extends keyof T>(
  o: Obj,
  key: string,
  path: string,
  check: (v: unknown, path: string, base: ProviderConfigBase) => T,
  field: K,
  base: ProviderConfigBase,
): T[] | undefined {
  if (o[key] === undefined) return undefined;
  const seen = new Map<string, string>();
  return list(o, key, path).map((v, i) => {
    const entry = check(v, at(at(path, key), i), base);
    unique(seen, String(entry[field]), at(at(at(path, key), i), String(field)), String(field));
    return entry;
  });
}

function staticProvider(o: Obj, path: string, base: ProviderConfigBase): StaticProviderConfig {
  return compact({
    ...base,
    kind: "static" as const,
    prompts: entriesOf(o, "prompts", path, prompt, "name", base),
    resources: entriesOf(o, "resources", path, resource, "uri", base),
    resourceTemplates: entriesOf(o, "resourceTemplates", path, resourceTemplate, "uriTemplate", base),
  });
}

function httpTool(v: unknown, path: string, provider: ProviderConfigBase): HttpTool {
  const o = record(v, path, [
    ...META_KEYS,
    "inputSchema",
    "outputSchema",
    "annotations",
    "url",
    "headers",
    "timeoutMs",
  ]);
  const head = meta(o, path);
  exposed(provider, o, path);
  return compact({
    ...head,
    inputSchema: jsonObject(o, "inputSchema", path, true),
    outputSchema: jsonObject(o, "outputSchema", path, true),
    annotations: jsonObject(o, "annotations", path),
    url: httpUrl(o, "url", path),
    headers: headers(o, "headers", path),
    timeoutMs: int(o, "timeoutMs", path, 1, 600_000),
  });
}

const KIND_KEYS = {
  static: ["prompts", "resources", "resourceTemplates"],
  http: ["tools"],
  mcp: ["url", "headers", "timeoutMs"],
} as const;

function kindSpecific(o: Obj, path: string, base: ProviderConfigBase): ProviderConfig {
  switch (o.kind) {
    case "static":
      return staticProvider(o, path, base);
    case "http": {
      const tools = entriesOf(o, "tools", path, httpTool, "name", base);
      if (!tools) bad(at(path, "tools"), "is required: list the provider's tools");
      return { ...base, kind: "http", tools };
    }
    default: {
      const url = httpUrl(o, "url", path);
      const timeoutMs = int(o, "timeoutMs", path, 1, 3_600_000);
      return compact({ ...base, kind: "mcp" as const, url, headers: headers(o, "headers", path), timeoutMs });
    }
  }
}

type Claim = [space: string, value: string, path: string];

/** What a provider adds to the tenant's shared namespaces. */
function claims(p: ProviderConfig): Claim[] {
  if (p.kind === "mcp") return []; // an upstream's entries are known only at run time
  if (p.kind === "http")
    return p.tools.map((t, i) => ["tool name", exposedName(p, t.name), `tools[${i}].name`]);
  const prompts = (p.prompts ?? []).map((e, i): Claim => [
    "prompt name",
    exposedName(p, e.name),
    `prompts[${i}].name`,
  ]);
  return [
    ...prompts,
    ...(p.resources ?? []).map((e, i): Claim => ["resource URI", e.uri, `resources[${i}].uri`]),
  ];
}

function checkAgainst(p: ProviderConfig, path: string, others: readonly ProviderConfig[]): void {
  for (const other of others) {
    if (other.id === p.id) bad(at(path, "id"), `another provider of this tenant already has id "${p.id}"`);
    const theirs = new Set(claims(other).map(([space, value]) => `${space}\n${value}`));
    for (const [space, value, inner] of claims(p)) {
      if (!theirs.has(`${space}\n${value}`)) continue;
      const fix =
        space === "resource URI" ? "resource URIs must be unique per tenant" : 'give one of them a "prefix"';
      bad(
        `${path}.${inner}`,
        `${space} "${value}" of provider "${p.id}" collides with provider "${other.id}"; ${fix}`,
      );
    }
  }
}

/**
 * Validates one provider record. `others` are the tenant's other providers: ids and exposed
 * names must not collide with theirs. Throws PORTICO_ERR_CONFIG_INVALID naming the JSON path.
 */
export function validateProvider(
  input: unknown,
  where = "provider",
  others: readonly ProviderConfig[] = [],
): ProviderConfig {
  if (!isObject(input)) bad(where, "must be an object");
  const kind = input.kind;
  if (kind !== "static" && kind !== "http" && kind !== "mcp")
    bad(at(where, "kind"), 'must be "static", "http" or "mcp"');
  const o = record(input, where, ["id", "kind", "prefix", "separator", ...KIND_KEYS[kind]]);
  const base: ProviderConfigBase = compact({
    id: matching(o, "id", where, SLUG, SLUG_RULE),
    prefix: optional(o, "prefix", where, PREFIX, "at most 32 characters of A–Z a–z 0–9 _ . -"),
    separator: optional(o, "separator", where, SEPARATOR, "at most 8 characters of A–Z a–z 0–9 _ . -"),
  });
  const provider = kindSpecific(o, where, base);
  checkAgainst(provider, where, others);
  return provider;
}

/** Validates a tenant record and its providers. Throws PORTICO_ERR_CONFIG_INVALID naming the JSON path. */
export function validateTenant(input: unknown, where = "tenant"): TenantConfig {
  const o = record(input, where, ["id", "auth", "name", "providers"]);
  const id = matching(o, "id", where, SLUG, SLUG_RULE);
  if (o.auth === undefined) bad(at(where, "auth"), 'is required: set "auth": "oauth" or "none" (no sign-in)');
  if (o.auth !== "none" && o.auth !== "oauth") bad(at(where, "auth"), 'must be "none" or "oauth"');
  const providers: ProviderConfig[] = [];
  for (const [i, p] of list(o, "providers", where).entries())
    providers.push(validateProvider(p, at(at(where, "providers"), i), providers));
  return compact({ id, auth: o.auth, name: str(o, "name", where), providers });
}
