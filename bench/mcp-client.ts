// Raw MCP over Streamable HTTP for the bench (basic/transports): JSON-RPC POSTs with fetch, the
// session header, and answers read from either a JSON body or an SSE stream. No SDK client, so the
// same thin client measures Portico and the upstream alike.

export const PROTOCOL_VERSION = "2025-11-25";
const TIMEOUT_MS = 10_000;

export interface RpcReply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface RpcAnswer {
  readonly id?: unknown;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

/** The body of an initialize request. */
export function initializeBody(id: number | string = 1): string {
  return rpcBody(id, "initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: "portico-bench", version: "1.0.0" },
  });
}

export function rpcBody(id: number | string, method: string, params?: Record<string, unknown>): string {
  return JSON.stringify(
    params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params },
  );
}

/** POSTs one JSON-RPC message (with `extra` headers, if any) and reads the whole answer. */
export async function post(
  url: string,
  body: string,
  sessionId?: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<RpcReply> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...extra,
  };
  if (sessionId !== undefined) {
    headers["mcp-session-id"] = sessionId;
    headers["mcp-protocol-version"] = PROTOCOL_VERSION;
  }
  const res = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** initialize + notifications/initialized; returns the session id. */
export async function openSession(url: string): Promise<string> {
  const init = await post(url, initializeBody());
  const sid = init.headers.get("mcp-session-id");
  if (init.status !== 200 || sid === null)
    throw new Error(
      `initialize at ${url}: HTTP ${init.status}, session id ${sid}: ${init.text.slice(0, 300)}`,
    );
  const answer = answerOf(init, 1);
  if (answer.result?.protocolVersion !== PROTOCOL_VERSION)
    throw new Error(`initialize at ${url} answered ${init.text.slice(0, 300)}`);
  const ack = await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), sid);
  if (ack.status !== 202) throw new Error(`notifications/initialized at ${url}: HTTP ${ack.status}`);
  return sid;
}

/** DELETE the session (a courtesy at the end of a run). */
export async function closeSession(url: string, sessionId: string): Promise<void> {
  const res = await fetch(url, {
    method: "DELETE",
    headers: { "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL_VERSION },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  await res.arrayBuffer();
}

/** The JSON-RPC response to request `id` in a reply, whether it came as JSON or as SSE. */
export function answerOf(reply: RpcReply, id: number | string): RpcAnswer {
  const type = reply.headers.get("content-type") ?? "";
  const messages = type.startsWith("text/event-stream")
    ? sseData(reply.text).map((d) => JSON.parse(d) as RpcAnswer)
    : [JSON.parse(reply.text) as RpcAnswer];
  const answer = messages.find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
  if (!answer) throw new Error(`no response to id ${id} in: ${reply.text.slice(0, 300)}`);
  return answer;
}

/** The non-empty `data` payloads of an SSE stream (priming events carry none). */
export function sseData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""));
    if (data.length > 0 && data.join("") !== "") out.push(data.join("\n"));
  }
  return out;
}

/** The text of the first content block of a tool result or a resource read. */
export function firstText(answer: RpcAnswer): string | undefined {
  const r = answer.result as { content?: Array<{ text?: string }>; contents?: Array<{ text?: string }> };
  return (r?.content ?? r?.contents)?.[0]?.text;
}
