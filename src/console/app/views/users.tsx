// A tenant's local users and their roles (docs/policy.md): create one, change roles, delete.
import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Loading, Table, useAction, useLoad, When, words } from "../ui";

export function UsersView(props: { tenant: string }) {
  const { tenant } = props;
  const users = useLoad(
    async () =>
      (
        await must(
          api.GET("/tenants/{tenant}/users", { params: { path: { tenant }, query: { limit: 100 } } }),
        )
      ).items,
    [tenant],
  );
  const action = useAction();
  const remove = (user: string) =>
    action.run(async () => {
      if (!window.confirm(`Delete the user ${user}?`)) return undefined;
      await must(api.DELETE("/tenants/{tenant}/users/{user}", { params: { path: { tenant, user } } }));
      users.reload();
      return `User ${user} deleted`;
    });
  return (
    <>
      <CreateUser tenant={tenant} onCreated={users.reload} />
      {action.message}
      <Loading loaded={users}>
        {(items) => (
          <Table
            caption="Users"
            headers={["User", "Email", "Groups", "Roles", "Created", ""]}
            rows={items.map((u) => [
              u.username,
              u.email ?? "",
              (u.groups ?? []).join(", "),
              <Roles tenant={tenant} user={u} onSaved={users.reload} />,
              <When at={u.createdAt} />,
              <button
                type="button"
                class="danger"
                onClick={() => void remove(u.username)}
                aria-label={`Delete ${u.username}`}
              >
                Delete
              </button>,
            ])}
            empty="No local users."
          />
        )}
      </Loading>
    </>
  );
}

function Roles(props: { tenant: string; user: Schemas["User"]; onSaved: () => void }) {
  const { tenant, user } = props;
  const [roles, setRoles] = useState((user.roles ?? []).join(", "));
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await must(
        api.PATCH("/tenants/{tenant}/users/{user}", {
          params: { path: { tenant, user: user.username } },
          body: { roles: words(roles) },
        }),
      );
      props.onSaved();
      return `Roles of ${user.username} saved`;
    });
  };
  return (
    <form onSubmit={submit} class="row compact">
      <label>
        <span class="visually-hidden">Roles of {user.username}</span>
        <input value={roles} onInput={(e) => setRoles(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={action.busy} aria-label={`Save the roles of ${user.username}`}>
        Save
      </button>
      {action.message}
    </form>
  );
}

function CreateUser(props: { tenant: string; onCreated: () => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [roles, setRoles] = useState("");
  const [groups, setGroups] = useState("");
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = { username, password, roles: words(roles), groups: words(groups) };
      await must(api.POST("/tenants/{tenant}/users", { params: { path: { tenant: props.tenant } }, body }));
      setUsername("");
      setPassword("");
      props.onCreated();
      return `User ${username} created`;
    });
  };
  return (
    <section aria-labelledby="new-user">
      <h2 id="new-user">New user</h2>
      <form onSubmit={submit} class="row">
        <label>
          Username
          <input
            required
            autoComplete="off"
            value={username}
            onInput={(e) => setUsername(e.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            required
            type="password"
            autoComplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <label>
          Roles (comma-separated)
          <input value={roles} onInput={(e) => setRoles(e.currentTarget.value)} />
        </label>
        <label>
          Groups (comma-separated)
          <input value={groups} onInput={(e) => setGroups(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Create user
        </button>
      </form>
      {action.message}
    </section>
  );
}
