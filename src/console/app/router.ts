// Client-side routes under /admin/console/ (docs/console.md): the History API, and same-origin
// links under the console's base followed without a page load. The server answers every such path
// with the same page (src/console/assets.ts); the sign-in pages are real pages, never routed here.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/admin/console";

const ours = (path: string) =>
  (path === `${BASE}/` || path.startsWith(`${BASE}/`)) && !path.startsWith(`${BASE}/sign-in`);

/** The path below the base, e.g. "/t/acme/providers" ("/" for the base itself). */
function current(): string {
  const path = window.location.pathname;
  return ours(path) ? path.slice(BASE.length) || "/" : "/";
}

const listeners = new Set<(path: string) => void>();

/** Goes to a console path (below the base) without reloading the page. */
export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  if (replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  for (const listener of listeners) listener(current());
}

/** The current console path; follows links and the back button. */
export function useRoute(): string {
  const [path, setPath] = useState(current);
  useEffect(() => {
    const onPop = () => setPath(current());
    const onClick = (event: MouseEvent) => {
      if (event.defaultPrevented || event.button !== 0) return;
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const link = (event.target as Element | null)?.closest("a");
      if (!link || link.target || link.origin !== window.location.origin || !ours(link.pathname)) return;
      event.preventDefault();
      navigate(link.pathname.slice(BASE.length) + link.search);
    };
    listeners.add(setPath);
    window.addEventListener("popstate", onPop);
    document.addEventListener("click", onClick);
    return () => {
      listeners.delete(setPath);
      window.removeEventListener("popstate", onPop);
      document.removeEventListener("click", onClick);
    };
  }, []);
  return path;
}

/** A link to a console path (below the base). */
export const href = (to: string) => `${BASE}${to}`;
