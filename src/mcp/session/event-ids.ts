// SSE event ids of session-era streams (docs/storage.md): `<stream>.<entry id>`, the entry id being
// the Redis Stream id of the event in its stream's log.

/** Orders `<ms>-<seq>` ids. */
export function compareEntryIds(a: string, b: string): number {
  const [am = "0", as = "0"] = a.split("-");
  const [bm = "0", bs = "0"] = b.split("-");
  return am.length !== bm.length
    ? am.length - bm.length
    : am !== bm
      ? am < bm
        ? -1
        : 1
      : Number(as) - Number(bs);
}

/** Splits a Last-Event-ID into stream id and entry id; undefined when it is not one of ours. */
export function parseEventId(eventId: string): { streamId: string; entryId: string } | undefined {
  const m = /^([A-Za-z0-9_-]{1,32})\.(\d{1,20}-\d{1,20})$/.exec(eventId);
  return m ? { streamId: m[1]!, entryId: m[2]! } : undefined;
}
