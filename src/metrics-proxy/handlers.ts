// The resource endpoints of one cluster: pod and node metrics (list, get) and the read-only core nodes and pods kubectl
// top reads, all translated to virtual.
import type { HostSource, HostNode } from "./host-source.js";
import type { ListWatch } from "./list-watch.js";
import type { ClusterPods, PodIndex, VirtualPod } from "./pod-index.js";
import type { ListFilter } from "./query.js";
import type { ClusterScope } from "./scope.js";
import { ApiError, notFound, unavailable } from "./status.js";
import { rawList, RawJson, type PodMetricsJson } from "./serialize.js";
import { listOf, toVirtualNodeMetrics, virtualLabels } from "./translate.js";

export interface HandlerContext {
  /** API group the proxy serves (metrics.orch.io or metrics.k8s.io). */
  apiGroup: string;
  index: PodIndex;
  informer: Pick<ListWatch, "isSynced" | "lastError" | "waitSynced">;
  source: HostSource;
  /** How long a request waits for the first pod LIST before answering 503. */
  syncWaitMs: number;
  /** Serialised PodMetrics of `apiGroup`, reused until the pod or its host metrics change. */
  podJson: PodMetricsJson;
}

/** Waits for the pod index, then the cluster's pods; a host refusal of the pod LIST is the 403 the client sees. */
async function podsOf(ctx: HandlerContext, scope: ClusterScope): Promise<ClusterPods> {
  if (ctx.informer.isSynced) return ctx.index.view(scope);
  const err = ctx.informer.lastError;
  if (err && err.code === 403) throw err;
  if (await ctx.informer.waitSynced(ctx.syncWaitMs)) return ctx.index.view(scope);
  const last = ctx.informer.lastError;
  if (last && last.code === 403) throw last;
  throw unavailable(`the pod index is not synced with the host yet${last ? ` (${last.message})` : ""}`);
}

const apiVersionOf = (ctx: HandlerContext) => `${ctx.apiGroup}/v1beta1`;

/** PodMetricsList of the cluster's pods, in one virtual namespace or all; sorted by namespace then name. */
export async function listPodMetrics(
  ctx: HandlerContext,
  scope: ClusterScope,
  namespace: string | undefined,
  filter: ListFilter,
) {
  const pods = await podsOf(ctx, scope);
  const metrics = await ctx.source.podMetrics(scope);
  const items: string[] = [];
  for (const pod of pods.sorted()) {
    if (namespace !== undefined && pod.namespace !== namespace) continue;
    if (!filter.all && !filter.matches(pod.namespace, pod.name, pod.labels)) continue;
    const m = metrics.get(pod.hostName);
    if (m) items.push(ctx.podJson.of(pod, m));
  }
  return rawList("PodMetricsList", apiVersionOf(ctx), items);
}

/**
 * PodMetrics of one virtual pod (one host read of that pod); 404 when it is not the cluster's or has no metrics yet.
 */
export async function getPodMetrics(ctx: HandlerContext, scope: ClusterScope, namespace: string, name: string) {
  const pod = (await podsOf(ctx, scope)).get(namespace, name);
  const missing = () => notFound(ctx.apiGroup, "podmetrics", name);
  if (!pod) throw missing();
  const m = await ctx.source.podMetricsOf(scope, pod.hostName);
  if (!m) throw missing();
  return new RawJson(ctx.podJson.of(pod, m));
}

/** A virtual pod as a minimal core Pod (identity and labels): what `kubectl top pod` reads when metrics are empty. */
function toVirtualPod(pod: VirtualPod): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: pod.name, namespace: pod.namespace };
  if (pod.creationTimestamp) metadata.creationTimestamp = pod.creationTimestamp;
  if (Object.keys(pod.labels).length > 0) metadata.labels = pod.labels;
  return { kind: "Pod", apiVersion: "v1", metadata, spec: {}, status: {} };
}

/** PodList of the cluster's pods (core API, read-only, from the index). */
export async function listPods(
  ctx: HandlerContext,
  scope: ClusterScope,
  namespace: string | undefined,
  filter: ListFilter,
) {
  const items: unknown[] = [];
  for (const pod of (await podsOf(ctx, scope)).sorted()) {
    if (namespace !== undefined && pod.namespace !== namespace) continue;
    if (!filter.all && !filter.matches(pod.namespace, pod.name, pod.labels)) continue;
    items.push(toVirtualPod(pod));
  }
  return listOf("PodList", "v1", items);
}

/** One pod of the cluster (core API). */
export async function getPod(ctx: HandlerContext, scope: ClusterScope, namespace: string, name: string) {
  const pod = (await podsOf(ctx, scope)).get(namespace, name);
  if (!pod) throw new ApiError("NotFound", `pods "${name}" not found`, { name, kind: "pods" });
  return toVirtualPod(pod);
}

/** The nodes the cluster sees: undefined for every host node (`all`), else those its pods run on. */
async function visibleNodes(ctx: HandlerContext, scope: ClusterScope): Promise<ReadonlySet<string> | undefined> {
  if (scope.nodes === "all") return undefined;
  await podsOf(ctx, scope);
  return ctx.source.nodesOf(scope);
}

/** NodeMetricsList of the synced nodes (all with nodes `all`), sorted by name. */
export async function listNodeMetrics(ctx: HandlerContext, scope: ClusterScope, filter: ListFilter) {
  const visible = await visibleNodes(ctx, scope);
  const apiVersion = apiVersionOf(ctx);
  const items: unknown[] = [];
  for (const m of await ctx.source.nodeMetrics()) {
    if (visible && !visible.has(m.metadata.name)) continue;
    if (!filter.all && !filter.matches("", m.metadata.name, virtualLabels(m.metadata.labels))) continue;
    items.push(toVirtualNodeMetrics(apiVersion, m));
  }
  return listOf("NodeMetricsList", apiVersion, items);
}

/** NodeMetrics of one node; 404 when the node is not the cluster's to see or unknown. */
export async function getNodeMetrics(ctx: HandlerContext, scope: ClusterScope, name: string) {
  const missing = () => notFound(ctx.apiGroup, "nodemetrics", name);
  const visible = await visibleNodes(ctx, scope);
  if (visible && !visible.has(name)) throw missing();
  const m = await ctx.source.nodeMetricsOf(name);
  if (!m) throw missing();
  return toVirtualNodeMetrics(apiVersionOf(ctx), m);
}

/** A host Node as the virtual cluster sees it: name, virtual labels, capacity and conditions; nothing host-internal. */
function toVirtualNode(n: HostNode): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: n.metadata.name };
  if (n.metadata.creationTimestamp) metadata.creationTimestamp = n.metadata.creationTimestamp;
  const labels = virtualLabels(n.metadata.labels);
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  const status: Record<string, unknown> = {};
  if (n.status?.capacity) status.capacity = n.status.capacity;
  if (n.status?.allocatable) status.allocatable = n.status.allocatable;
  if (n.status?.conditions) status.conditions = n.status.conditions;
  return { kind: "Node", apiVersion: "v1", metadata, spec: {}, status };
}

/** NodeList of the cluster's nodes (core API, read-only). */
export async function listNodes(ctx: HandlerContext, scope: ClusterScope, filter: ListFilter) {
  const visible = await visibleNodes(ctx, scope);
  const items: unknown[] = [];
  for (const n of await ctx.source.nodes()) {
    if (visible && !visible.has(n.metadata.name)) continue;
    if (!filter.all && !filter.matches("", n.metadata.name, virtualLabels(n.metadata.labels))) continue;
    items.push(toVirtualNode(n));
  }
  return listOf("NodeList", "v1", items);
}

/** One Node of the cluster (core API). */
export async function getNode(ctx: HandlerContext, scope: ClusterScope, name: string) {
  const missing = () => new ApiError("NotFound", `nodes "${name}" not found`, { name, kind: "nodes" });
  const visible = await visibleNodes(ctx, scope);
  if (visible && !visible.has(name)) throw missing();
  const n = await ctx.source.node(name);
  if (!n) throw missing();
  return toVirtualNode(n);
}
