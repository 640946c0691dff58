// Shared metadata of rendered host objects: ownership labels, source annotations, control-plane names.
import type { KubeObject, ObjectMeta } from "../kube/object.js";
import { ANNOTATIONS, LABELS, hostName, safeConcatName } from "../translate/index.js";
import { virtualNamespaceOf } from "../translate/mesh/spec.js";

/** What every rendered object of one cluster shares. */
export interface RenderContext {
  cluster: string;
  hostNamespace: string;
  revision: string;
}

/** The ownership labels every rendered object carries (managed-by and inventory = the cluster). */
function ownershipLabels(cluster: string): Record<string, string> {
  return { [LABELS.managedBy]: cluster, [LABELS.inventory]: cluster };
}

/** The source annotations every rendered object carries. */
function sourceAnnotations(sourceFile: string, revision: string): Record<string, string> {
  return { [ANNOTATIONS.sourceFile]: sourceFile, [ANNOTATIONS.revision]: revision };
}

/** Metadata of a control-plane object: in the host namespace unless cluster-scoped. */
export function controlPlaneMeta(
  ctx: RenderContext,
  sourceFile: string,
  name: string,
  opts: { clusterScoped?: boolean; labels?: Record<string, string> } = {},
): ObjectMeta {
  const meta: ObjectMeta = { name };
  if (!opts.clusterScoped) meta.namespace = ctx.hostNamespace;
  meta.labels = { ...opts.labels, ...ownershipLabels(ctx.cluster) };
  meta.annotations = sourceAnnotations(sourceFile, ctx.revision);
  return meta;
}

const stringMap = (v: unknown): Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, string>) : {};

/**
 * Metadata of the host object of a manifest from a cluster folder (mesh/, certificates/): the translated name in the
 * host namespace, the user's labels and annotations plus ownership, the virtual name and namespace, and the source.
 */
export function manifestMeta(obj: KubeObject, file: string, ctx: RenderContext): ObjectMeta {
  const virtualNamespace = virtualNamespaceOf(obj);
  return {
    name: hostName(obj.metadata.name, virtualNamespace, ctx.cluster),
    namespace: ctx.hostNamespace,
    labels: { ...stringMap(obj.metadata.labels), ...ownershipLabels(ctx.cluster) },
    annotations: {
      ...stringMap(obj.metadata.annotations),
      [ANNOTATIONS.objectName]: obj.metadata.name,
      [ANNOTATIONS.objectNamespace]: virtualNamespace,
      ...sourceAnnotations(file, ctx.revision),
    },
  };
}

/** Names of the control-plane objects of a cluster (documented in docs/rendering.md). */
export const names = {
  statefulSet: (cluster: string) => cluster,
  service: (cluster: string) => cluster,
  headlessService: (cluster: string) => safeConcatName(cluster, "headless"),
  serviceAccount: (cluster: string) => safeConcatName("vc", cluster),
  /** Host Secret in which the control plane keeps the virtual cluster's kubeconfig (key `config`). */
  kubeconfigSecret: (cluster: string) => safeConcatName("vc", cluster),
  role: (cluster: string) => safeConcatName("vc", cluster),
  quota: (cluster: string) => safeConcatName("vc", cluster),
  limitRange: (cluster: string) => safeConcatName("vc", cluster),
  /** Cluster-scoped: carries the host namespace too, so two hosts' clusters of one name never share it. */
  nodesClusterRole: (cluster: string, hostNamespace: string) => safeConcatName("vc", cluster, "x", hostNamespace),
  configSecret: (cluster: string) => safeConcatName("vc-config", cluster),
  databaseSecret: (cluster: string) => safeConcatName("vc-database", cluster),
  initManifests: (cluster: string) => safeConcatName("vc-init", cluster),
  /**
   * The cluster's Service that its virtual API server reaches the shared metrics proxy through (an ExternalName);
   * before the shared proxy, also its own proxy's Deployment, ServiceAccount, Role and RoleBinding (the hand-over
   * prunes them).
   */
  metricsProxy: (cluster: string) => safeConcatName("vc-metrics-proxy", cluster),
  /** The Role and RoleBinding that let the shared metrics proxy read the cluster's kubeconfig Secret. */
  metricsProxyAccess: (cluster: string) => safeConcatName("vc-metrics-proxy-access", cluster),
  metricsProxyTls: (cluster: string) => safeConcatName("vc-metrics-proxy-tls", cluster),
  /** Before the shared proxy: the ClusterRole and binding of the cluster's own proxy (the hand-over prunes them). */
  metricsProxyClusterRole: (cluster: string, hostNamespace: string) =>
    safeConcatName("vc-metrics-proxy", cluster, "x", hostNamespace),
} as const;

/** Where the control-plane objects come from: the values files (joined when several), else the folder. */
export function valuesSource(valuesFiles: readonly string[], dir: string): string {
  return valuesFiles.length > 0 ? valuesFiles.join(",") : dir;
}
