// Official-SDK clients of both eras behind one interface, for load against the conformance upstream
// fixture (bench/stress.ts, bench/soak.ts, test/e2e/rolling-restart.test.ts): SDK v1 session-era
// clients and SDK v2 clients that speak 2026-07-28, each call's answer checked.
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { connectClient } from "./clients.js";

export type Era = "session" | "2026-07-28";

/** What both SDKs' clients offer for the kinds of call the load makes. */
export interface Caller {
  readonly era: Era;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    onprogress?: (p: { progress: number }) => void,
  ): Promise<Record<string, unknown>>;
  readResource(uri: string): Promise<{ contents: unknown }>;
  close(): Promise<void>;
}

/** Which call `kind` makes (0 progress, 1 sampling, 2 a read), its answer checked. */
export async function oneCall(caller: Caller, tag: string, kind: number): Promise<void> {
  if (kind === 0) {
    const seen: number[] = [];
    await caller.callTool({ name: "test_tool_with_progress" }, (p) => seen.push(p.progress));
    if (seen.join() !== "0,50,100") throw new Error(`progress arrived as [${seen.join()}]`);
  } else if (kind === 1) {
    const r = await caller.callTool({ name: "test_sampling", arguments: { prompt: tag } });
    const text = (r.content as Array<{ text?: string }>)[0]?.text;
    if (text !== `LLM response: echo: ${tag}`) throw new Error(`sampling answered ${JSON.stringify(text)}`);
  } else {
    const r = await caller.readResource("test://static-text");
    if (!JSON.stringify(r.contents).includes("static text resource"))
      throw new Error("read returned the wrong content");
  }
}

/** The sampling answer both eras' clients give: the prompt echoed, so a mixed-up answer shows. */
function echo(messages: Array<{ content: unknown }>) {
  const content = messages[0]?.content as { text?: string } | undefined;
  return {
    model: "m",
    role: "assistant" as const,
    content: { type: "text" as const, text: `echo: ${content?.text}` },
  };
}

const unrouted = (url: URL) => url;

/** An SDK v1 client with a session; `route` rewrites each request's URL. */
export async function sessionCaller(url: string, route: (url: URL) => URL = unrouted): Promise<Caller> {
  const rc = await connectClient(url, { route });
  return {
    era: "session",
    callTool: (params, onprogress) => rc.client.callTool(params, undefined, onprogress ? { onprogress } : {}),
    readResource: (uri) => rc.client.readResource({ uri }),
    // Ends the session (DELETE) as well.
    close: async () => {
      await rc.transport.terminateSession();
      await rc.client.close();
    },
  };
}

/** An SDK v2 client that negotiated 2026-07-28 (no session); `route` rewrites each request's URL. */
export async function modernCaller(url: string, route: (url: URL) => URL = unrouted): Promise<Caller> {
  const client = new V2Client(
    { name: "load-v2", version: "1.0.0" },
    { capabilities: { sampling: {} }, versionNegotiation: { mode: "auto" } },
  );
  client.setRequestHandler("sampling/createMessage", async (req) => echo(req.params.messages));
  const fetchRouted: typeof fetch = (input, init) =>
    fetch(route(new URL(input instanceof Request ? input.url : String(input))), init);
  await client.connect(new V2Transport(new URL(url), { fetch: fetchRouted }));
  if (client.getProtocolEra() !== "modern")
    throw new Error(`the SDK v2 client chose ${client.getProtocolEra()}`);
  return {
    era: "2026-07-28",
    callTool: (params, onprogress) => client.callTool(params, onprogress ? { onprogress } : {}),
    readResource: (uri) => client.readResource({ uri }),
    close: () => client.close(),
  };
}

/** Counts of a load: calls passed per era, failures by message. */
export class Tally {
  readonly passed: Record<Era, number> = { session: 0, "2026-07-28": 0 };
  readonly errors = new Map<string, number>();

  note(what: string): void {
    this.errors.set(what, (this.errors.get(what) ?? 0) + 1);
  }

  get failed(): number {
    return [...this.errors.values()].reduce((x, y) => x + y, 0);
  }

  get total(): number {
    return this.passed.session + this.passed["2026-07-28"];
  }
}
