// A session-era MCP upstream over node:http whose tools/call a test scripts (answers, garbage,
// silence), while initialize, ping and tools/list always work; it can stop listening (connections
// refused) and listen again on the same port. Answers the upstream gets to its own requests (POSTed
// JSON-RPC responses) are handed to `answered`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { freePort } from "./redis.js";

export interface ToolCall {
  readonly id: number;
  readonly params: Record<string, any>;
  /** Answers with one JSON-RPC message (the call's id added) as a JSON body. */
  reply(payload: object): void;
}

export interface ScriptedUpstream {
  readonly url: string;
  /** tools/call requests answered so far. */
  readonly calls: number;
  /** Stops listening: connections are refused. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedUpstream(
  onCall: (call: ToolCall, res: ServerResponse) => void,
  answered: (message: Record<string, any>) => void = () => undefined,
): Promise<ScriptedUpstream> {
  let calls = 0;
  const open = new Set<ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const message = JSON.parse(body) as { id?: number; method?: string; params?: Record<string, any> };
      if (message.method === undefined) answered(message);
      if (message.id === undefined || message.method === undefined) return void res.writeHead(202).end();
      const reply = (payload: object) =>
        res
          .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...payload }));
      if (message.method === "initialize")
        return reply({
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "scripted", version: "1" },
          },
        });
      if (message.method === "tools/list")
        return reply({ result: { tools: [{ name: "work", inputSchema: { type: "object" } }] } });
      if (message.method !== "tools/call") return reply({ result: {} });
      calls++;
      open.add(res);
      res.on("close", () => open.delete(res));
      onCall({ id: message.id, params: message.params ?? {}, reply }, res);
      return undefined;
    });
  };
  let server: Server = createServer(handle);
  // up() listens on the same port again: one the kernel does not hand out to other processes meanwhile.
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const down = async () => {
    for (const res of open) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get calls() {
      return calls;
    },
    down,
    async up() {
      server = createServer(handle);
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async close() {
      if (server.listening) await down();
    },
  };
}
