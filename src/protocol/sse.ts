// Reading Server-Sent Events (WHATWG HTML §9.2.6), for the streams upstream MCP servers answer with.

/**
 * An event ID is sent back as the Last-Event-ID header: one a header cannot carry (control
 * characters, U+0000 which §9.2.6 says to ignore, non-ASCII) or longer than MAX_EVENT_ID is ignored.
 */
const HEADER_SAFE = /^[\x20-\x7e]*$/;
const MAX_EVENT_ID = 1024;

/** What an SSE consumer tells the reader: keep reading, or stop (the stream is closed). */
export type Next = "more" | "stop";

/** An event grew past the reader's limit before it ended. */
export class SseEventTooLarge extends Error {
  override readonly name = "SseEventTooLarge";

  constructor(readonly limit: number) {
    super(`an upstream stream event exceeded ${limit} characters`);
  }
}

/**
 * Server-Sent Events framing (WHATWG HTML §9.2.6): lines end in CRLF, LF or CR; `data:` lines join
 * with "\n"; comments and other fields are skipped; a blank line ends an event of type "message";
 * an event the stream ends in the middle of is dropped. Each chunk is scanned once.
 */
export class SseParser {
  /** The line being received, in pieces (joined once it is complete). */
  #partial: string[] = [];
  #partialLength = 0;
  /** The last chunk ended in CR: a LF opening the next one belongs to it. */
  #skipLf = false;
  #data = "";
  #hasData = false;
  #type = "";
  /** The stream's last event ID (for Last-Event-ID on a reconnect); undefined until one is sent. */
  lastEventId: string | undefined;
  readonly #maxEvent: number;

  constructor(maxEventCharacters: number) {
    this.#maxEvent = maxEventCharacters;
  }

  feed(text: string, onData: (data: string) => Next): Next {
    let start = 0;
    if (this.#skipLf && text.charCodeAt(0) === 10) start = 1;
    this.#skipLf = false;
    let lf = -2;
    let cr = -2;
    for (;;) {
      // Positions are searched again only once passed, and never after a miss.
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      let line = text.slice(start, end);
      if (this.#partialLength > 0) {
        this.#partial.push(line);
        line = this.#partial.join("");
        this.#partial = [];
        this.#partialLength = 0;
      }
      start = end + 1;
      if (end === cr) {
        if (start === text.length) this.#skipLf = true;
        else if (text.charCodeAt(start) === 10) start++;
      }
      if (this.#line(line, onData) === "stop") return "stop";
    }
    if (start < text.length) {
      this.#partial.push(start === 0 ? text : text.slice(start));
      this.#partialLength += text.length - start;
    }
    if (this.#partialLength + this.#data.length > this.#maxEvent) throw new SseEventTooLarge(this.#maxEvent);
    return "more";
  }

  #line(line: string, onData: (data: string) => Next): Next {
    if (line === "") {
      const dispatch = this.#hasData && (this.#type === "" || this.#type === "message");
      const data = this.#data;
      this.#data = "";
      this.#hasData = false;
      this.#type = "";
      return dispatch ? onData(data) : "more";
    }
    if (line.charCodeAt(0) === 58) return "more"; // ":" comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + (line.charCodeAt(colon + 1) === 32 ? 2 : 1));
    if (field === "data") {
      this.#data = this.#hasData ? `${this.#data}\n${value}` : value;
      this.#hasData = true;
    } else if (field === "event") this.#type = value;
    else if (field === "id" && value.length <= MAX_EVENT_ID && HEADER_SAFE.test(value))
      this.lastEventId = value;
    return "more";
  }
}
