// Doctor check of the syncer's permissions (spec 5.3): its service account must create pods in the host namespace.
import { finding } from "./coverage.js";
import { configOf, syncerServiceAccount } from "./facts.js";
import { allowed } from "./rbac.js";
import type { Check } from "./types.js";

export const syncerRbac: Check = (s) => {
  if (s.unreadable?.rbac || !s.statefulSet) return [];
  const values = configOf(s);
  if (values && !values.sync.toHost.pods.enabled) return [];
  const sa = syncerServiceAccount(s);
  const missing = ["create", "delete", "get", "list"].filter((verb) => !allowed(s.rbac, sa, "", "pods", verb, s.namespace));
  if (missing.length === 0) return [];
  const message = `system:serviceaccount:${sa.namespace}:${sa.name} may not ${missing.join(", ")} pods in ${s.namespace}: pod sync cannot work`;
  const how =
    `grant the missing bindings: kubectl -n ${s.namespace} create role vc-syncer-pods --verb=create,delete,get,list,watch,update,patch --resource=pods && ` +
    `kubectl -n ${s.namespace} create rolebinding vc-syncer-pods --role=vc-syncer-pods --serviceaccount=${sa.namespace}:${sa.name}`;
  return [finding("connection", { check: "syncer-rbac", severity: "error", object: `ServiceAccount ${sa.namespace}/${sa.name}`, message }, how)];
};
