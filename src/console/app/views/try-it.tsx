// "Try it": lists and calls a tool, reads a resource, fills a prompt through the tenant's real MCP
// endpoint, proxied by Portico under the console session (POST …/try), so policy and the audit log
// see the signed-in admin. A tool's arguments come from a form built from its input schema, or JSON.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Json, parseJson, Table, useAction } from "../ui";

type TryMethod = Schemas["TryRequest"]["method"];

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  description?: string;
};
type Tool = { name: string; title?: string; description?: string; inputSchema?: JsonSchema };
type Resource = { uri: string; name?: string; description?: string };
type Prompt = {
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
};

async function tryIt(tenant: string, method: TryMethod, params?: Record<string, unknown>, server?: string) {
  const body = { method, ...(params ? { params } : {}), ...(server ? { server } : {}) };
  return must(api.POST("/tenants/{tenant}/try", { params: { path: { tenant } }, body }));
}

/** The result, or the MCP error in words. */
function resultOf(answer: Schemas["TryResult"]): Record<string, unknown> {
  if ("error" in answer)
    throw new Error(`The MCP endpoint answered error ${answer.error.code}: ${answer.error.message}`);
  return answer.result;
}

export function TryView(props: { tenant: string }) {
  const { tenant } = props;
  const [server, setServer] = useState("");
  const [tools, setTools] = useState<Tool[]>();
  const [resources, setResources] = useState<Resource[]>();
  const [prompts, setPrompts] = useState<Prompt[]>();
  const [chosen, setChosen] = useState<{ kind: "tool"; tool: Tool } | { kind: "prompt"; prompt: Prompt }>();
  const [output, setOutput] = useState<{ title: string; value: unknown }>();
  const action = useAction();
  const list = (method: TryMethod, key: string, set: (items: never[]) => void, what: string) =>
    action.run(async () => {
      const result = resultOf(await tryIt(tenant, method, undefined, server || undefined));
      const items = (result[key] ?? []) as never[];
      set(items);
      return `${items.length} ${what} listed`;
    });
  const read = (uri: string) =>
    action.run(async () => {
      const result = resultOf(await tryIt(tenant, "resources/read", { uri }, server || undefined));
      setOutput({ title: `Contents of ${uri}`, value: result });
      return `Read ${uri}`;
    });
  const run = async (method: TryMethod, params: Record<string, unknown>, title: string) => {
    const result = resultOf(await tryIt(tenant, method, params, server || undefined));
    setOutput({ title, value: result });
    return result;
  };
  return (
    <>
      <p class="hint">
        Requests go through this tenant's own MCP endpoint as you: its policy applies and its audit log
        records them.
      </p>
      <label>
        Virtual server (empty: the tenant's own URL)
        <input value={server} onInput={(e) => setServer(e.currentTarget.value)} />
      </label>
      <div class="buttons">
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void list("tools/list", "tools", setTools, "tools")}
        >
          List tools
        </button>
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void list("resources/list", "resources", setResources, "resources")}
        >
          List resources
        </button>
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void list("prompts/list", "prompts", setPrompts, "prompts")}
        >
          List prompts
        </button>
      </div>
      {action.message}
      {tools && (
        <Table
          caption="Tools"
          headers={["Tool", "Description", ""]}
          rows={tools.map((t) => [
            <code>{t.name}</code>,
            t.description ?? "",
            <button
              type="button"
              onClick={() => setChosen({ kind: "tool", tool: t })}
              aria-label={`Call ${t.name}`}
            >
              Call…
            </button>,
          ])}
        />
      )}
      {resources && (
        <Table
          caption="Resources"
          headers={["URI", "Name", ""]}
          rows={resources.map((r) => [
            <code>{r.uri}</code>,
            r.name ?? "",
            <button type="button" onClick={() => void read(r.uri)} aria-label={`Read ${r.uri}`}>
              Read
            </button>,
          ])}
        />
      )}
      {prompts && (
        <Table
          caption="Prompts"
          headers={["Prompt", "Description", ""]}
          rows={prompts.map((p) => [
            <code>{p.name}</code>,
            p.description ?? "",
            <button
              type="button"
              onClick={() => setChosen({ kind: "prompt", prompt: p })}
              aria-label={`Fill ${p.name}`}
            >
              Fill…
            </button>,
          ])}
        />
      )}
      {chosen?.kind === "tool" && (
        <CallForm
          key={chosen.tool.name}
          tool={chosen.tool}
          onCall={(args) =>
            run("tools/call", { name: chosen.tool.name, arguments: args }, `Result of ${chosen.tool.name}`)
          }
        />
      )}
      {chosen?.kind === "prompt" && (
        <PromptForm
          key={chosen.prompt.name}
          prompt={chosen.prompt}
          onFill={(args) =>
            run("prompts/get", { name: chosen.prompt.name, arguments: args }, `Prompt ${chosen.prompt.name}`)
          }
        />
      )}
      {output && (
        <section aria-labelledby="try-output">
          <h2 id="try-output">{output.title}</h2>
          <Json value={output.value} />
        </section>
      )}
    </>
  );
}

/** The arguments form of a tool: one field per top-level property its input schema names. */
function CallForm(props: { tool: Tool; onCall: (args: Record<string, unknown>) => Promise<unknown> }) {
  const schema = props.tool.inputSchema ?? {};
  const properties = Object.entries(schema.properties ?? {});
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [raw, setRaw] = useState(properties.length === 0 ? "{}" : "");
  const [useRaw, setUseRaw] = useState(false);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const args = useRaw
        ? (parseJson(raw, "The arguments") as Record<string, unknown>)
        : fromForm(properties, values);
      const result = (await props.onCall(args)) as { isError?: boolean };
      return result.isError
        ? `${props.tool.name} answered with an error: see the result below`
        : `${props.tool.name} called`;
    });
  };
  const set = (name: string, value: string | boolean) => setValues({ ...values, [name]: value });
  return (
    <section aria-labelledby="call-tool">
      <h2 id="call-tool">Call {props.tool.name}</h2>
      {props.tool.description && <p>{props.tool.description}</p>}
      <form onSubmit={submit}>
        <label class="inline">
          <input type="checkbox" checked={useRaw} onChange={(e) => setUseRaw(e.currentTarget.checked)} />{" "}
          Arguments as JSON
        </label>
        {useRaw ? (
          <label>
            Arguments (JSON)
            <textarea rows={6} value={raw} onInput={(e) => setRaw(e.currentTarget.value)} />
          </label>
        ) : (
          properties.map(([name, prop]) => (
            <Field
              key={name}
              name={name}
              schema={prop}
              required={schema.required?.includes(name) ?? false}
              value={values[name]}
              onChange={(v) => set(name, v)}
            />
          ))
        )}
        <button type="submit" disabled={action.busy}>
          Call tool
        </button>
      </form>
      {action.message}
    </section>
  );
}

const typeOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type);

function Field(props: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: string | boolean | undefined;
  onChange: (v: string | boolean) => void;
}) {
  const { name, schema, required } = props;
  const type = typeOf(schema);
  const label = `${name}${required ? "" : " (optional)"}`;
  const hint = schema.description ? <span class="hint"> — {schema.description}</span> : null;
  if (type === "boolean")
    return (
      <label class="inline">
        <input
          type="checkbox"
          checked={props.value === true}
          onChange={(e) => props.onChange(e.currentTarget.checked)}
        />{" "}
        {label}
        {hint}
      </label>
    );
  if (schema.enum)
    return (
      <label>
        {label}
        {hint}
        <select
          required={required}
          value={String(props.value ?? "")}
          onChange={(e) => props.onChange(e.currentTarget.value)}
        >
          <option value="">—</option>
          {schema.enum.map((v) => (
            <option value={String(v)}>{String(v)}</option>
          ))}
        </select>
      </label>
    );
  const structured = type === "object" || type === "array";
  return (
    <label>
      {label}
      {structured ? " (JSON)" : ""}
      {hint}
      {structured ? (
        <textarea
          rows={3}
          required={required}
          value={String(props.value ?? "")}
          onInput={(e) => props.onChange(e.currentTarget.value)}
        />
      ) : (
        <input
          {...(type === "number" || type === "integer"
            ? { type: "number", step: type === "integer" ? 1 : "any" }
            : { type: "text" })}
          required={required}
          value={String(props.value ?? "")}
          onInput={(e) => props.onChange(e.currentTarget.value)}
        />
      )}
    </label>
  );
}

/** The form's strings as the schema's types; empty optional fields are left out. */
function fromForm(
  properties: [string, JsonSchema][],
  values: Record<string, string | boolean>,
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, schema] of properties) {
    const value = values[name];
    if (value === undefined || value === "") continue;
    const type = typeOf(schema);
    if (typeof value === "boolean") args[name] = value;
    else if (type === "number" || type === "integer") args[name] = Number(value);
    else if (type === "object" || type === "array") args[name] = parseJson(value, name);
    else args[name] = value;
  }
  return args;
}

function PromptForm(props: { prompt: Prompt; onFill: (args: Record<string, string>) => Promise<unknown> }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const args = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ""));
      await props.onFill(args);
      return `Prompt ${props.prompt.name} filled`;
    });
  };
  return (
    <section aria-labelledby="fill-prompt">
      <h2 id="fill-prompt">Fill {props.prompt.name}</h2>
      <form onSubmit={submit}>
        {(props.prompt.arguments ?? []).map((a) => (
          <label>
            {a.name}
            {a.required ? "" : " (optional)"}
            <input
              required={a.required ?? false}
              value={values[a.name] ?? ""}
              onInput={(e) => setValues({ ...values, [a.name]: e.currentTarget.value })}
            />
          </label>
        ))}
        <button type="submit" disabled={action.busy}>
          Get prompt
        </button>
      </form>
      {action.message}
    </section>
  );
}
