// The hand-over of a cluster's metrics from its own proxy of before (a Deployment in its host namespace) to the host's
// shared proxy, through the plan: until the shared proxy says it answers for the cluster, the old proxy stays as it is
// live (only told to leave the APIService's caBundle alone) and its Service keeps pointing at it; then the Service
// turns to the shared proxy and the old objects are pruned after it, in one run.
import { objectKey, type KubeObject } from "../kube/object.js";
import { stripServerFields } from "../plan/normalize.js";
import { names } from "../render/meta.js";
import type { Target } from "../sinks/types.js";
import type { FleetCluster } from "./cluster.js";

/** The objects of a cluster's own proxy of before, by kind and name (they share the Service's name). */
function legacyNames(cluster: string, hostNamespace: string): Map<string, string> {
  const own = names.metricsProxy(cluster);
  const clusterWide = names.metricsProxyClusterRole(cluster, hostNamespace);
  return new Map([
    ["apps/v1/Deployment", own],
    ["v1/ServiceAccount", own],
    ["v1/Service", own],
    ["rbac.authorization.k8s.io/v1/Role", own],
    ["rbac.authorization.k8s.io/v1/RoleBinding", own],
    ["rbac.authorization.k8s.io/v1/ClusterRole", clusterWide],
    ["rbac.authorization.k8s.io/v1/ClusterRoleBinding", clusterWide],
  ]);
}

/** The live Deployment of a cluster's own proxy of before, when there is one. */
function legacyDeployment(c: FleetCluster): KubeObject | undefined {
  const name = names.metricsProxy(c.name);
  return c.live.find((o) => o.kind === "Deployment" && o.apiVersion === "apps/v1" && o.metadata.name === name);
}

/** True when the cluster's desired objects turn its Service to the shared proxy (its metrics integration is on). */
function wantsShared(c: FleetCluster): boolean {
  const name = names.metricsProxy(c.name);
  return c.desired.some(
    (o) =>
      o.kind === "Service" &&
      o.metadata.name === name &&
      (o.spec as { type?: string } | undefined)?.type === "ExternalName",
  );
}

/**
 * The clusters of a chunk with each one whose own proxy still runs held back until the shared proxy answers for it
 * (Target.metricsProxyReady: its status, `<host namespace>/<cluster>`). A target that cannot tell (dir:) holds none
 * back; a status that cannot be read holds all of them back.
 */
export async function holdMetricsHandover(target: Target, clusters: FleetCluster[]): Promise<FleetCluster[]> {
  const pending = clusters.filter((c) => !c.removed && wantsShared(c) && legacyDeployment(c));
  if (pending.length === 0 || !target.metricsProxyReady) return clusters;
  let ready: ReadonlySet<string>;
  try {
    ready = await target.metricsProxyReady();
  } catch {
    ready = new Set();
  }
  const held = new Set(
    pending.filter((c) => !ready.has(`${legacyDeployment(c)!.metadata.namespace}/${c.name}`)).map((c) => c.name),
  );
  return clusters.map((c) => (held.has(c.name) ? heldBack(c) : c));
}

/**
 * A cluster whose own proxy stays: its objects of before are desired as they are live (unchanged, kept, recorded),
 * in place of the Service to the shared proxy, and its Deployment runs with `--apiservice ""` so that the shared proxy
 * can put its CA in the APIService's caBundle beside the old one.
 */
function heldBack(c: FleetCluster): FleetCluster {
  const hostNamespace = legacyDeployment(c)!.metadata.namespace ?? "";
  const byKind = legacyNames(c.name, hostNamespace);
  const isLegacy = (o: KubeObject) =>
    byKind.get(`${o.apiVersion}/${o.kind}`) === o.metadata.name &&
    (o.kind.startsWith("Cluster") || o.metadata.namespace === hostNamespace);
  const kept = c.live.filter(isLegacy).map((o) => (o.kind === "Deployment" ? quiet(o) : stripServerFields(o)));
  const keptKeys = new Set(kept.map(objectKey));
  return { ...c, desired: [...c.desired.filter((o) => !keptKeys.has(objectKey(o))), ...kept] };
}

/** The old proxy's Deployment as live, its proxy container told to leave the APIService alone (`--apiservice ""`). */
function quiet(deployment: KubeObject): KubeObject {
  const copy = structuredClone(stripServerFields(deployment)) as KubeObject & {
    spec?: { template?: { spec?: { containers?: Array<{ name?: string; args?: string[] }> } } };
  };
  for (const container of copy.spec?.template?.spec?.containers ?? []) {
    const args = container.args ?? [];
    const i = args.indexOf("--apiservice");
    if (i >= 0 && args[i + 1] === "") continue;
    if (args.includes("--apiservice=")) continue;
    if (!args.includes("--cluster")) continue;
    container.args =
      i >= 0 ? [...args.slice(0, i), ...args.slice(i + 2), "--apiservice", ""] : [...args, "--apiservice", ""];
  }
  return copy;
}
