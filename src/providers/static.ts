// The `static` provider kind (docs/architecture.md §3): prompts, resources and resource templates held as data.
// Prompts fill {{argument}} placeholders; templates are RFC 6570 level 1 and expand their text with
// the values taken from the URI; completion offers the configured values (MCP completion/complete).
import type {
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
} from "@modelcontextprotocol/sdk/types.js";
import { excerpt, fail } from "../protocol/errors.js";
import {
  DEFAULT_SEPARATOR,
  type StaticPrompt,
  type StaticProviderConfig,
  type StaticResource,
  type StaticResourceTemplate,
} from "../records/tenant.js";
import type { CallContext, CompletionRef, Provider, ProviderEntries } from "./types.js";
import { matchTemplate, templateVariables } from "../protocol/uri-template.js";

/** MCP caps one completion answer at 100 values. */
const MAX_COMPLETIONS = 100;
const PLACEHOLDER = /\{\{\s*([^{}\s]*)\s*\}\}/g;

function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function listedPrompt(p: StaticPrompt): Prompt {
  const args = p.arguments?.map((a) =>
    compact({ name: a.name, description: a.description, required: a.required }),
  );
  return compact({ name: p.name, title: p.title, description: p.description, arguments: args });
}

function listedResource(r: StaticResource): Resource {
  const size = r.text !== undefined ? Buffer.byteLength(r.text) : Buffer.from(r.blob ?? "", "base64").length;
  return compact({
    uri: r.uri,
    name: r.name,
    title: r.title,
    description: r.description,
    mimeType: r.mimeType,
    size,
  });
}

function listedTemplate(t: StaticResourceTemplate): ResourceTemplate {
  const { uriTemplate, name, title, description, mimeType } = t;
  return compact({ uriTemplate, name, title, description, mimeType });
}

/** Fills {{name}} placeholders in one pass, so a value is never expanded again. */
function render(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(
    PLACEHOLDER,
    (_, name: string) => (Object.hasOwn(values, name) ? values[name] : "") ?? "",
  );
}

/** The prompt's argument values; a missing optional one is "" (MCP prompts/get, -32602 otherwise). */
function argumentValues(prompt: StaticPrompt, args: Record<string, string>): Record<string, string> {
  const entries = (prompt.arguments ?? []).map((arg): [string, string] => {
    const value = Object.hasOwn(args, arg.name) ? args[arg.name] : undefined;
    if (value === undefined && arg.required)
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        `Missing required argument '${arg.name}' for prompt '${prompt.name}'`,
        { prompt: prompt.name, argument: arg.name },
      );
    return [arg.name, value ?? ""];
  });
  return Object.fromEntries(entries); // own properties even for a name like "__proto__"
}

function resourceContents(uri: string, r: StaticResource): ReadResourceResult["contents"][number] {
  const { mimeType, text, blob } = r;
  return text !== undefined ? compact({ uri, mimeType, text }) : compact({ uri, mimeType, blob: blob ?? "" });
}

/** Fills a template's {variable}s in its text; other braces (JSON, say) stay as they are. */
function fill(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(
    /\{([^{}]+)\}/g,
    (whole, name: string) => (Object.hasOwn(vars, name) ? vars[name] : whole) ?? whole,
  );
}

/** Offers the candidates that start with what the user typed (case-insensitive). */
function completion(candidates: readonly string[], typed: string): CompleteResult {
  const prefix = typed.toLowerCase();
  const matches = candidates.filter((c) => c.toLowerCase().startsWith(prefix));
  return {
    completion: {
      values: matches.slice(0, MAX_COMPLETIONS),
      total: matches.length,
      hasMore: matches.length > MAX_COMPLETIONS,
    },
  };
}

/** A provider whose prompts, resources and templates are all configuration data. */
export class StaticProvider implements Provider {
  readonly kind = "static";
  readonly id: string;
  readonly prefix: string;
  readonly separator: string;
  readonly healthy = true;
  readonly #config: StaticProviderConfig;
  readonly #reads: ReadonlyMap<string, ReadResourceResult>;
  readonly #entries: ProviderEntries;

  constructor(config: StaticProviderConfig) {
    this.#config = config;
    this.id = config.id;
    this.prefix = config.prefix ?? "";
    this.separator = config.separator ?? DEFAULT_SEPARATOR;
    // Static content never changes: each read result is built once (reads are the hot path).
    this.#reads = new Map(
      (config.resources ?? []).map((r) => [r.uri, Object.freeze({ contents: [resourceContents(r.uri, r)] })]),
    );
    this.#entries = Object.freeze({
      tools: [],
      prompts: (config.prompts ?? []).map(listedPrompt),
      resources: (config.resources ?? []).map(listedResource),
      resourceTemplates: (config.resourceTemplates ?? []).map(listedTemplate),
    });
  }

  entries(): ProviderEntries {
    return this.#entries;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {}

  async callTool(name: string, _args: Record<string, unknown>, _ctx: CallContext): Promise<never> {
    throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown tool '${excerpt(name)}'`, { name: excerpt(name) });
  }

  async getPrompt(name: string, args: Record<string, string>, _ctx: CallContext): Promise<GetPromptResult> {
    const prompt = this.#prompt(name);
    const values = argumentValues(prompt, args);
    const messages = prompt.messages.map((m) => ({
      role: m.role,
      content: { type: "text" as const, text: render(m.text, values) },
    }));
    return compact({ description: prompt.description, messages });
  }

  async readResource(uri: string, _ctx: CallContext): Promise<ReadResourceResult> {
    const read = this.#reads.get(uri);
    if (read) return read;
    for (const template of this.#config.resourceTemplates ?? []) {
      const vars = matchTemplate(template.uriTemplate, uri);
      if (vars)
        return {
          contents: [{ uri, ...compact({ mimeType: template.mimeType }), text: fill(template.text, vars) }],
        };
    }
    throw fail("PORTICO_ERR_MCP_RESOURCE_NOT_FOUND", `Resource not found: ${excerpt(uri)}`, {
      uri: excerpt(uri),
    });
  }

  async complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    _context: Record<string, string> | undefined,
    _ctx: CallContext,
  ): Promise<CompleteResult> {
    if (ref.type === "ref/prompt") {
      const arg = this.#prompt(ref.name).arguments?.find((a) => a.name === argument.name);
      if (!arg) throw this.#noArgument(`prompt '${excerpt(ref.name)}'`, argument.name);
      return completion(arg.values ?? [], argument.value);
    }
    const template = this.#config.resourceTemplates?.find((t) => t.uriTemplate === ref.uri);
    if (!template)
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown resource template '${excerpt(ref.uri)}'`, {
        uri: excerpt(ref.uri),
      });
    if (!templateVariables(template.uriTemplate).includes(argument.name))
      throw this.#noArgument(`resource template '${ref.uri}'`, argument.name);
    const values =
      template.values && Object.hasOwn(template.values, argument.name)
        ? template.values[argument.name]
        : undefined;
    return completion(values ?? [], argument.value);
  }

  #prompt(name: string): StaticPrompt {
    const prompt = this.#config.prompts?.find((p) => p.name === name);
    if (!prompt)
      throw fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown prompt '${excerpt(name)}'`, {
        name: excerpt(name),
      });
    return prompt;
  }

  #noArgument(owner: string, argument: string): Error {
    return fail("PORTICO_ERR_MCP_INVALID_PARAMS", `Unknown argument '${excerpt(argument)}' for ${owner}`, {
      argument: excerpt(argument),
    });
  }
}
