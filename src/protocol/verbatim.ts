// Results passed on as their upstream wrote them (docs/performance.md "The pass-through path"). A
// result read from an upstream's answer is kept with its own JSON text when that answer is one
// compact JSON-RPC response of the usual shape; the endpoint then writes those bytes under the
// client's id instead of serializing the parsed objects again. Whatever changes a result makes a
// new object (older-revisions.ts, the bridges), which has no text: it is serialized as before,
// unless it only sets top-level members, whose values are then written into the kept text
// (keepRewritten). A kept result is frozen, so a change made in place fails loudly instead of
// going unsent.
import type { RequestId, RpcResponse } from "./jsonrpc.js";

/** The methods whose results an upstream client keeps with their text. */
export const PASSED_ON: ReadonlySet<string> = new Set(["tools/call", "resources/read", "prompts/get"]);

/**
 * The text rides on the result itself under a symbol (JSON.stringify skips symbols), naming the
 * object it belongs to: a copy made by spreading carries it too, and is then told apart. A WeakMap
 * cost more than serializing a small result again (≈ 1.5 µs against 0.8 µs for the forward
 * bench's echo result, in a loop on the bench machine).
 */
const TEXT = Symbol("portico.text");

interface Kept {
  readonly of: object;
  readonly text: string;
}

/** The two envelopes the SDKs write: the Python SDK's (jsonrpc, id, result) and TypeScript's (result, jsonrpc, id). */
const RESULT_FIRST = '{"result":';

/**
 * Keeps `result`, the result member of `message` parsed from `text` (a response to request `id`),
 * with its text, when the envelope is compact and holds nothing else. The JSON was valid (it was
 * parsed); what is checked here is that the span taken is the result member and all of it: one
 * value, so a duplicate member cannot smuggle other bytes past what was checked.
 */
export function keepText(text: string, id: number, message: object, result: object): void {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  let start: number;
  const head = `{"jsonrpc":"2.0","id":${id},"result":`;
  if (text.startsWith(head)) {
    start = head.length;
    end--; // the envelope's closing brace
  } else if (text.startsWith(RESULT_FIRST)) {
    const tail = `,"jsonrpc":"2.0","id":${id}}`;
    if (!text.endsWith(tail, end)) return;
    start = RESULT_FIRST.length;
    end -= tail.length;
  } else return;
  if (Object.keys(message).length !== 3 || text.charCodeAt(start) !== BRACE || valueEnd(text, start) !== end)
    return;
  keep(result, text.slice(start, end));
}

/** Gives `result` the JSON text it is written as, and freezes it. */
function keep(result: object, text: string): void {
  (result as { [TEXT]?: Kept })[TEXT] = { of: result, text };
  Object.freeze(result);
}

/**
 * Keeps `after`, a shallow copy of the kept result `before` with some top-level members set
 * anew, with a text made from `before`'s: a member whose value changed has its value's span
 * replaced, one `before` lacks is appended, in `after`'s order; the rest are the upstream's bytes.
 * `after` is then serialized again when `before` has no text, or lost a member. The 2026-07-28
 * lane stamps its resultType, serverInfo and cache hints this way (docs/performance.md).
 */
export function keepRewritten(before: Record<string, unknown>, after: Record<string, unknown>): void {
  const text = textOf(before);
  if (text === undefined) return;
  for (const key in before) if (!Object.hasOwn(after, key)) return;
  let out = text;
  let added = "";
  for (const key in after) {
    const value = after[key];
    if (!Object.hasOwn(before, key)) {
      if (value !== undefined) added += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
    } else if (value !== before[key]) {
      const span = value === undefined ? undefined : memberValue(out, key);
      if (span === undefined) return;
      out = `${out.slice(0, span[0])}${JSON.stringify(value)}${out.slice(span[1])}`;
    }
  }
  if (added !== "")
    out =
      Object.keys(before).length === 0 ? `{${added.slice(1)}}` : `${out.slice(0, out.length - 1)}${added}}`;
  keep(after, out);
}

/** The text a result was read from, when it is passed on unchanged. */
export function textOf(result: object): string | undefined {
  const kept = (result as { [TEXT]?: Kept })[TEXT];
  return kept?.of === result ? kept.text : undefined;
}

/** A result response as JSON: the result's own text when it has one, else serialized. */
export function resultJson(id: RequestId, result: Record<string, unknown>): string {
  const text = textOf(result);
  if (text === undefined) return JSON.stringify({ jsonrpc: "2.0", id, result });
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${text}}`;
}

/** A response as JSON: a result in its own text when it has one. */
export function responseJson(response: RpcResponse): string {
  return "result" in response ? resultJson(response.id, response.result) : JSON.stringify(response);
}

const BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Where the value of the top-level member `key` of the JSON object `text` (compact or not) starts
 * and ends; undefined when no member is spelled so, or more than one is (JSON.parse keeps the
 * last), or any member's name holds an escape: `"_\u006deta"` is `_meta` too, and a duplicate
 * spelled so would be the one a client keeps.
 */
function memberValue(text: string, key: string): [number, number] | undefined {
  const name = JSON.stringify(key);
  let found: [number, number] | undefined;
  let i = skipSpace(text, 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return undefined;
  for (;;) {
    const nameEnd = stringEnd(text, i);
    for (let c = i + 1; c < nameEnd - 1; c++) if (text.charCodeAt(c) === BACKSLASH) return undefined;
    const named = nameEnd - i === name.length && text.startsWith(name, i);
    const start = skipSpace(text, skipSpace(text, nameEnd) + 1); // past the colon
    const end = anyValueEnd(text, start);
    if (named) {
      if (found !== undefined) return undefined;
      found = [start, end];
    }
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== COMMA) return found;
    i = skipSpace(text, i + 1);
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index after the string whose opening quote is at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
  return i + 1;
}

/** The index after the value starting at `start`: an object, array, string, number or literal. */
function anyValueEnd(text: string, start: number): number {
  const c = text.charCodeAt(start);
  if (c === BRACE || c === BRACKET) return valueEnd(text, start);
  if (c === QUOTE) return stringEnd(text, start);
  let i = start;
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    i++;
  }
  return i;
}

/**
 * Where the object or array starting at `start` of valid JSON `text` ends (the index after its
 * closing bracket): brackets counted outside strings, a string skipped to its unescaped quote.
 */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = stringEnd(text, i) - 1;
    else if (c === BRACE || c === BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
  }
  return -1;
}
