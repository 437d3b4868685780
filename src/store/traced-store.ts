// The store as tracing sees it (docs/operations.md "Tracing"): each command run for a request is a
// span of that request, named by its Store operation, with `db.system.name` and nothing else — no
// key (keys carry session ids, token digests, tenant names) and no value. Used only when tracing
// is on (app.ts).
import { storeCommand } from "../tracing/spans.js";
import { STORE_COMMANDS, type Store } from "./store.js";

/** Operations traced besides the round trips a CommandObserver sees. */
const ALSO_TRACED = ["publish", "waitForReplica"] as const satisfies readonly (keyof Store)[];

/** `store` with each command wrapped in a span; everything else forwarded as is. */
export function tracedStore(store: Store): Store {
  const system = store.kind === "redis" ? "redis" : "portico.embedded";
  const traced: Record<string, unknown> = {};
  for (const name of [...STORE_COMMANDS, ...ALSO_TRACED]) {
    const command = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    traced[name] = (...args: unknown[]) => storeCommand(name, system, () => command(...args));
  }
  // Methods run on the store itself, whose private fields a proxy as `this` would not reach.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get: (target, property) => {
      if (typeof property === "string" && property in traced) return traced[property];
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      let method = bound.get(property);
      if (method === undefined) bound.set(property, (method = (value as () => unknown).bind(target)));
      return method;
    },
  });
}
