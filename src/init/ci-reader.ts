// A read-only identity for CI (vc diff, drift detection), derived from the reconciler's ClusterRole: same kinds, no
// writes.
import { dump, loadAll } from "js-yaml";

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

interface RbacObject {
  kind?: string;
  metadata?: { name?: string };
  rules?: PolicyRule[];
}

/** Verbs vc diff needs: it lists the inventory by label and reads objects back; it never writes. */
const READ_VERBS = ["get", "list", "watch"] as const;

const CI_READER = "vc-ci-reader";

/**
 * The manifests of the CI identity: ServiceAccount, ClusterRole and ClusterRoleBinding. The ClusterRole holds the
 * rules of the reconciler's ClusterRole `vc-reconciler` (the kinds vc applies and prunes) with read verbs only.
 */
export function ciReaderManifests(reconcilerRbac: string, namespace: string): string {
  const docs = loadAll(reconcilerRbac) as RbacObject[];
  const role = docs.find((d) => d?.kind === "ClusterRole" && d.metadata?.name === "vc-reconciler");
  if (!role?.rules) throw new Error("the reconciler's rbac.yaml has no ClusterRole vc-reconciler with rules");
  const rules = role.rules.map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: [...READ_VERBS] }));
  const labels = { "app.kubernetes.io/name": CI_READER };
  const objects = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: CI_READER, namespace, labels } },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: CI_READER, labels }, rules },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: CI_READER, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: CI_READER },
      subjects: [{ kind: "ServiceAccount", name: CI_READER, namespace }],
    },
  ];
  const header = [
    `# ${CI_READER}: the identity of the VC_KUBECONFIG secret of the plan and drift workflows. It reads the kinds vc`,
    "# applies (get, list, watch) and writes nothing. It can read Secrets, since vc diff compares them; vc masks their",
    "# values in every plan, but treat the kubeconfig as a secret. A kubeconfig for it, with a token valid 30 days:",
    `#   kubectl -n ${namespace} create token ${CI_READER} --duration 720h`,
    "# (put the token in a kubeconfig whose server is the host's API address; rotate it before it expires).",
  ];
  return `${header.join("\n")}\n${objects.map((o) => dump(o, { noRefs: true, lineWidth: -1 })).join("---\n")}`;
}
