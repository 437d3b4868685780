// The store as tracing sees it (docs/operations.md "Tracing"): each command run for a request is a
// span of that request, named by its Store operation, with `db.system.name` and nothing else — no
// key (keys carry session ids, token digests, tenant names) and no value. Used only when tracing
// is on (app.ts).
import { storeCommand } from "../tracing/spans.js";
import { STORE_COMMANDS, type Store } from "./store.js";

/** Operations traced besides the round trips a CommandObserver sees. */
const ALSO_TRACED = ["publish", "waitForReplica"] as const satisfies readonly (keyof Store)[];

/** Forwarded as they are: a subscription lives longer than any request, closing is no request's. */
const FORWARDED = ["subscribe", "close"] as const satisfies readonly (keyof Store)[];

/** Every member of Store is in one of the lists above: a new one fails to compile until placed. */
type Unplaced = Exclude<
  keyof Store,
  (typeof STORE_COMMANDS)[number] | (typeof ALSO_TRACED)[number] | (typeof FORWARDED)[number] | "kind"
>;
const placed: [Unplaced] extends [never] ? true : Unplaced = true;
void placed;

/** A Store forwarding to `store`, each command wrapped in a span; `store` itself is left as it is. */
export function tracedStore(store: Store): Store {
  const system = store.kind === "redis" ? "redis" : "portico.embedded";
  const traced: Record<string, unknown> = { kind: store.kind };
  for (const name of [...STORE_COMMANDS, ...ALSO_TRACED]) {
    const command = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    traced[name] = (...args: unknown[]) => storeCommand(name, system, () => command(...args));
  }
  for (const name of FORWARDED) traced[name] = (store[name] as () => unknown).bind(store);
  return traced as unknown as Store;
}
