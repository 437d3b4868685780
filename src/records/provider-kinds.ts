// What each provider kind's schema (tenant.ts) cannot say: exposed names within the rules once
// prefixed, entries unique, placeholders naming arguments, template variables, URLs Portico may
// reach (token endpoints too: client credentials, RFC 8693 token exchange), header names and
// values, and one place for the upstream credential.
import { templateVariables } from "../protocol/uri-template.js";
import { EXPOSED_NAME } from "./names.js";
import {
  exposedName,
  PER_USER_AUTH,
  type HttpProviderConfig,
  type HttpTool,
  type ProviderConfig,
  type StaticPrompt,
  type StaticResourceTemplate,
  type UpstreamAuth,
} from "./tenant.js";
import { at, bad, httpUrl } from "./fields.js";
import { checkUserOAuth } from "./user-oauth.js";
import { isToolPattern } from "./task-marks.js";
import { globMatch } from "./glob.js";

const PLACEHOLDER = /\{\{\s*([^{}\s]*)\s*\}\}/g;
/** Sent as a header value: visible ASCII, no spaces (RFC 6750 §2.1 b64token is a subset). */
const TOKEN = /^[\x21-\x7E]+$/;
const HOP_HEADER = /^(?:host|content-length|connection|transfer-encoding|keep-alive|upgrade|te)$/i;

function exposed(provider: ProviderConfig, name: string, path: string): void {
  const full = exposedName(provider, name);
  if (!EXPOSED_NAME.test(full))
    bad(
      at(path, "name"),
      `exposed name ${JSON.stringify(full)} must be 1–64 characters of A–Z a–z 0–9 _ . -`,
    );
}

/** No two entries of a list share `field`. */
function unique<T>(
  entries: readonly T[] | undefined,
  path: string,
  field: keyof T & string,
  label: string = field,
): void {
  const seen = new Map<string, string>();
  entries?.forEach((entry, i) => {
    const value = String(entry[field]);
    const where = at(at(path, i), field);
    const first = seen.get(value);
    if (first !== undefined) bad(where, `duplicate ${label} ${JSON.stringify(value)} (also ${first})`);
    seen.set(value, where);
  });
}

function checkPrompt(provider: ProviderConfig, prompt: StaticPrompt, path: string): void {
  exposed(provider, prompt.name, path);
  const args = prompt.arguments ?? [];
  unique(args, at(path, "arguments"), "name", "argument");
  prompt.messages.forEach((message, i) => {
    for (const [, name] of message.text.matchAll(PLACEHOLDER))
      if (!args.some((a) => a.name === name))
        bad(
          at(at(at(path, "messages"), i), "text"),
          `placeholder {{${name}}} names no argument of the prompt`,
        );
  });
}

function checkTemplate(template: StaticResourceTemplate, path: string): void {
  let variables: string[];
  try {
    variables = templateVariables(template.uriTemplate);
  } catch (err) {
    bad(at(path, "uriTemplate"), (err as Error).message);
  }
  if (variables.length === 0)
    bad(at(path, "uriTemplate"), "has no {variable}; declare it as a resource instead");
  for (const key of Object.keys(template.values ?? {}))
    if (!variables.includes(key)) bad(at(at(path, "values"), key), "is not a variable of the uriTemplate");
}

/** Header values never appear in messages: they are often secrets. */
function checkHeaders(headers: Readonly<Record<string, string>> | undefined, path: string): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    const where = at(at(path, "headers"), name);
    if (HOP_HEADER.test(name)) bad(where, "is set by Portico and cannot be configured");
    if (/[\r\n\0]/.test(value)) bad(where, "value must be a string without line breaks");
  }
}

function checkTool(provider: ProviderConfig, tool: HttpTool, path: string): void {
  exposed(provider, tool.name, path);
  httpUrl(tool, "url", path);
  checkHeaders(tool.headers, path);
}

/** The provider's upstream credentials; secret values never appear in messages. */
function checkAuth(auth: UpstreamAuth, path: string): void {
  const where = at(path, "auth");
  switch (auth.type) {
    case "bearer":
      if (!TOKEN.test(auth.token)) bad(at(where, "token"), "must be visible ASCII characters without spaces");
      return;
    // RFC 8693 §2.1 (token_exchange): audience is a logical name, resource an absolute URI.
    case "client_credentials":
    case "token_exchange":
      return checkTokenEndpoint(auth, where);
    case "user_oauth":
      return checkUserOAuth(auth, where);
  }
}

/** A token endpoint Portico may reach, and a resource indicator, as RFC 6749 and RFC 8707 ask. */
function checkTokenEndpoint(auth: { tokenUrl: string; resource?: string }, where: string): void {
  httpUrl(auth, "tokenUrl", where, "clientId and clientSecret");
  // RFC 6749 §3.2: the endpoint URI MUST NOT include a fragment component.
  if (auth.tokenUrl.includes("#")) bad(at(where, "tokenUrl"), "must not include a fragment (RFC 6749 §3.2)");
  if (auth.resource !== undefined && auth.resource.includes("#"))
    bad(
      at(where, "resource"),
      `${JSON.stringify(auth.resource)} must be an absolute URI without a fragment (RFC 8707 §2)`,
    );
}

/** One Authorization credential per request: `auth` or a header of that name, never both. */
function oneAuthorization(auth: UpstreamAuth | undefined, headers: object | undefined, path: string): void {
  const name = Object.keys(headers ?? {}).find((h) => /^authorization$/i.test(h));
  if (auth && name !== undefined)
    bad(at(at(path, "headers"), name), 'conflicts with "auth": set the upstream credential in one place');
}

/**
 * An `http` provider's tools are known when it is saved: each task mark names one of them, or is
 * a pattern matching one (an `mcp` or `openapi` provider's are known only once listed or compiled).
 */
function checkMarks(provider: HttpProviderConfig, path: string): void {
  const names = provider.tools.map((t) => t.name);
  const some = names.length > 10 ? `${names.slice(0, 10).join(", ")}, …` : names.join(", ");
  for (const key of Object.keys(provider.tasks?.tools ?? {})) {
    const matches = isToolPattern(key) ? names.some((n) => globMatch(key, n)) : names.includes(key);
    if (!matches)
      bad(
        at(at(at(path, "tasks"), "tools"), key),
        `${isToolPattern(key) ? "matches" : "names"} no tool of the provider (its tools: ${some})`,
      );
  }
}

const STDIO_ONLY = ["roots", "start", "serverRequests"] as const;
/** What a stdio upstream cannot have: it is reached through a child's stdio, never over HTTP. */
const HTTP_ONLY = ["url", "headers", "auth", "referenceUser"] as const;

/** A stdio provider (docs/upstream-mcp.md "stdio upstreams"): nothing of an HTTP upstream, no 2026-07-28 era. */
function checkStdio(provider: Extract<ProviderConfig, { kind: "mcp" }>, path: string): void {
  for (const field of HTTP_ONLY)
    if (provider[field] !== undefined)
      bad(at(path, field), "does not apply to a stdio provider (its upstream is a child process, not a URL)");
  if (provider.era === "stateless")
    bad(
      at(path, "era"),
      "a stdio upstream speaks the session era (stdio is newline-delimited JSON-RPC sessions)",
    );
}

/** The rules of a provider record the schema accepted that the schema cannot say. */
export function checkKind(provider: ProviderConfig, path: string): void {
  switch (provider.kind) {
    case "static":
      unique(provider.prompts, at(path, "prompts"), "name");
      unique(provider.resources, at(path, "resources"), "uri");
      unique(provider.resourceTemplates, at(path, "resourceTemplates"), "uriTemplate");
      provider.prompts?.forEach((p, i) => checkPrompt(provider, p, at(at(path, "prompts"), i)));
      provider.resources?.forEach((r, i) => {
        if ((r.text === undefined) === (r.blob === undefined))
          bad(at(at(path, "resources"), i), 'set exactly one of "text" and "blob"');
      });
      provider.resourceTemplates?.forEach((t, i) => checkTemplate(t, at(at(path, "resourceTemplates"), i)));
      return;
    case "http":
      unique(provider.tools, at(path, "tools"), "name");
      provider.tools.forEach((t, i) => checkTool(provider, t, at(at(path, "tools"), i)));
      if (provider.auth) checkAuth(provider.auth, path);
      provider.tools.forEach((t, i) => oneAuthorization(provider.auth, t.headers, at(at(path, "tools"), i)));
      checkMarks(provider, path);
      return;
    case "openapi":
      if ((provider.document === undefined) === (provider.documentUrl === undefined))
        bad(at(path, "document"), 'set exactly one of "document" and "documentUrl"');
      if (provider.documentUrl !== undefined) httpUrl(provider, "documentUrl", path);
      if (provider.baseUrl !== undefined) httpUrl(provider, "baseUrl", path);
      else if (provider.useDocumentServers !== true)
        bad(
          at(path, "baseUrl"),
          'is required: set where the operations are called, or "useDocumentServers": true to call the servers the document names',
        );
      // A user connects an account for one resource, the API at baseUrl; the servers a document
      // names may be several, and may change with a refresh.
      if (provider.auth?.type === "user_oauth" && provider.baseUrl === undefined)
        bad(
          at(path, "baseUrl"),
          'is required with "auth": {"type": "user_oauth"}: users connect their accounts for the API at baseUrl, the resource their tokens are for',
        );
      checkHeaders(provider.headers, path);
      if (provider.auth) checkAuth(provider.auth, path);
      oneAuthorization(provider.auth, provider.headers, path);
      // Sent as header values, cookies or query values: no line break may get in (the message
      // names the field, never the value).
      for (const [scheme, credential] of Object.entries(provider.credentials ?? {}))
        for (const [member, value] of Object.entries(credential))
          if (typeof value === "string" && /[\r\n\0]/.test(value))
            bad(at(at(at(path, "credentials"), scheme), member), "must be a string without line breaks");
      return;
    case "mcp":
      if (provider.transport === "stdio") return checkStdio(provider, path);
      for (const field of STDIO_ONLY)
        if (provider[field] !== undefined)
          bad(at(path, field), 'applies to stdio providers only ("transport": "stdio")');
      if (provider.url === undefined) bad(at(path, "url"), "is required");
      httpUrl(provider, "url", path);
      checkHeaders(provider.headers, path);
      if (provider.auth) checkAuth(provider.auth, path);
      oneAuthorization(provider.auth, provider.headers, path);
      if (provider.referenceUser !== undefined && !PER_USER_AUTH.has(provider.auth?.type ?? ""))
        bad(
          at(path, "referenceUser"),
          'applies to per-user providers only ("auth.type" "user_oauth" or "token_exchange")',
        );
  }
}
