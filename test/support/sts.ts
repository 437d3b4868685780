// Peers of per-user upstream tests: a small RFC 8693 security token service built on jose, which
// checks Portico's assertion of the user as a real STS would (signature against Portico's JWKS,
// issuer, audience, expiry, client authentication) and issues a token for the upstream's audience
// carrying the user's `sub`; and an upstream MCP server built with the official SDK that accepts
// only the STS's tokens and whose tools depend on who calls.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createRemoteJWKSet, generateKeyPair, jwtVerify, SignJWT, type CryptoKey } from "jose";

export const STS_CLIENT = { id: "portico", secret: "sts-client-secret-0123456789" };
export const UPSTREAM_AUDIENCE = "https://notes.internal.example";
const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of req) body += String(chunk);
  return body;
}

/** RFC 6749 §2.3.1: client_secret_basic, each part form-urlencoded before Base64. */
function clientAuthenticated(header: string | undefined): boolean {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? "");
  if (!m) return false;
  const [id, secret] = Buffer.from(m[1]!, "base64")
    .toString()
    .split(":")
    .map((part) => decodeURIComponent(part.replaceAll("+", " ")));
  return id === STS_CLIENT.id && secret === STS_CLIENT.secret;
}

function json(res: ServerResponse, status: number, body: object) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

export interface Sts {
  readonly tokenUrl: string;
  /** Portico's issuer (its JWKS at /oauth/jwks.json), set once Portico listens. */
  issuer: string;
  /** Users (`sub`) the STS refuses: invalid_grant. */
  readonly refuse: Set<string>;
  /** Every exchange it granted or refused: the assertion's claims, or why it refused. */
  readonly seen: Array<{ sub?: string; iss?: string; aud?: unknown; refused?: string; audience?: string }>;
  /** A token for the upstream carrying `sub`, as the STS would issue it. */
  issue(sub: string): Promise<string>;
  readonly publicKey: CryptoKey;
  close(): void;
}

export async function startSts(): Promise<Sts> {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const seen: Sts["seen"] = [];
  const refuse = new Set<string>();
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const server = createServer((req, res) => void serve(req, res));
  const tokenUrl = `${await listen(server)}/token`;
  const sts: Sts = {
    tokenUrl,
    issuer: "",
    refuse,
    seen,
    publicKey,
    issue: (sub) =>
      new SignJWT({ scope: "notes" })
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(new URL(tokenUrl).origin)
        .setSubject(sub)
        .setAudience(UPSTREAM_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey),
    close: () => server.close(),
  };

  async function serve(req: IncomingMessage, res: ServerResponse) {
    const form = new URLSearchParams(await bodyOf(req));
    if (!clientAuthenticated(req.headers.authorization)) return json(res, 401, { error: "invalid_client" });
    if (form.get("grant_type") !== GRANT) return json(res, 400, { error: "unsupported_grant_type" });
    if (form.get("subject_token_type") !== JWT_TYPE || form.get("requested_token_type") !== ACCESS_TOKEN_TYPE)
      return json(res, 400, { error: "invalid_request" });
    jwks ??= createRemoteJWKSet(new URL(`${sts.issuer}/oauth/jwks.json`));
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(form.get("subject_token") ?? "", jwks, {
        issuer: sts.issuer,
        audience: tokenUrl,
        requiredClaims: ["exp", "iat", "sub", "jti"],
        maxTokenAge: "2m",
      }));
    } catch (err) {
      seen.push({ refused: (err as Error).message });
      return json(res, 400, { error: "invalid_grant" });
    }
    const audience = form.get("audience") ?? undefined;
    if (refuse.has(claims.sub!)) {
      seen.push({ sub: claims.sub, refused: "user refused", audience });
      return json(res, 400, { error: "invalid_grant", error_description: "no access for this subject" });
    }
    seen.push({ sub: claims.sub, iss: claims.iss, aud: claims.aud, audience });
    json(res, 200, {
      access_token: await sts.issue(claims.sub!),
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: 300,
    });
  }
  return sts;
}

export interface SubjectUpstream {
  readonly url: string;
  /** Subjects whose next request is answered 401 (a token revoked at the upstream). */
  readonly rejectOnce?: Set<string>;
  /** Every Authorization header it was sent, accepted or not. */
  readonly authorizations: string[];
  close(): void;
}

/**
 * An MCP server (official SDK, session era) that accepts only the STS's tokens for its audience.
 * Each upstream session is its caller's: `whoami` answers the token's subject, and a tool named
 * after the subject is listed to that subject alone.
 */
export async function startSubjectUpstream(sts: Sts): Promise<SubjectUpstream> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; sub: string }>();
  const authorizations: string[] = [];
  const rejectOnce = new Set<string>();
  const server = createServer((req, res) => void serve(req, res));

  async function serve(req: IncomingMessage, res: ServerResponse) {
    const authorization = req.headers.authorization ?? "";
    authorizations.push(authorization);
    let sub: string;
    try {
      const { payload } = await jwtVerify(authorization.replace(/^Bearer /, ""), sts.publicKey, {
        issuer: new URL(sts.tokenUrl).origin,
        audience: UPSTREAM_AUDIENCE,
      });
      sub = payload.sub!;
      if (rejectOnce.delete(sub)) throw new Error("revoked");
    } catch {
      res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
      return;
    }
    const known = sessions.get(String(req.headers["mcp-session-id"]));
    // An upstream session is bound to the subject that opened it.
    if (known && known.sub !== sub) return void res.writeHead(403).end();
    if (known) return void known.transport.handleRequest(req, res);
    const mcp = new McpServer({ name: "notes", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "Who the upstream thinks you are" }, async () => ({
      content: [{ type: "text", text: `subject: ${sub}` }],
    }));
    mcp.registerTool(
      `notes_of_${sub.replace(/[^A-Za-z0-9_.-]/g, "_")}`,
      { description: "Your notes" },
      async () => ({
        content: [{ type: "text", text: `notes of ${sub}` }],
      }),
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, { transport, sub }),
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  }
  const url = `${await listen(server)}/mcp`;
  return {
    url,
    rejectOnce,
    authorizations,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** An HTTP tool endpoint that accepts only the STS's tokens and answers the token's subject. */
export async function startSubjectEndpoint(sts: Sts): Promise<SubjectUpstream> {
  const authorizations: string[] = [];
  const server = createServer((req, res) => {
    const authorization = req.headers.authorization ?? "";
    authorizations.push(authorization);
    jwtVerify(authorization.replace(/^Bearer /, ""), sts.publicKey, {
      issuer: new URL(sts.tokenUrl).origin,
      audience: UPSTREAM_AUDIENCE,
    }).then(
      ({ payload }) => json(res, 200, { subject: payload.sub }),
      () => res.writeHead(401).end(),
    );
  });
  const url = `${await listen(server)}/who`;
  return { url, authorizations, close: () => server.close() };
}
