// RBAC rules built from the values' sync switches, and the Role/Binding objects that carry them.
import type { KubeObject } from "../kube/object.js";
import { CERT_MANAGER_GROUP, MESH_GROUP } from "../kube/resources.js";
import type { Values } from "../model/values.js";
import { type RenderContext, controlPlaneMeta } from "./meta.js";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const MANAGE_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];
export const READ_VERBS = ["get", "list", "watch"];

const MESH_PLURALS = {
  virtualServices: "virtualservices",
  destinationRules: "destinationrules",
  gateways: "gateways",
} as const;

/** Collects resources per (group, verbs) and emits one rule per pair, groups and resources sorted. */
export class RuleSet {
  private readonly byKey = new Map<string, { group: string; verbs: string[]; resources: Set<string> }>();

  add(group: string, resources: readonly string[], verbs: readonly string[]): this {
    const key = `${group}\u0000${verbs.join(",")}`;
    let entry = this.byKey.get(key);
    if (!entry) this.byKey.set(key, (entry = { group, verbs: [...verbs], resources: new Set() }));
    for (const r of resources) entry.resources.add(r);
    return this;
  }

  rules(): PolicyRule[] {
    return [...this.byKey.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, e]) => ({ apiGroups: [e.group], resources: [...e.resources].sort(), verbs: e.verbs }));
  }
}

/** `<plural>.<group>` as its API group and plural (no dot: the core group). */
function splitResourceKey(key: string): { group: string; plural: string } {
  const dot = key.indexOf(".");
  return dot < 0 ? { group: "", plural: key } : { group: key.slice(dot + 1), plural: key.slice(0, dot) };
}

/** What the syncer may do in the host namespace, from the values' switches. */
export function syncerRules(values: Values): PolicyRule[] {
  const set = new RuleSet();
  const toHost = values.sync.toHost;
  set.add("", ["events"], ["create", "patch"]);
  set.add("coordination.k8s.io", ["leases"], MANAGE_VERBS);
  if (toHost.pods.enabled) set.add("", ["pods", "pods/status", "configmaps", "secrets"], MANAGE_VERBS);
  if (toHost.services.enabled) set.add("", ["services", "endpoints"], MANAGE_VERBS);
  if (toHost.persistentVolumeClaims.enabled) set.add("", ["persistentvolumeclaims"], MANAGE_VERBS);
  for (const [key, cr] of Object.entries(toHost.customResources)) {
    if (!cr.enabled) continue;
    const { group, plural } = splitResourceKey(key);
    set.add(group, [plural], MANAGE_VERBS);
  }
  const mesh = values.integrations.mesh;
  if (mesh.enabled) {
    for (const kind of Object.keys(MESH_PLURALS) as Array<keyof typeof MESH_PLURALS>) {
      if (mesh.sync.toHost[kind].enabled) set.add(MESH_GROUP, [MESH_PLURALS[kind]], MANAGE_VERBS);
    }
  }
  // cert-manager: the syncer manages the cluster's Certificates and reads the Secrets cert-manager issues for them
  // (pod sync already lets it manage Secrets).
  if (values.integrations.certManager.enabled) {
    set.add(CERT_MANAGER_GROUP, ["certificates"], MANAGE_VERBS);
    if (!toHost.pods.enabled) set.add("", ["secrets"], READ_VERBS);
  }
  // The host's metrics API the integration reads (the group the host's metrics server serves), not the virtual one.
  if (values.integrations.metricsServer.enabled)
    set.add(values.integrations.metricsServer.proxy.hostApiGroup, ["pods"], READ_VERBS);
  return set.rules();
}

export interface Binding {
  ctx: RenderContext;
  source: string;
  name: string;
  serviceAccount: string;
  rules: PolicyRule[];
  /** ClusterRole + ClusterRoleBinding instead of Role + RoleBinding. */
  clusterScoped?: boolean;
  labels?: Record<string, string>;
}

/** A Role (or ClusterRole) and the binding that grants it to a service account of the host namespace. */
export function renderRoleAndBinding(b: Binding): KubeObject[] {
  const cs = { clusterScoped: b.clusterScoped === true, labels: b.labels };
  const kind = b.clusterScoped ? "ClusterRole" : "Role";
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind,
      metadata: controlPlaneMeta(b.ctx, b.source, b.name, cs),
      rules: b.rules,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: `${kind}Binding`,
      metadata: controlPlaneMeta(b.ctx, b.source, b.name, cs),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: b.name },
      subjects: [{ kind: "ServiceAccount", name: b.serviceAccount, namespace: b.ctx.hostNamespace }],
    },
  ];
}

export function renderServiceAccount(
  ctx: RenderContext,
  source: string,
  name: string,
  labels?: Record<string, string>,
): KubeObject {
  return { apiVersion: "v1", kind: "ServiceAccount", metadata: controlPlaneMeta(ctx, source, name, { labels }) };
}
