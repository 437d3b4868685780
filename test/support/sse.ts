// A minimal SSE reader over fetch, for tests that need to see event ids and drop connections.
export interface SseEvent {
  id?: string;
  /** The event's type (`endpoint`, `message` on the HTTP+SSE transport); absent for the default. */
  event?: string;
  data: string;
  retry?: number;
}

/** Reads events from a response body until `stop` returns true or the stream ends. */
export async function readEvents(
  res: Response,
  stop: (events: SseEvent[]) => boolean = () => false,
): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { data: "" };
        const data: string[] = [];
        let isEvent = false;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          isEvent = true;
          const [field, ...rest] = line.split(":");
          const v = rest.join(":").replace(/^ /, "");
          if (field === "id") event.id = v;
          else if (field === "event") event.event = v;
          else if (field === "data") data.push(v);
          else if (field === "retry") event.retry = Number(v);
        }
        if (!isEvent) continue;
        event.data = data.join("\n");
        events.push(event);
        if (stop(events)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return events;
}
