// /tenants/{t}/policy: a tenant's policy (docs/policy.md), saved in the tenant record by
// compare-and-set with If-Match and reloaded on every replica through the tenants channel; explain,
// a subject's view and dry runs read the catalog this replica serves (every capability).
import { excerpt, fail } from "../../protocol/errors.js";
import { changes, explain, subjectView } from "../../policy/explain.js";
import type { EntryKind, Subject, TenantPolicy } from "../../records/policy.js";
import { validatePolicy } from "../../records/validate-policy.js";
import { FULL_PROFILE } from "../../protocol/profile.js";
import type { TenantConfig } from "../../records/tenant.js";
import type { Handler } from "../plugin.js";
import { asProblem, checkIfMatch, etagOf } from "../records.js";
import type { AdminDeps } from "./deps.js";
import { readTenant } from "./tenants.js";

interface SubjectInput {
  readonly username?: string;
  readonly user?: string;
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
  readonly scopes?: readonly string[];
  readonly client?: string;
  readonly server?: string;
}

function withPolicy(config: TenantConfig, policy: TenantPolicy | undefined): TenantConfig {
  const { policy: _previous, ...rest } = config;
  return policy === undefined ? rest : { ...rest, policy };
}

const check = (input: unknown) => asProblem(() => validatePolicy(input, "policy"), "policy", "invalid");

export function policyHandlers(deps: AdminDeps): Record<string, Handler> {
  const etag = (policy: TenantPolicy | undefined) => etagOf(deps.secrets, policy ?? null);
  /** The catalog the subject is shown: its virtual server's, else the tenant URL's (every capability). */
  const catalogOf = async (tenant: string, server: string | undefined) => {
    if (server === undefined) return deps.registry.get(tenant)?.catalogFor(FULL_PROFILE);
    const runtime = deps.registry.server(tenant, server);
    if (!runtime)
      throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${tenant}" has no server "${excerpt(server)}"`);
    return runtime.catalogFor(FULL_PROFILE);
  };

  /** A subject as given, a local user's record filling in their sub, groups and roles. */
  async function subjectOf(tenant: string, input: SubjectInput): Promise<Subject> {
    const local =
      input.username === undefined ? undefined : await deps.oauth.users.get(tenant, input.username);
    if (input.username !== undefined && !local)
      throw fail(
        "PORTICO_ERR_ADMIN_NOT_FOUND",
        `Tenant "${tenant}" has no user "${excerpt(input.username)}"`,
      );
    return {
      user: local?.sub ?? input.user,
      groups: input.groups ?? local?.groups ?? [],
      roles: input.roles ?? local?.roles ?? [],
      scopes: input.scopes ?? [],
      client: input.client,
      server: input.server,
    };
  }

  /** The saved policy, changed by `next`, with its audit entry; `next` sees the current one. */
  async function save(
    id: string,
    actor: string,
    ifMatch: string | undefined,
    next: (current: TenantPolicy | undefined) => TenantPolicy | undefined,
  ) {
    let before: TenantPolicy | undefined;
    let after: TenantPolicy | undefined;
    const change = await deps.records.mutate(id, (current) => {
      if (!current) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `No tenant "${excerpt(id)}"`);
      before = current.config.policy;
      if (ifMatch !== undefined) checkIfMatch(ifMatch, deps.secrets, before ?? null);
      after = next(before);
      return withPolicy(current.config, after);
    });
    if (change.before !== change.after) {
      await deps.registry.reload(id);
      const action = after === undefined ? "policy.delete" : "policy.update";
      await deps.audit.record({ actor, action, tenant: id, target: id, before, after });
    }
    return after;
  }

  return {
    getPolicy: async ({ params }) => {
      const { config } = await readTenant(deps, params.tenant!);
      if (!config.policy) throw fail("PORTICO_ERR_ADMIN_NOT_FOUND", `Tenant "${config.id}" has no policy`);
      return { status: 200, body: config.policy, etag: etag(config.policy) };
    },

    replacePolicy: async ({ params, body, ifMatch, principal }) => {
      const policy = check(body);
      const saved = await save(params.tenant!, principal.actor, ifMatch, () => policy);
      return { status: 200, body: saved, etag: etag(saved) };
    },

    deletePolicy: async ({ params, principal }) => {
      await save(params.tenant!, principal.actor, undefined, () => undefined);
      return { status: 204 };
    },

    explainPolicy: async ({ params, body }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const input = body as { subject: SubjectInput; entry: { kind: EntryKind; name: string } };
      const subject = await subjectOf(config.id, input.subject);
      const decided = explain(
        config.policy,
        await catalogOf(config.id, subject.server),
        subject,
        input.entry.kind,
        input.entry.name,
      );
      return { status: 200, body: { ...decided, subject } };
    },

    viewPolicy: async ({ params, body }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const subject = await subjectOf(config.id, (body as { subject: SubjectInput }).subject);
      const view = subjectView(config.policy, await catalogOf(config.id, subject.server), subject);
      return { status: 200, body: { subject, ...view } };
    },

    dryRunPolicy: async ({ params, body }) => {
      const { config } = await readTenant(deps, params.tenant!);
      const input = body as { policy: unknown; subjects: SubjectInput[] };
      const proposed = check(input.policy);
      const subjects = [];
      for (const given of input.subjects) {
        const subject = await subjectOf(config.id, given);
        const catalog = await catalogOf(config.id, subject.server);
        subjects.push({ subject, changes: changes(config.policy, proposed, catalog, subject) });
      }
      return { status: 200, body: { subjects } };
    },
  };
}
