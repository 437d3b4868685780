// Raw JSON-RPC over HTTP for tests that need to see the wire (statuses, headers, streams).
export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** POSTs one JSON-RPC message, with a session id when given. */
export function postRpc(
  url: string,
  message: unknown,
  sid?: string,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(url, {
    ...init,
    method: "POST",
    headers: { ...MCP_HEADERS, ...(sid ? { "mcp-session-id": sid } : {}) },
    body: JSON.stringify(message),
  });
}

/** POSTs one JSON-RPC message (the `jsonrpc` member added) with a bearer token, and a session id when given. */
export function postRpcWithToken(
  url: string,
  token: string,
  message: object,
  sid?: string,
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      ...MCP_HEADERS,
      authorization: `Bearer ${token}`,
      ...(sid ? { "mcp-session-id": sid } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
}

/** Rate-limit counters are per fixed minute: waits for the next one when a burst could straddle two. */
export async function awayFromMinuteEdge(marginMs = 8000): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 60_000 - marginMs) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 200));
}

/** Opens a session the raw way; returns its id. */
export async function openSession(url: string, protocolVersion = "2025-11-25"): Promise<string> {
  const res = await postRpc(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion, capabilities: {} },
  });
  const sid = res.headers.get("mcp-session-id");
  if (res.status !== 200 || !sid) throw new Error(`initialize failed with HTTP ${res.status}`);
  return sid;
}

/** initialize with a bearer token (oauth tenants): 200 when the token is good for the URL. */
export function initializeWithToken(url: string, token: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
}
