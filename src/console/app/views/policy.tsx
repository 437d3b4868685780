// A tenant's policy (docs/policy.md): edited as JSON, explained for one subject and entry, and
// tried on subjects before it is saved (the dry run shows what would change).
import { useState } from "preact/hooks";
import { api, ApiError, must, type Schemas } from "../api";
import { Json, Loading, parseJson, Table, useAction, useLoad, words } from "../ui";

const NEW_POLICY = '{\n  "default": "allow",\n  "rules": []\n}';

async function policyOf(tenant: string): Promise<Schemas["Policy"] | null> {
  try {
    return await must(api.GET("/tenants/{tenant}/policy", { params: { path: { tenant } } }));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export function PolicyView(props: { tenant: string }) {
  const { tenant } = props;
  const policy = useLoad(() => policyOf(tenant), [tenant]);
  return (
    <Loading loaded={policy}>
      {(current) => <PolicyEditor tenant={tenant} current={current} onSaved={policy.reload} />}
    </Loading>
  );
}

function PolicyEditor(props: { tenant: string; current: Schemas["Policy"] | null; onSaved: () => void }) {
  const { tenant } = props;
  const [text, setText] = useState(props.current ? JSON.stringify(props.current, null, 2) : NEW_POLICY);
  const [subjects, setSubjects] = useState('[{ "username": "alice" }]');
  const [dryRun, setDryRun] = useState<Schemas["PolicyDryRun"]>();
  const action = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = parseJson(text, "The policy") as Schemas["Policy"];
      await must(api.PUT("/tenants/{tenant}/policy", { params: { path: { tenant } }, body }));
      props.onSaved();
      return "Policy saved";
    });
  };
  const remove = () =>
    action.run(async () => {
      if (!window.confirm("Remove the policy? Every entry is then allowed.")) return undefined;
      await must(api.DELETE("/tenants/{tenant}/policy", { params: { path: { tenant } } }));
      props.onSaved();
      return "Policy removed";
    });
  const tryIt = () =>
    action.run(async () => {
      const body = {
        policy: parseJson(text, "The policy") as Schemas["Policy"],
        subjects: parseJson(subjects, "The subjects") as Schemas["PolicySubjectInput"][],
      };
      const result = await must(
        api.POST("/tenants/{tenant}/policy/dry-run", { params: { path: { tenant } }, body }),
      );
      setDryRun(result);
      const changes = result.subjects.reduce((n, s) => n + s.changes.length, 0);
      return `Dry run: ${changes} ${changes === 1 ? "entry" : "entries"} would change`;
    });
  return (
    <>
      <p>
        {props.current ? "This tenant has a policy." : "This tenant has no policy: every entry is allowed."}
      </p>
      <form onSubmit={save}>
        <label>
          Policy (JSON)
          <textarea rows={14} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <div class="buttons">
          <button type="submit" disabled={action.busy}>
            Save policy
          </button>
          {props.current && (
            <button type="button" class="danger" disabled={action.busy} onClick={() => void remove()}>
              Remove policy
            </button>
          )}
        </div>
      </form>
      <section aria-labelledby="dry-run">
        <h2 id="dry-run">Dry run</h2>
        <label>
          Subjects to try the policy above on (JSON list)
          <textarea rows={3} value={subjects} onInput={(e) => setSubjects(e.currentTarget.value)} />
        </label>
        <button type="button" disabled={action.busy} onClick={() => void tryIt()}>
          Dry run
        </button>
      </section>
      {action.message}
      {dryRun &&
        dryRun.subjects.map((s, i) => (
          <Table
            caption={`Changes for subject ${i + 1}`}
            headers={["Kind", "Name", "Now", "Then"]}
            rows={s.changes.map((c) => [c.kind, <code>{c.name}</code>, c.before, c.after])}
            empty={`Nothing would change for subject ${i + 1}.`}
          />
        ))}
      <Explain tenant={tenant} />
    </>
  );
}

function Explain(props: { tenant: string }) {
  const [username, setUsername] = useState("");
  const [roles, setRoles] = useState("");
  const [kind, setKind] = useState<"tool" | "prompt" | "resource">("tool");
  const [name, setName] = useState("");
  const [answer, setAnswer] = useState<Schemas["PolicyExplanation"]>();
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const subject = { ...(username ? { username } : {}), ...(roles ? { roles: words(roles) } : {}) };
      const result = await must(
        api.POST("/tenants/{tenant}/policy/explain", {
          params: { path: { tenant: props.tenant } },
          body: { subject, entry: { kind, name } },
        }),
      );
      setAnswer(result);
      return `${name}: ${result.effect === "allow" ? "allowed" : "denied"}${result.rule === null ? " by the default" : ` by rule ${result.rule + 1}`}`;
    });
  };
  return (
    <section aria-labelledby="explain">
      <h2 id="explain">Explain a decision</h2>
      <form onSubmit={submit} class="row">
        <label>
          Username
          <input value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Roles (comma-separated)
          <input value={roles} onInput={(e) => setRoles(e.currentTarget.value)} />
        </label>
        <label>
          Kind
          <select
            value={kind}
            onChange={(e) => setKind(e.currentTarget.value as "tool" | "prompt" | "resource")}
          >
            <option value="tool">Tool</option>
            <option value="prompt">Prompt</option>
            <option value="resource">Resource</option>
          </select>
        </label>
        <label>
          Name or URI
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Explain
        </button>
      </form>
      {action.message}
      {answer && <Json value={answer} />}
    </section>
  );
}
