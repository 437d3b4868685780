// An HTTP load balancer for tests: each request goes to the next backend in turn (streams
// included), with its Host header unchanged, as a round-robin proxy in front of replicas would.
// Every request is recorded (method, path, session header, backend, status). With `skipDead`, a
// backend that refuses connections is taken out and the request sent to the next, and a backend's
// answer cut short (its process killed) cuts the client's too, as a health-checking proxy does.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Routed {
  readonly method: string;
  readonly path: string;
  readonly sessionId: string | undefined;
  readonly backend: number;
  status?: number;
}

export interface Balancer {
  readonly url: string;
  readonly port: number;
  readonly routed: Routed[];
  /** Sets the backends (base URLs) requests are spread over. */
  use(backends: readonly string[]): void;
  /** Rewrites the body of answers to GET `path` (a server lacking a feature), or stops when undefined. */
  rewrite(path: string, edit: ((body: string) => string) | undefined): void;
  close(): Promise<void>;
}

export interface BalancerOptions {
  /** Take out a backend that refuses connections; resend its requests to the next one. */
  readonly skipDead?: boolean;
}

/** Listens on `port` (0: any) of 127.0.0.1. */
export async function startBalancer(port = 0, options: BalancerOptions = {}): Promise<Balancer> {
  let backends: readonly URL[] = [];
  let next = 0;
  const routed: Routed[] = [];
  const edits = new Map<string, (body: string) => string>();
  const dead = new Set<string>();
  const server: Server = createServer((req, res) => {
    if (options.skipDead) return skippingDead(req, res);
    const index = next++ % backends.length;
    const target = backends[index]!;
    const session = req.headers["mcp-session-id"];
    const entry: Routed = {
      method: req.method ?? "",
      path: req.url ?? "",
      sessionId: typeof session === "string" ? session : undefined,
      backend: index,
    };
    routed.push(entry);
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        entry.status = answer.statusCode;
        const edit = req.method === "GET" ? edits.get(req.url ?? "") : undefined;
        if (edit === undefined) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const body = edit(Buffer.concat(chunks).toString("utf8"));
          const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
          res.writeHead(answer.statusCode ?? 502, headers).end(body);
        });
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  /** Buffers the body, then tries the live backends in turn until one accepts the connection. */
  function skippingDead(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => attempt(Buffer.concat(chunks), backends.length));
    const attempt = (body: Buffer, triesLeft: number) => {
      const live = backends.filter((b) => !dead.has(b.host));
      if (live.length === 0 || triesLeft === 0) return void res.destroy();
      const index = next++ % live.length;
      const target = live[index]!;
      const session = req.headers["mcp-session-id"];
      const entry: Routed = {
        method: req.method ?? "",
        path: req.url ?? "",
        sessionId: typeof session === "string" ? session : undefined,
        backend: backends.indexOf(target),
      };
      routed.push(entry);
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: false,
        },
        (answer) => {
          entry.status = answer.statusCode;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on("close", () => !answer.complete && res.destroy());
        },
      );
      upstream.on("error", (err: NodeJS.ErrnoException) => {
        if (res.headersSent) return void res.destroy();
        if (err.code === "ECONNREFUSED") dead.add(target.host);
        attempt(body, triesLeft - 1);
      });
      res.on("close", () => upstream.destroy());
      upstream.end(body);
    };
  }
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    routed,
    use(list) {
      backends = list.map((b) => new URL(b));
    },
    rewrite(path, edit) {
      if (edit) edits.set(path, edit);
      else edits.delete(path);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
