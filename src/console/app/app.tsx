// The console's frame (docs/console.md): who is signed in and sign-out, the navigation (collapsed
// behind a button on narrow screens), and the view the path names.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, must, SIGN_IN, useCsrfToken, type Session } from "./api";
import { href, navigate, useRoute } from "./router";
import { Loading, useAction, useLoad } from "./ui";
import { TenantsView } from "./views/tenants";
import { ProvidersView, ProviderView } from "./views/providers";
import { TryView } from "./views/try-it";
import { SessionsView } from "./views/sessions";
import { KeysView } from "./views/keys";
import { UsersView } from "./views/users";
import { OAuthView } from "./views/oauth";
import { AccountsView } from "./views/accounts";
import { ServersView } from "./views/servers";
import { PolicyView } from "./views/policy";
import { PinsView } from "./views/pins";
import { AuditView } from "./views/audit";
import { TrafficView } from "./views/traffic";

const TENANT_VIEWS: ReadonlyArray<readonly [string, string]> = [
  ["providers", "Providers"],
  ["try", "Try it"],
  ["sessions", "Sessions"],
  ["keys", "API keys"],
  ["users", "Users"],
  ["oauth", "OAuth clients"],
  ["accounts", "Connected accounts"],
  ["servers", "Virtual servers"],
  ["policy", "Policy"],
  ["pins", "Pending tools"],
  ["audit", "Audit log"],
  ["traffic", "Traffic"],
];

export function App() {
  const session = useLoad(() => must(api.GET("/session")), []);
  useEffect(() => useCsrfToken(session.data?.csrf), [session.data]);
  return <Loading loaded={session}>{(me) => <Console me={me} />}</Loading>;
}

/** The tenant the path names, if any: /t/{tenant}/… */
function routeParts(path: string): { tenant?: string; view: string; rest: string[] } {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "t" && parts[1])
    return { tenant: parts[1], view: parts[2] ?? "providers", rest: parts.slice(3) };
  return { view: parts[0] ?? "", rest: parts.slice(1) };
}

function Console(props: { me: Session }) {
  const { me } = props;
  const path = useRoute();
  const [menuOpen, setMenuOpen] = useState(false);
  const route = routeParts(path);
  // A tenant admin has one tenant: the navigation always offers its views. Another tenant's path is
  // asked of the API like any other, which refuses it (shown in words).
  const tenant = route.tenant ?? (me.platform ? undefined : (me.tenant ?? undefined));
  useEffect(() => {
    if (path !== "/") return;
    if (me.platform || !me.tenant) navigate("/tenants", true);
    else navigate(`/t/${encodeURIComponent(me.tenant)}/providers`, true);
  }, [path]);
  useEffect(() => setMenuOpen(false), [path]);
  // A new view takes the focus to its content, as a page load would for a screen reader.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else document.getElementById("main")?.focus();
  }, [path]);
  const title = viewTitle(route.view, route.tenant);
  useEffect(() => {
    document.title = `${title} · Portico console`;
  }, [title]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <p class="brand">
          <a href={href("/")}>Portico console</a>
        </p>
        <Who me={me} />
        <button
          type="button"
          class="menu"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
      </header>
      <div class="frame">
        <nav id="nav" aria-label="Console" class={menuOpen ? "open" : ""}>
          {!me.platform && (
            <ul>
              <NavLink to="/tenants" current={path}>
                Your tenant
              </NavLink>
              <NavLink to="/traffic" current={path}>
                Traffic
              </NavLink>
            </ul>
          )}
          {me.platform && (
            <ul>
              <NavLink to="/tenants" current={path}>
                Tenants
              </NavLink>
              <NavLink to="/keys" current={path}>
                Platform API keys
              </NavLink>
              <NavLink to="/audit" current={path}>
                Platform audit log
              </NavLink>
              <NavLink to="/traffic" current={path}>
                Traffic
              </NavLink>
            </ul>
          )}
          {tenant !== undefined && (
            <>
              <h2 class="nav-tenant">Tenant {tenant}</h2>
              <ul>
                {TENANT_VIEWS.map(([view, label]) => (
                  <NavLink to={`/t/${encodeURIComponent(tenant)}/${view}`} current={path}>
                    {label}
                  </NavLink>
                ))}
              </ul>
            </>
          )}
        </nav>
        <main id="main" tabIndex={-1}>
          <h1>{title}</h1>
          <View me={me} tenant={route.tenant} view={route.view} rest={route.rest} />
        </main>
      </div>
    </>
  );
}

function NavLink(props: { to: string; current: string; children: ComponentChildren }) {
  const here = props.current === props.to || props.current.startsWith(`${props.to}/`);
  return (
    <li>
      <a href={href(props.to)} aria-current={here ? "page" : undefined}>
        {props.children}
      </a>
    </li>
  );
}

function viewTitle(view: string, tenant: string | undefined): string {
  const label = TENANT_VIEWS.find(([v]) => v === view)?.[1];
  if (tenant !== undefined && label) return `${label} of ${tenant}`;
  if (view === "keys") return "Platform API keys";
  if (view === "audit") return "Platform audit log";
  if (view === "traffic") return "Traffic";
  return "Tenants";
}

function View(props: { me: Session; tenant: string | undefined; view: string; rest: string[] }) {
  const { me, tenant, view, rest } = props;
  if (tenant === undefined) {
    if (view === "traffic") return <TrafficView />;
    if (view !== "keys" && view !== "audit") return <TenantsView me={me} />;
    // The platform's keys and log: not offered to a tenant admin (the API would refuse them too).
    if (!me.platform) return <p>Only platform admins see this page. Your tenant's views are in the menu.</p>;
    return view === "keys" ? <KeysView /> : <AuditView />;
  }
  const key = `${tenant}/${view}`;
  switch (view) {
    case "providers":
      return rest[0] ? (
        <ProviderView key={`${key}/${rest[0]}`} tenant={tenant} provider={rest[0]} />
      ) : (
        <ProvidersView key={key} tenant={tenant} />
      );
    case "try":
      return <TryView key={key} tenant={tenant} />;
    case "sessions":
      return <SessionsView key={key} tenant={tenant} />;
    case "keys":
      return <KeysView key={key} tenant={tenant} />;
    case "users":
      return <UsersView key={key} tenant={tenant} />;
    case "oauth":
      return <OAuthView key={key} tenant={tenant} />;
    case "accounts":
      return <AccountsView key={key} tenant={tenant} />;
    case "servers":
      return <ServersView key={key} tenant={tenant} />;
    case "policy":
      return <PolicyView key={key} tenant={tenant} />;
    case "pins":
      return <PinsView key={key} tenant={tenant} />;
    case "audit":
      return <AuditView key={key} tenant={tenant} />;
    case "traffic":
      return <TrafficView key={key} tenant={tenant} />;
    default:
      return <p>There is no such page. Choose a view in the menu.</p>;
  }
}

function Who(props: { me: Session }) {
  const { me } = props;
  const action = useAction();
  const signOut = () =>
    action.run(async () => {
      await must(api.DELETE("/session"));
      window.location.assign(`${SIGN_IN}?signed-out`);
      return "Signed out";
    });
  const role = me.platform ? "platform admin" : `admin of ${me.tenant ?? "?"}`;
  return (
    <div class="who">
      <p>
        Signed in as <strong>{me.name}</strong> ({role}
        {me.via === "key" ? ", with an API key" : ""})
      </p>
      {me.via === "session" && (
        <button type="button" onClick={() => void signOut()} disabled={action.busy}>
          Sign out
        </button>
      )}
      {action.message}
    </div>
  );
}
