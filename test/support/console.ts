// The console's sign-in driven like a browser (a cookie jar, no redirect followed by itself), and
// the admin API called with the jar's console session cookie (docs/admin-api.md "Console sessions").
import assert from "node:assert/strict";
import { AdminClient, type AdminResponse } from "./admin.js";
import { formOf } from "./oauth.js";

/** A browser's cookie jar, following no redirect by itself. */
export class Jar {
  readonly cookies = new Map<string, string>();
  readonly setCookies: string[] = [];
  get(target: string | URL, headers: Record<string, string> = {}): Promise<Response> {
    return this.send(target, { method: "GET", headers });
  }
  post(target: string | URL, fields: Record<string, string>): Promise<Response> {
    return this.send(target, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });
  }
  get header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  async send(target: string | URL, init: RequestInit): Promise<Response> {
    const res = await fetch(target, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as object), ...(this.header && { cookie: this.header }) },
    });
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const value = pair.slice(eq + 1);
      if (value === "") this.cookies.delete(pair.slice(0, eq));
      else this.cookies.set(pair.slice(0, eq), value);
    }
    return res;
  }
}

export const location = (res: Response) => new URL(res.headers.get("location")!, res.url);
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

/** Signs a platform user in on the console's page: its answer (303 to the console when it worked). */
export async function platformSignIn(
  url: string,
  jar: Jar,
  user: { username: string; password: string },
): Promise<Response> {
  const page = await jar.get(`${url}/admin/console/sign-in`);
  assert.equal(page.status, 200);
  return jar.post(`${url}/admin/console/sign-in/platform`, { csrf: csrfOf(await page.text()), ...user });
}

/** A tenant admin's sign-in through Portico's login page: the console's answer at its return. */
export async function localSignIn(
  url: string,
  jar: Jar,
  tenant: string,
  username: string,
  password: string,
): Promise<Response> {
  const html = await (await jar.get(`${url}/admin/console/sign-in`)).text();
  const toLogin = await jar.post(`${url}/admin/console/sign-in/tenant`, { csrf: csrfOf(html), tenant });
  assert.equal(toLogin.status, 303, await toLogin.text());
  const loginHtml = await (await jar.get(location(toLogin))).text();
  assert.match(loginHtml, /Portico console/);
  const signedIn = await jar.post(`${url}/oauth/login`, { ...formOf(loginHtml), username, password });
  assert.equal(signedIn.status, 303, "no consent page for the console's own sign-in");
  assert.equal(location(signedIn).pathname, "/admin/console/sign-in/done");
  return jar.get(location(signedIn));
}

/** The admin API as the console calls it: the jar's cookie, no key; writes with the CSRF header and Origin. */
export class ConsoleApi {
  readonly #admin: AdminClient;
  constructor(
    readonly url: string,
    readonly jar: Jar,
  ) {
    this.#admin = new AdminClient(url);
  }
  call(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
    return this.#admin.call(method, path, {
      token: null,
      headers: { cookie: this.jar.header, ...opts.headers },
      ...(opts.body !== undefined && { body: opts.body }),
    });
  }
  async write(method: string, path: string, body?: unknown): Promise<AdminResponse> {
    const { csrf } = (await this.call("GET", "/session")).body as { csrf: string };
    return this.call(method, path, { body, headers: { "x-portico-csrf": csrf, origin: this.url } });
  }
}
