// Changes a Kubernetes API server refuses to make in place (immutable fields), found before anything is applied (pure).
import type { KubeObject } from "../kube/object.js";
import { deepEqual } from "./diff.js";
import { isPlainObject } from "./normalize.js";
import { compareQuantities } from "../kube/quantity.js";

/**
 * StatefulSet spec fields an update may change; the server refuses every other (`updates to statefulset spec for
 * fields other than 'replicas', 'template', 'updateStrategy', … are forbidden`). Kubernetes 1.20 allows only the
 * first three; later versions added the others, which vc leaves to the server to judge.
 */
const STATEFULSET_MUTABLE = new Set([
  "replicas",
  "template",
  "updateStrategy",
  "minReadySeconds",
  "persistentVolumeClaimRetentionPolicy",
  "ordinals",
  "revisionHistoryLimit",
]);

type Rule = (want: KubeObject, have: KubeObject, live: KubeObject) => string[];

const spec = (o: KubeObject): Record<string, unknown> => (isPlainObject(o.spec) ? o.spec : {});

/** Keys of `want`'s and `have`'s maps whose values differ (a key vc stopped rendering counts when it is live). */
function changedKeys(
  want: Record<string, unknown>,
  have: Record<string, unknown>,
  skip: (k: string) => boolean,
): string[] {
  const keys = new Set([...Object.keys(want), ...Object.keys(have)]);
  return [...keys].filter((k) => !skip(k) && !deepEqual(want[k], have[k])).sort();
}

const RULES: Record<string, Rule> = {
  "apps/v1/StatefulSet": (want, have) =>
    changedKeys(spec(want), spec(have), (k) => STATEFULSET_MUTABLE.has(k)).map((k) => `spec.${k}`),
  "apps/v1/Deployment": (want, have) => (differs(spec(want).selector, spec(have).selector) ? ["spec.selector"] : []),
  "v1/Service": (want, have) =>
    ["clusterIP", "clusterIPs"]
      .filter(
        (k) => spec(want)[k] !== undefined && spec(have)[k] !== undefined && !deepEqual(spec(want)[k], spec(have)[k]),
      )
      .map((k) => `spec.${k}`),
  "v1/Secret": immutableData,
  "v1/ConfigMap": immutableData,
  "v1/PersistentVolumeClaim": (want, have) => {
    const out = changedKeys(spec(want), spec(have), (k) => k === "resources").map((k) => `spec.${k}`);
    const size = (o: KubeObject) =>
      String((spec(o).resources as { requests?: { storage?: unknown } } | undefined)?.requests?.storage ?? "");
    if ((compareQuantities(size(want), size(have)) ?? 0) < 0)
      out.push("spec.resources.requests.storage (a claim never shrinks)");
    return out;
  },
  "rbac.authorization.k8s.io/v1/RoleBinding": (want, have) => (differs(want.roleRef, have.roleRef) ? ["roleRef"] : []),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": (want, have) =>
    differs(want.roleRef, have.roleRef) ? ["roleRef"] : [],
};

/** Both set and different. */
function differs(a: unknown, b: unknown): boolean {
  return a !== undefined && b !== undefined && !deepEqual(a, b);
}

/** A Secret or ConfigMap marked `immutable: true` on the host keeps its data and its mark. */
function immutableData(want: KubeObject, have: KubeObject, live: KubeObject): string[] {
  if (live.immutable !== true) return [];
  const out = ["data", "binaryData"].filter((k) => !deepEqual(want[k], have[k]));
  if (want.immutable !== true) out.push("immutable");
  return out.map((k) => (k === "immutable" ? k : `${k} (the object is marked immutable)`));
}

/**
 * The fields of an update the API server would refuse, or an empty list. `want` is the normalised desired object,
 * `have` the live object seen through vc's fields (managedView), `live` the object as read.
 */
export function immutableChanges(want: KubeObject, have: KubeObject, live: KubeObject): string[] {
  const rule = RULES[`${want.apiVersion}/${want.kind}`];
  return rule ? rule(want, have, live) : [];
}
