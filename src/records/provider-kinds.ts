// Validation of what each provider kind adds to the common fields: static prompts, resources and
// resource templates; http tools; the mcp upstream's URL, headers, timeout and era; upstream `auth`.
import { TOKEN_EXCHANGE_KEYS, tokenExchange } from "./token-exchange.js";
import { USER_OAUTH_KEYS, userOAuth } from "./user-oauth.js";
import {
  exposedName,
  PER_USER_AUTH,
  type ClientCredentialsAuth,
  type HttpTool,
  type ProviderConfig,
  type ProviderConfigBase,
  type StaticPrompt,
  type StaticPromptArgument,
  type StaticPromptMessage,
  type StaticProviderConfig,
  type StaticResource,
  type StaticResourceTemplate,
  type UpstreamAuth,
  type UpstreamEra,
} from "./tenant.js";
import { EXPOSED_NAME } from "./names.js";
import { templateVariables } from "../protocol/uri-template.js";
import {
  at,
  bad,
  bool,
  compact,
  headers,
  httpUrl,
  int,
  isObject,
  jsonObject,
  list,
  matching,
  optional,
  resourceIndicator,
  SCOPE,
  record,
  str,
  strings,
  unique,
  type Obj,
} from "./fields.js";

const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/;
const ERAS = /^(?:auto|session|stateless)$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/;
export const ARGUMENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const PLACEHOLDER = /\{\{\s*([^{}\s]*)\s*\}\}/g;
const NAME_RULE = "1–64 characters of A–Z a–z 0–9 _ . -";

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

const AUTH_KEYS = {
  bearer: ["type", "token"],
  client_credentials: ["type", "tokenUrl", "clientId", "clientSecret", "scope", "resource", "authMethod"],
  token_exchange: TOKEN_EXCHANGE_KEYS,
  user_oauth: USER_OAUTH_KEYS,
} as const;
/** Sent as a header value: visible ASCII, no spaces (RFC 6750 §2.1 b64token is a subset). */
const TOKEN = /^[\x21-\x7E]+$/;
function clientCredentials(o: Obj, path: string): ClientCredentialsAuth {
  const tokenUrl = httpUrl(o, "tokenUrl", path, "clientId and clientSecret");
  // RFC 6749 §3.2: the endpoint URI MUST NOT include a fragment component.
  if (tokenUrl.includes("#")) bad(at(path, "tokenUrl"), "must not include a fragment (RFC 6749 §3.2)");
  const authMethod = o.authMethod;
  if (authMethod !== undefined && authMethod !== "client_secret_basic" && authMethod !== "client_secret_post")
    bad(at(path, "authMethod"), 'must be "client_secret_basic" or "client_secret_post"');
  return compact({
    type: "client_credentials" as const,
    tokenUrl,
    clientId: str(o, "clientId", path, true),
    clientSecret: str(o, "clientSecret", path, true),
    scope: optional(o, "scope", path, SCOPE, "space-separated scope tokens (RFC 6749 §3.3)"),
    resource: resourceIndicator(o, path),
    authMethod,
  });
}

/** The provider's upstream credentials; secret values never appear in messages. */
function upstreamAuth(o: Obj, path: string): UpstreamAuth | undefined {
  const v = o.auth;
  if (v === undefined) return undefined;
  const where = at(path, "auth");
  if (!isObject(v))
    bad(
      where,
      'must be an object with "type": "bearer", "client_credentials", "token_exchange" or "user_oauth"',
    );
  const type = v.type;
  if (
    type !== "bearer" &&
    type !== "client_credentials" &&
    type !== "token_exchange" &&
    type !== "user_oauth"
  )
    bad(at(where, "type"), 'must be "bearer", "client_credentials", "token_exchange" or "user_oauth"');
  const a = record(v, where, AUTH_KEYS[type]);
  if (type === "client_credentials") return clientCredentials(a, where);
  if (type === "token_exchange") return tokenExchange(a, where);
  if (type === "user_oauth") return userOAuth(a, where);
  const token = str(a, "token", where, true);
  if (!TOKEN.test(token)) bad(at(where, "token"), "must be visible ASCII characters without spaces");
  return { type, token };
}

/** One Authorization credential per request: `auth` or a header of that name, never both. */
function oneAuthorization(auth: UpstreamAuth | undefined, headerMap: unknown, path: string): void {
  const name = Object.keys(isObject(headerMap) ? headerMap : {}).find((h) => /^authorization$/i.test(h));
  if (auth && name !== undefined)
    bad(at(at(path, "headers"), name), 'conflicts with "auth": set the upstream credential in one place');
}

/** The keys each kind allows besides the common id, kind, prefix and separator. */
export const KIND_KEYS = {
  static: ["prompts", "resources", "resourceTemplates"],
  http: ["tools", "auth"],
  mcp: ["url", "headers", "auth", "timeoutMs", "era", "referenceUser"],
} as const;

/** Validates the kind's own fields and builds the provider record on the common `base`. */
export function kindSpecific(o: Obj, path: string, base: ProviderConfigBase): ProviderConfig {
  switch (o.kind) {
    case "static":
      return staticProvider(o, path, base);
    case "http": {
      const tools = entriesOf(o, "tools", path, httpTool, "name", base);
      if (!tools) bad(at(path, "tools"), "is required: list the provider's tools");
      const auth = upstreamAuth(o, path);
      tools.forEach((t, i) => oneAuthorization(auth, t.headers, at(at(path, "tools"), i)));
      return compact({ ...base, kind: "http" as const, tools, auth });
    }
    default: {
      const url = httpUrl(o, "url", path);
      const auth = upstreamAuth(o, path);
      oneAuthorization(auth, o.headers, path);
      const timeoutMs = int(o, "timeoutMs", path, 1, 3_600_000);
      const era = optional(o, "era", path, ERAS, '"auto", "session" or "stateless"') as
        UpstreamEra | undefined;
      const referenceUser = str(o, "referenceUser", path);
      if (referenceUser !== undefined && !PER_USER_AUTH.has(auth?.type ?? ""))
        bad(
          at(path, "referenceUser"),
          'applies to per-user providers only ("auth.type" "user_oauth" or "token_exchange")',
        );
      if (referenceUser !== undefined && referenceUser.length > 255)
        bad(at(path, "referenceUser"), "must be at most 255 characters");
      return compact({
        ...base,
        kind: "mcp" as const,
        url,
        headers: headers(o, "headers", path),
        auth,
        timeoutMs,
        era,
        referenceUser,
      });
    }
  }
}
