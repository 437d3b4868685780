// An HTTP load balancer for tests and the stress run: each request goes to the next backend in
// turn (streams included, both ways), with its Host header unchanged, as a round-robin proxy in
// front of replicas would. With `readinessPath` it polls each backend and skips those not ready; a
// request whose connection fails before anything was sent moves on to the next backend (nginx's
// `proxy_next_upstream error`); once sent, it is never sent twice. Every request is recorded.
import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

export interface Routed {
  readonly method: string;
  readonly path: string;
  readonly sessionId: string | undefined;
  /** The Mcp-Method header (2026-07-28), e.g. "subscriptions/listen". */
  readonly mcpMethod: string | undefined;
  backend: number;
  status?: number;
  /** Backends whose connection failed before this request was sent to `backend`. */
  readonly refusedBy: number[];
  /** How the connection to `backend` failed after the request was sent (and the answer cut). */
  failure?: string;
}

export interface BalancerOptions {
  /** Poll GET `readinessPath` of every backend and skip those not answering 200 (e.g. "/readyz"). */
  readonly readinessPath?: string;
  /** How often each backend is polled; default 250 ms. */
  readonly pollMs?: number;
  /**
   * Without `readinessPath`: a backend that refused a connection leaves the rotation for good (its
   * process was killed), instead of being tried first by every later request.
   */
  readonly skipDead?: boolean;
}

export interface Balancer {
  readonly url: string;
  readonly port: number;
  readonly routed: Routed[];
  /** Sets the backends (base URLs) requests are spread over. */
  use(backends: readonly string[]): void;
  /** Whether backend `index` is taken into the rotation (readiness, and no refused connection since). */
  ready(index: number): boolean;
  /** Rewrites the body of answers to GET `path` (a server lacking a feature), or stops when undefined. */
  rewrite(path: string, edit: ((body: string) => string) | undefined): void;
  close(): Promise<void>;
}

/** Connection-level headers, which a proxy does not pass on. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "upgrade"];

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

/** Sends the backend's answer on, edited when an edit is set for its GET path. */
function relay(
  from: IncomingMessage,
  entry: Routed,
  req: IncomingMessage,
  res: ServerResponse,
  edits: ReadonlyMap<string, (body: string) => string>,
): void {
  entry.status = from.statusCode;
  // A backend's answer cut short (its process killed) cuts the client's too, as a proxy does.
  from.on("close", () => {
    if (!from.complete) res.destroy();
  });
  const edit = req.method === "GET" ? edits.get(req.url ?? "") : undefined;
  if (edit === undefined) {
    res.writeHead(from.statusCode ?? 502, endToEnd(from.headers));
    from.pipe(res);
    return;
  }
  const chunks: Buffer[] = [];
  from.on("data", (c: Buffer) => chunks.push(c));
  from.on("end", () => {
    const body = edit(Buffer.concat(chunks).toString("utf8"));
    const headers = { ...endToEnd(from.headers), "content-length": String(Buffer.byteLength(body)) };
    res.writeHead(from.statusCode ?? 502, headers).end(body);
  });
}

/** Listens on `port` (0: any) of 127.0.0.1. */
export async function startBalancer(port = 0, opts: BalancerOptions = {}): Promise<Balancer> {
  let backends: readonly URL[] = [];
  let up: boolean[] = [];
  let next = 0;
  const routed: Routed[] = [];
  const edits = new Map<string, (body: string) => string>();
  // Kept-alive connections to the backends, as nginx's `keepalive`.
  const agent = new Agent({ keepAlive: true });

  /** The next backend in turn that is up and not yet tried; any untried one when none is up. */
  const pick = (tried: readonly number[]): number | undefined => {
    const candidates = backends.map((_, i) => i).filter((i) => !tried.includes(i));
    const live = candidates.filter((i) => up[i]);
    const pool = live.length > 0 ? live : candidates;
    if (pool.length === 0) return undefined;
    return pool[next++ % pool.length];
  };

  const probe = async (index: number, base: URL) => {
    try {
      const res = await fetch(new URL(opts.readinessPath!, base), { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (backends[index] === base) up[index] = res.status === 200;
    } catch {
      if (backends[index] === base) up[index] = false;
    }
  };
  const poller =
    opts.readinessPath === undefined
      ? undefined
      : setInterval(() => backends.forEach((b, i) => void probe(i, b)), opts.pollMs ?? 250);

  const server: Server = createServer((req, res) => {
    const session = req.headers["mcp-session-id"];
    const mcpMethod = req.headers["mcp-method"];
    const entry: Routed = {
      method: req.method ?? "",
      path: req.url ?? "",
      sessionId: typeof session === "string" ? session : undefined,
      mcpMethod: typeof mcpMethod === "string" ? mcpMethod : undefined,
      backend: -1,
      refusedBy: [],
    };
    routed.push(entry);
    const attempt = () => {
      const index = pick(entry.refusedBy);
      if (index === undefined) return void res.writeHead(502).end();
      entry.backend = index;
      const target = backends[index]!;
      const headers = endToEnd(req.headers);
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
        (from) => relay(from, entry, req, res, edits),
      );
      let connected = false;
      // The request (headers and body) is written only once the connection stands, so a refused
      // connection has sent nothing and may go to another backend.
      const send = () => {
        connected = true;
        req.pipe(upstream);
      };
      upstream.on("socket", (socket) => (socket.connecting ? socket.once("connect", send) : send()));
      upstream.on("error", (err) => {
        if (connected || res.headersSent) {
          entry.failure = `${err.message}${upstream.reusedSocket ? " (a kept-alive connection)" : ""}`;
          return void res.destroy();
        }
        // Out of the rotation until its readiness probe answers 200 again.
        if (poller || opts.skipDead) up[index] = false;
        entry.refusedBy.push(index);
        attempt();
      });
      res.on("close", () => {
        if (!res.writableFinished) upstream.destroy();
      });
    };
    attempt();
  });

  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    routed,
    use(list) {
      backends = list.map((b) => new URL(b));
      up = backends.map(() => true);
    },
    ready: (index) => up[index] === true,
    rewrite(path, edit) {
      if (edit) edits.set(path, edit);
      else edits.delete(path);
    },
    close: () =>
      new Promise((resolve) => {
        clearInterval(poller);
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
