// The resource endpoints: pod and node metrics (list, get) and the read-only core nodes and pods kubectl top reads, all translated to virtual.
import type { HostSource, HostNode } from "./host-source.js";
import type { PodInformer } from "./informer.js";
import type { PodIndex, VirtualPod } from "./pod-index.js";
import type { ListFilter } from "./query.js";
import { ApiError, notFound, unavailable } from "./status.js";
import { rawList, RawJson, type PodMetricsJson } from "./serialize.js";
import { listOf, toVirtualNodeMetrics, virtualLabels } from "./translate.js";

export interface HandlerContext {
  /** API group the proxy serves (metrics.orch.io or metrics.k8s.io). */
  apiGroup: string;
  nodes: "synced" | "all";
  index: PodIndex;
  informer: Pick<PodInformer, "isSynced" | "lastError" | "waitSynced">;
  source: HostSource;
  /** How long a request waits for the first pod LIST before answering 503. */
  syncWaitMs: number;
  /** Serialised PodMetrics of `apiGroup`, reused until the pod or its host metrics change. */
  podJson: PodMetricsJson;
}

/** Waits for the pod index; a host refusal of the pod LIST is the 403 the client sees. */
async function indexReady(ctx: HandlerContext): Promise<void> {
  if (ctx.informer.isSynced) return;
  const err = ctx.informer.lastError;
  if (err && err.code === 403) throw err;
  if (await ctx.informer.waitSynced(ctx.syncWaitMs)) return;
  const last = ctx.informer.lastError;
  if (last && last.code === 403) throw last;
  throw unavailable(`the pod index is not synced with the host yet${last ? ` (${last.message})` : ""}`);
}

const apiVersionOf = (ctx: HandlerContext) => `${ctx.apiGroup}/v1beta1`;

/** PodMetricsList of the cluster's pods, in one virtual namespace or all; sorted by namespace then name. */
export async function listPodMetrics(ctx: HandlerContext, namespace: string | undefined, filter: ListFilter) {
  await indexReady(ctx);
  const metrics = await ctx.source.podMetrics();
  const items: string[] = [];
  for (const pod of ctx.index.sorted()) {
    if (namespace !== undefined && pod.namespace !== namespace) continue;
    if (!filter.all && !filter.matches(pod.namespace, pod.name, pod.labels)) continue;
    const m = metrics.get(pod.hostName);
    if (m) items.push(ctx.podJson.of(pod, m));
  }
  return rawList("PodMetricsList", apiVersionOf(ctx), items);
}

/** PodMetrics of one virtual pod; 404 when the pod is not this cluster's or has no metrics yet. */
export async function getPodMetrics(ctx: HandlerContext, namespace: string, name: string) {
  await indexReady(ctx);
  const pod = ctx.index.get(namespace, name);
  const missing = () => notFound(ctx.apiGroup, "podmetrics", name);
  if (!pod) throw missing();
  const m = (await ctx.source.podMetrics()).get(pod.hostName);
  if (!m) throw missing();
  return new RawJson(ctx.podJson.of(pod, m));
}

/** A virtual pod as a minimal core Pod (identity, labels, node): what `kubectl top pod` reads when metrics are empty. */
function toVirtualPod(pod: VirtualPod): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: pod.name, namespace: pod.namespace };
  if (pod.creationTimestamp) metadata.creationTimestamp = pod.creationTimestamp;
  if (Object.keys(pod.labels).length > 0) metadata.labels = pod.labels;
  return { kind: "Pod", apiVersion: "v1", metadata, spec: pod.nodeName ? { nodeName: pod.nodeName } : {}, status: {} };
}

/** PodList of the cluster's pods (core API, read-only, from the index). */
export async function listPods(ctx: HandlerContext, namespace: string | undefined, filter: ListFilter) {
  await indexReady(ctx);
  const items: unknown[] = [];
  for (const pod of ctx.index.sorted()) {
    if (namespace !== undefined && pod.namespace !== namespace) continue;
    if (!filter.all && !filter.matches(pod.namespace, pod.name, pod.labels)) continue;
    items.push(toVirtualPod(pod));
  }
  return listOf("PodList", "v1", items);
}

/** One pod of the cluster (core API). */
export async function getPod(ctx: HandlerContext, namespace: string, name: string) {
  await indexReady(ctx);
  const pod = ctx.index.get(namespace, name);
  if (!pod) throw new ApiError("NotFound", `pods "${name}" not found`, { name, kind: "pods" });
  return toVirtualPod(pod);
}

/** True when the node is synced into the virtual cluster. */
async function nodeVisible(ctx: HandlerContext, name: string): Promise<boolean> {
  if (ctx.nodes === "all") return true;
  await indexReady(ctx);
  return ctx.index.hasNode(name);
}

function nodeLabels(labels: Record<string, string> | undefined) {
  return virtualLabels(labels);
}

/** NodeMetricsList of the synced nodes (all with --nodes all), sorted by name. */
export async function listNodeMetrics(ctx: HandlerContext, filter: ListFilter) {
  if (ctx.nodes === "synced") await indexReady(ctx);
  const apiVersion = apiVersionOf(ctx);
  const items: unknown[] = [];
  for (const m of await ctx.source.nodeMetrics()) {
    if (ctx.nodes === "synced" && !ctx.index.hasNode(m.metadata.name)) continue;
    if (!filter.all && !filter.matches("", m.metadata.name, nodeLabels(m.metadata.labels))) continue;
    items.push(toVirtualNodeMetrics(apiVersion, m));
  }
  return listOf("NodeMetricsList", apiVersion, items);
}

/** NodeMetrics of one node; 404 when the node is not synced or unknown. */
export async function getNodeMetrics(ctx: HandlerContext, name: string) {
  const missing = () => notFound(ctx.apiGroup, "nodemetrics", name);
  if (!(await nodeVisible(ctx, name))) throw missing();
  const m = (await ctx.source.nodeMetrics()).find((n) => n.metadata.name === name);
  if (!m) throw missing();
  return toVirtualNodeMetrics(apiVersionOf(ctx), m);
}

/** A host Node as the virtual cluster sees it: name, virtual labels, capacity and conditions; nothing host-internal. */
function toVirtualNode(n: HostNode): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: n.metadata.name };
  if (n.metadata.creationTimestamp) metadata.creationTimestamp = n.metadata.creationTimestamp;
  const labels = nodeLabels(n.metadata.labels);
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  const status: Record<string, unknown> = {};
  if (n.status?.capacity) status.capacity = n.status.capacity;
  if (n.status?.allocatable) status.allocatable = n.status.allocatable;
  if (n.status?.conditions) status.conditions = n.status.conditions;
  return { kind: "Node", apiVersion: "v1", metadata, spec: {}, status };
}

/** NodeList of the synced nodes (core API, read-only). */
export async function listNodes(ctx: HandlerContext, filter: ListFilter) {
  if (ctx.nodes === "synced") await indexReady(ctx);
  const items: unknown[] = [];
  for (const n of await ctx.source.nodes()) {
    if (ctx.nodes === "synced" && !ctx.index.hasNode(n.metadata.name)) continue;
    if (!filter.all && !filter.matches("", n.metadata.name, nodeLabels(n.metadata.labels))) continue;
    items.push(toVirtualNode(n));
  }
  return listOf("NodeList", "v1", items);
}

/** One synced Node (core API). */
export async function getNode(ctx: HandlerContext, name: string) {
  const missing = () => new ApiError("NotFound", `nodes "${name}" not found`, { name, kind: "nodes" });
  if (!(await nodeVisible(ctx, name))) throw missing();
  const n = (await ctx.source.nodes()).find((x) => x.metadata.name === name);
  if (!n) throw missing();
  return toVirtualNode(n);
}
