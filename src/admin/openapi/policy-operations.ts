// The admin operations of a tenant's policy (docs/policy.md): read, replace and remove it, explain
// one decision, list what a subject sees, and dry-run a proposed policy. Part of the one table.
import { json, none, type Operation } from "./operation-kit.js";
import { ref } from "./schema-kit.js";

const path = "/tenants/{tenant}/policy";

export const policyOperations: readonly Operation[] = [
  {
    id: "getPolicy",
    method: "get",
    path,
    tag: "policy",
    summary: "The tenant's policy",
    description: "404 when the tenant has none (everyone may list and use everything).",
    access: "tenant",
    responses: { 200: json("The policy.", ref("Policy"), ["ETag"]) },
  },
  {
    id: "replacePolicy",
    method: "put",
    path,
    tag: "policy",
    summary: "Set the tenant's policy",
    description:
      "Applies on every replica at once, to lists and uses of every session and request. A bad rule gets 422 with a JSON Pointer to it. With `If-Match`, a stale tag gets 412.",
    access: "tenant",
    parameters: ["If-Match"],
    body: { schema: ref("Policy") },
    responses: { 200: json("Saved.", ref("Policy"), ["ETag"]) },
  },
  {
    id: "deletePolicy",
    method: "delete",
    path,
    tag: "policy",
    summary: "Remove the tenant's policy",
    description: "Everyone may list and use everything again. Removing no policy is a no-op.",
    access: "tenant",
    responses: { 204: none("Removed.") },
  },
  {
    id: "explainPolicy",
    method: "post",
    path: `${path}/explain`,
    tag: "policy",
    summary: "Which rule decides for a subject and an entry",
    description:
      "The same decision the MCP endpoint makes for a request of that subject on that entry: the effect, and the rule that decides (null: the default).",
    access: "tenant",
    body: { schema: ref("PolicyExplainInput") },
    responses: { 200: json("The decision.", ref("PolicyExplanation")) },
  },
  {
    id: "viewPolicy",
    method: "post",
    path: `${path}/view`,
    tag: "policy",
    summary: "What a subject sees",
    description:
      "Every entry of the tenant's catalog (every capability profile's entries, as this replica serves them) with the decision for the subject; `allow` ones are what its lists show.",
    access: "tenant",
    body: { schema: ref("PolicyViewInput") },
    responses: { 200: json("The subject's view.", ref("PolicySubjectView")) },
  },
  {
    id: "dryRunPolicy",
    method: "post",
    path: `${path}/dry-run`,
    tag: "policy",
    summary: "What a proposed policy would change for named subjects",
    description:
      "Validates the proposed policy as a replace would (422 pointing at a bad rule) and saves nothing.",
    access: "tenant",
    body: { schema: ref("PolicyDryRunInput") },
    responses: { 200: json("The changes.", ref("PolicyDryRun")) },
  },
];
