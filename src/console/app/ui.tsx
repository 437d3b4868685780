// The console's small shared pieces: loading through the typed client, the live regions that say
// what happened (status for results, alert for errors), tables with headers, dates in words.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { failureText } from "./api";

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  readonly loading: boolean;
  readonly reload: () => void;
}

/** Loads once per change of `deps`, and every `pollMs` when given (live views). */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[], pollMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    let live = true;
    const run = () =>
      latest.current().then(
        (data) => live && setState({ data, loading: false }),
        (err: unknown) => live && setState((s) => ({ ...s, error: failureText(err), loading: false })),
      );
    void run();
    const timer = pollMs === undefined ? undefined : setInterval(() => void run(), pollMs);
    return () => {
      live = false;
      if (timer !== undefined) clearInterval(timer);
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action {
  /** Runs `work`; its success message (or its failure's words) goes to the live region. */
  readonly run: (work: () => Promise<string | undefined>) => Promise<void>;
  readonly busy: boolean;
  readonly message: ComponentChildren;
}

/** One form's or button row's outcome, announced: `role=status` for success, `role=alert` for failure. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | undefined>();
  const run = async (work: () => Promise<string | undefined>) => {
    setBusy(true);
    setOutcome(undefined);
    try {
      const text = await work();
      if (text !== undefined) setOutcome({ ok: true, text });
    } catch (err) {
      setOutcome({ ok: false, text: failureText(err) });
    } finally {
      setBusy(false);
    }
  };
  const message = (
    <>
      <p role="status" class="status">
        {outcome?.ok ? outcome.text : ""}
      </p>
      <p role="alert" class="error">
        {outcome && !outcome.ok ? outcome.text : ""}
      </p>
    </>
  );
  return { run, busy, message };
}

/** A loading state, an error, or the content. */
export function Loading<T>(props: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  const { data, error, loading } = props.loaded;
  return (
    <>
      {error !== undefined && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {loading && data === undefined && <p role="status">Loading…</p>}
      {data !== undefined && props.children(data)}
    </>
  );
}

/** A table with a caption and column headers; `rows` empty says so in words. */
export function Table(props: {
  caption: string;
  headers: readonly string[];
  rows: readonly ComponentChildren[][];
  empty?: string;
}) {
  if (props.rows.length === 0) return <p>{props.empty ?? `No ${props.caption.toLowerCase()}.`}</p>;
  return (
    // It scrolls sideways on a narrow screen: focusable, so the keyboard scrolls it too, and named.
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.caption}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.headers.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((cells) => (
            <tr>
              {cells.map((c) => (
                <td>{c}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A timestamp as the reader's locale writes it, the exact value in `datetime`. */
export function When(props: { at: string | undefined }) {
  if (!props.at) return <span>—</span>;
  return <time dateTime={props.at}>{new Date(props.at).toLocaleString()}</time>;
}

/**
 * A recent moment in words: its time of day ("14:02"), with the day before it when that is not
 * today; the full timestamp in `datetime` and in the title.
 */
export function Moment(props: { at: string }) {
  const at = new Date(props.at);
  const time = at.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const today = at.toDateString() === new Date().toDateString();
  const day = today ? "" : `${at.toLocaleDateString(undefined, { day: "numeric", month: "short" })}, `;
  return (
    <time dateTime={props.at} title={at.toLocaleString()}>
      {day}
      {time}
    </time>
  );
}

/** JSON for reading; it may scroll sideways, so it takes the focus (keyboard users scroll it too). */
export const Json = (props: { value: unknown }) => (
  <pre class="json" tabIndex={0}>
    {JSON.stringify(props.value, null, 2)}
  </pre>
);

/** Splits "a, b c" into ["a", "b", "c"]. */
export const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** Parses JSON the reader typed, saying where it is wrong. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}
