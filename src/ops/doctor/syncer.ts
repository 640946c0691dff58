// Doctor check of the syncer's permissions (spec 5.3): its service account must create pods in the host namespace, as
// the host's authorizer answers a SubjectAccessReview for that account (access.ts).
import { deniedVerbs, type AccessQuestion } from "./access.js";
import { finding } from "./coverage.js";
import { configOf, syncerServiceAccount } from "./facts.js";
import type { Check, HostSnapshot } from "./types.js";

const VERBS = ["create", "delete", "get", "list"] as const;

type Facts = Pick<HostSnapshot, "cluster" | "namespace" | "values" | "liveValues" | "statefulSet">;

function wanted(s: Facts): Omit<AccessQuestion, "verb"> | undefined {
  if (!s.statefulSet) return undefined;
  const values = configOf(s);
  if (values && !values.sync.toHost.pods.enabled) return undefined;
  return { serviceAccount: syncerServiceAccount(s), group: "", resource: "pods", namespace: s.namespace };
}

/** The questions this check asks the host (gather.ts sends them). */
export function syncerAccessQuestions(s: Facts): AccessQuestion[] {
  const q = wanted(s);
  return q ? VERBS.map((verb) => ({ ...q, verb })) : [];
}

export const syncerRbac: Check = (s) => {
  const q = wanted(s);
  if (!q || s.unreadable?.access) return [];
  const missing = deniedVerbs(s.access, q, VERBS);
  if (missing.length === 0) return [];
  const sa = q.serviceAccount;
  const message =
    `system:serviceaccount:${sa.namespace}:${sa.name} may not ${missing.join(", ")} pods in ` +
    `${s.namespace}: pod sync cannot work`;
  const how =
    `grant the missing bindings: kubectl -n ${s.namespace} create role vc-syncer-pods ` +
    `--verb=create,delete,get,list,watch,update,patch --resource=pods && ` +
    `kubectl -n ${s.namespace} create rolebinding vc-syncer-pods --role=vc-syncer-pods ` +
    `--serviceaccount=${sa.namespace}:${sa.name}`;
  return [
    finding(
      "connection",
      { check: "syncer-rbac", severity: "error", object: `ServiceAccount ${sa.namespace}/${sa.name}`, message },
      how,
    ),
  ];
};
