// The requestState of Portico's InputRequiredResults (basic/patterns/mrtr, 2026-07-28). It passes
// through the client, so it is sealed with AES-256-GCM under a key derived from
// PORTICO_SECRET_KEY: the client can neither read nor alter it (an upstream's own requestState
// travels inside it), and any replica can open it. The request it belongs to (tenant, principal,
// method, a digest of the salient params) is the AEAD's additional data, so state presented by
// another principal, for another tenant or on another request fails to open; an expiry inside
// bounds its replay.
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import { fail } from "../../protocol/errors.js";
import { randomId, type Secrets } from "../../crypto/secrets.js";
import { canonicalJson } from "../../protocol/canonical-json.js";

/** What a sealed state carries; both fields are optional. */
export interface StatePayload {
  /** The upstream's own requestState, handed back to it on the retry (2026-07-28 upstream). */
  readonly upstream?: string;
  /** The held call that waits for the answers (session-era upstream that asked mid-call). */
  readonly held?: string;
  /** The round's span as a W3C traceparent, which the retry's span links to (tracing on only). */
  readonly trace?: string;
}

/** The request a state is bound to. */
export interface StateBinding {
  readonly tenant: string;
  /** The authenticated principal; "" on a tenant without auth. */
  readonly principal: string;
  readonly method: string;
  /** digestOf(method, params). */
  readonly digest: string;
}

const VERSION = "1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
/**
 * Far above any real state (an upstream's blob included): a larger one is refused before any
 * crypto runs, and an upstream whose own state would seal larger fails the call (seal()), so a
 * client is never handed a state it cannot bring back.
 */
export const MAX_STATE_CHARS = 256 * 1024;

export class RequestStates {
  /** The current key seals; previous ones (a key rotation) still open. */
  readonly #keys: readonly Buffer[];

  constructor(
    secrets: Secrets,
    private readonly lifetimeMs: number,
  ) {
    this.#keys = secrets.keys("request-state");
  }

  seal(binding: StateBinding, payload: StatePayload): string {
    // The IV must never repeat under one key: 96 random bits from the pooled CSPRNG.
    const iv = Buffer.from(randomId(IV_BYTES), "base64url");
    const cipher = createCipheriv("aes-256-gcm", this.#keys[0]!, iv);
    cipher.setAAD(additionalData(binding));
    const plain = JSON.stringify({
      e: Date.now() + this.lifetimeMs,
      u: payload.upstream,
      h: payload.held,
      t: payload.trace,
    });
    const sealed = Buffer.concat([iv, cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    const state = `${VERSION}.${sealed.toString("base64url")}`;
    if (state.length > MAX_STATE_CHARS)
      throw fail(
        "PORTICO_ERR_PROVIDER_UNAVAILABLE",
        `The upstream's requestState is too large to travel through the client (${payload.upstream?.length ?? 0} characters; at most about ${Math.floor((MAX_STATE_CHARS * 3) / 4) - 100})`,
      );
    return state;
  }

  /** The payload of a state Portico sealed for this very request; -32602 for anything else. */
  open(binding: StateBinding, state: unknown): StatePayload {
    if (typeof state !== "string" || state.length > MAX_STATE_CHARS || !state.startsWith(`${VERSION}.`))
      throw invalid();
    const raw = Buffer.from(state.slice(VERSION.length + 1), "base64url");
    if (raw.length < IV_BYTES + TAG_BYTES) throw invalid();
    const aad = additionalData(binding);
    let plain: string | undefined;
    for (const key of this.#keys) {
      plain = openWith(key, raw, aad);
      if (plain !== undefined) break;
    }
    if (plain === undefined) throw invalid();
    const body = JSON.parse(plain) as { e: number; u?: string; h?: string; t?: string };
    if (!(body.e > Date.now()))
      throw fail(
        "PORTICO_ERR_MCP_INVALID_PARAMS",
        "Invalid requestState: it expired; send the original request again without requestState",
      );
    return { upstream: body.u, held: body.h, ...(body.t !== undefined && { trace: body.t }) };
  }
}

/**
 * What identifies the original request: the method and its salient params, whatever the client
 * adds for the round (`_meta`, `inputResponses`, `requestState`). Keys are sorted, so a client
 * that serializes the same params in another order still matches.
 */
export function digestOf(method: string, params: Record<string, unknown>): string {
  const salient: Record<string, unknown> = {};
  for (const key of Object.keys(params))
    if (key !== "_meta" && key !== "inputResponses" && key !== "requestState") salient[key] = params[key];
  return createHash("sha256").update(method).update("\n").update(canonicalJson(salient)).digest("base64url");
}

/** The plaintext of `raw` (IV, ciphertext, tag) under `key`; undefined when it does not open. */
function openWith(key: Buffer, raw: Buffer, aad: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return (
      decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES), undefined, "utf8") +
      decipher.final("utf8")
    );
  } catch {
    return undefined;
  }
}

function additionalData(b: StateBinding): Buffer {
  return Buffer.from(JSON.stringify([VERSION, b.tenant, b.principal, b.method, b.digest]));
}

function invalid() {
  return fail(
    "PORTICO_ERR_MCP_INVALID_PARAMS",
    "Invalid requestState: pass it back exactly as this server returned it, on the same request",
  );
}
