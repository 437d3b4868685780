// Official SDK clients wired the way a real MCP host would be: sampling, elicitation and roots
// answered, and every notification recorded.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type ClientCapabilities,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";

export interface RecordingClient {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly notifications: ServerNotification[];
  /** Resolves with the first notification of `method` (already received or future). */
  waitFor(method: string, timeoutMs?: number): Promise<ServerNotification>;
  /**
   * Resolves once the standalone GET stream answered 200 (Portico attaches it before its first
   * bytes go out), or rejects after `timeoutMs`: what a notification outside any request needs.
   * The SDK opens it on its own after initialization, at a moment a busy machine can delay.
   */
  streamOpen(timeoutMs?: number): Promise<void>;
}

export interface ConnectOptions {
  /** Rewrites each request's URL: lets one client alternate between replicas. */
  readonly route?: (url: URL) => URL;
  /** Sends every HTTP request (e.g. a load balancer that fails over); overrides `route`. */
  readonly fetch?: (url: URL, init?: RequestInit) => Promise<Response>;
  readonly capabilities?: boolean;
  /** Declared instead of the default set (e.g. elicitation in URL mode). */
  readonly clientCapabilities?: ClientCapabilities;
  /** Sent with every request (e.g. the client's own Authorization header). */
  readonly headers?: Record<string, string>;
}

export async function connectClient(url: string, opts: ConnectOptions = {}): Promise<RecordingClient> {
  const withCaps = opts.capabilities ?? true;
  const capabilities: ClientCapabilities =
    opts.clientCapabilities ??
    (withCaps ? { sampling: {}, elicitation: {}, roots: { listChanged: true } } : {});
  const client = new Client({ name: "portico-test", version: "1.0.0" }, { capabilities });
  const notifications: ServerNotification[] = [];
  const waiters: Array<{ method: string; resolve: (n: ServerNotification) => void }> = [];
  client.fallbackNotificationHandler = async (n) => {
    notifications.push(n as ServerNotification);
    for (const w of waiters.filter((w) => w.method === n.method)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(n as ServerNotification);
    }
  };
  if (capabilities.sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const first = req.params.messages[0]?.content;
      const text = first && "text" in first ? String(first.text) : "";
      return { role: "assistant", model: "test-model", content: { type: "text", text: `echo: ${text}` } };
    });
  if (capabilities.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { username: "ada", email: "ada@example.com" },
    }));
  if (capabilities.roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: "file:///work", name: "work" }],
    }));
  const route = opts.route;
  const urlOf = (input: string | URL | Request) =>
    new URL(String(input instanceof Request ? input.url : input));
  const send = opts.fetch;
  const via: (input: string | URL | Request, init?: RequestInit) => Promise<Response> = send
    ? (input, init) => send(urlOf(input), init)
    : route
      ? (input, init) => fetch(route(urlOf(input)), init)
      : (input, init) => fetch(input, init);
  let opened = false;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: async (input, init) => {
      const res = await via(input, init);
      if (init?.method === "GET" && res.ok) opened = true;
      return res;
    },
    requestInit: opts.headers ? { headers: opts.headers } : undefined,
  });
  await client.connect(transport);
  return {
    client,
    transport,
    notifications,
    waitFor(method, timeoutMs = 10_000) {
      const seen = notifications.find((n) => n.method === method);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${method} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ method, resolve: (n) => (clearTimeout(timer), resolve(n)) });
      });
    },
    async streamOpen(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!opened) {
        if (Date.now() > deadline) throw new Error(`no standalone GET stream within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}
