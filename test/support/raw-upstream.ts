// A hand-written MCP upstream over node:http, for tests that need one to misbehave in ways the
// SDKs will not: each POSTed JSON-RPC request goes to `handle`, which answers on `res`;
// notifications are accepted with 202, anything but POST is 405.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RawRequest {
  readonly id: unknown;
  readonly method: string;
  readonly params?: Record<string, any>;
}

export interface RawUpstream {
  readonly url: string;
  close(): Promise<void>;
}

export async function startRawUpstream(
  handle: (request: RawRequest, res: ServerResponse) => void,
): Promise<RawUpstream> {
  const http = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const message = JSON.parse(body) as Partial<RawRequest>;
      if (message.id === undefined) return void res.writeHead(202).end();
      handle(message as RawRequest, res);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Answers with one JSON-RPC message as a JSON body. */
export function sendJson(res: ServerResponse, message: object): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(message));
}
