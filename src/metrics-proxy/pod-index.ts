// The index of the host pods vc's clusters sync, by host namespace and cluster, fed by one host LIST + WATCH.
import { ANNOTATIONS, LABELS } from "../translate/keys.js";
import type { WatchEventType } from "./list-watch.js";
import type { ClusterScope } from "./scope.js";
import { virtualLabels } from "./translate.js";

/** What the proxy knows of one synced pod: its virtual identity, from the host object's metadata. */
export interface VirtualPod {
  hostName: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  creationTimestamp?: string;
}

/** The host pod as the index reads it: metadata only (what a PartialObjectMetadata LIST or WATCH carries). */
export interface HostPod {
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
  };
}

/**
 * The virtual pod a host pod stands for, or undefined when it does not belong to `cluster`: it must carry the
 * ownership label with the cluster's name and both virtual name and namespace annotations. Names are never parsed:
 * hashing makes them irreversible. (Which host namespace counts as the cluster's is the caller's to check.)
 */
export function virtualPodOf(pod: HostPod, cluster: string): VirtualPod | undefined {
  const meta = pod.metadata;
  if (meta?.labels?.[LABELS.managedBy] !== cluster) return undefined;
  const name = meta.annotations?.[ANNOTATIONS.objectName];
  const namespace = meta.annotations?.[ANNOTATIONS.objectNamespace];
  if (typeof name !== "string" || typeof namespace !== "string" || !name || !namespace) return undefined;
  const vp: VirtualPod = { hostName: meta.name, namespace, name, labels: virtualLabels(meta.labels) };
  if (meta.creationTimestamp) vp.creationTimestamp = String(meta.creationTimestamp);
  return vp;
}

const vkey = (namespace: string, name: string) => `${namespace}\u0000${name}`;

/** How much the index holds at most: tenants create pods, so what they create is bounded in objects and bytes. */
export interface IndexBounds {
  /** Pods in the whole index. */
  maxPods: number;
  /** Pods of one host namespace (what one tenant's syncer can create). */
  maxPodsPerNamespace: number;
  /** Bytes of one pod's virtual labels (keys and values); a pod with more is not indexed. */
  maxLabelBytes: number;
}

export const DEFAULT_INDEX_BOUNDS: IndexBounds = {
  maxPods: 250_000,
  maxPodsPerNamespace: 10_000,
  maxLabelBytes: 16 * 1024,
};

/** The pods of one cluster, as a request reads them. */
export interface ClusterPods {
  /** The pod with this virtual namespace and name. */
  get(namespace: string, name: string): VirtualPod | undefined;
  /** Every pod (one per virtual name), sorted by namespace then name. */
  sorted(): readonly VirtualPod[];
  readonly size: number;
}

const NO_PODS: ClusterPods = { get: () => undefined, sorted: () => [], size: 0 };

/** One cluster's pods: by host name, and by virtual (namespace, name); the smallest host name wins a duplicate. */
class PodsOfCluster implements ClusterPods {
  readonly byHost = new Map<string, VirtualPod>();
  private readonly byVirtual = new Map<string, string[]>();
  private sortedCache: VirtualPod[] | undefined;

  add(vp: VirtualPod): void {
    this.byHost.set(vp.hostName, vp);
    const key = vkey(vp.namespace, vp.name);
    const claims = this.byVirtual.get(key);
    if (!claims) this.byVirtual.set(key, [vp.hostName]);
    else {
      claims.push(vp.hostName);
      claims.sort();
    }
    this.sortedCache = undefined;
  }

  remove(hostName: string): void {
    const old = this.byHost.get(hostName);
    if (!old) return;
    this.byHost.delete(hostName);
    const key = vkey(old.namespace, old.name);
    const claims = (this.byVirtual.get(key) ?? []).filter((h) => h !== hostName);
    if (claims.length > 0) this.byVirtual.set(key, claims);
    else this.byVirtual.delete(key);
    this.sortedCache = undefined;
  }

  get(namespace: string, name: string): VirtualPod | undefined {
    const claims = this.byVirtual.get(vkey(namespace, name));
    return claims ? this.byHost.get(claims[0]!) : undefined;
  }

  sorted(): readonly VirtualPod[] {
    if (!this.sortedCache) {
      const list: VirtualPod[] = [];
      for (const claims of this.byVirtual.values()) list.push(this.byHost.get(claims[0]!)!);
      list.sort((a, b) => (a.namespace === b.namespace ? cmp(a.name, b.name) : cmp(a.namespace, b.namespace)));
      this.sortedCache = list;
    }
    return this.sortedCache;
  }

  get size(): number {
    return this.byVirtual.size;
  }
}

/** The pods of one host namespace, grouped by the cluster their label names; and what the bounds kept out. */
class NamespacePods {
  readonly clusters = new Map<string, PodsOfCluster>();
  /** Host name to the cluster whose group holds it. */
  readonly owners = new Map<string, string>();
  /** Pods refused by a bound since the last LIST (counted per event, so an estimate). */
  refused = 0;
}

/**
 * Every host pod vc's clusters sync that the bounds admit, grouped by host namespace and by the cluster its
 * `vc.orch.io/managed-by` label names. A request for a cluster reads only the group of that label in that cluster's
 * own host namespace: a pod another tenant labels with a foreign cluster's name stays in its own namespace's groups.
 */
export class PodIndex {
  private namespaces = new Map<string, NamespacePods>();
  private total = 0;

  constructor(private readonly bounds: IndexBounds = DEFAULT_INDEX_BOUNDS) {}

  /** Builds the content anew (from a LIST, page by page): the current content answers until `commit`. */
  rebuild(): { add(pod: HostPod): void; commit(): void } {
    const next = new PodIndex(this.bounds);
    return {
      add: (pod) => next.apply("ADDED", pod),
      commit: () => {
        this.namespaces = next.namespaces;
        this.total = next.total;
      },
    };
  }

  /** Replaces the whole content. */
  replace(pods: readonly HostPod[]): void {
    const next = this.rebuild();
    for (const pod of pods) next.add(pod);
    next.commit();
  }

  /** Applies one watch event. A pod that stops carrying its virtual identity is removed. */
  apply(type: WatchEventType, pod: HostPod): void {
    const hostNamespace = pod.metadata?.namespace;
    const cluster = pod.metadata?.labels?.[LABELS.managedBy];
    if (!hostNamespace || typeof pod.metadata.name !== "string") return;
    let ns = this.namespaces.get(hostNamespace);
    this.remove(ns, pod.metadata.name);
    if (type === "DELETED" || !cluster) return;
    const vp = virtualPodOf(pod, cluster);
    if (!vp) return;
    if (!ns) this.namespaces.set(hostNamespace, (ns = new NamespacePods()));
    if (
      this.total >= this.bounds.maxPods ||
      ns.owners.size >= this.bounds.maxPodsPerNamespace ||
      labelBytes(vp.labels) > this.bounds.maxLabelBytes
    ) {
      ns.refused++;
      return;
    }
    let group = ns.clusters.get(cluster);
    if (!group) ns.clusters.set(cluster, (group = new PodsOfCluster()));
    group.add(vp);
    ns.owners.set(vp.hostName, cluster);
    this.total++;
  }

  private remove(ns: NamespacePods | undefined, hostName: string): void {
    const cluster = ns?.owners.get(hostName);
    if (!ns || cluster === undefined) return;
    ns.owners.delete(hostName);
    const group = ns.clusters.get(cluster)!;
    group.remove(hostName);
    if (group.byHost.size === 0) ns.clusters.delete(cluster);
    this.total--;
  }

  /** The pods of a cluster: those in its host namespace that carry its name. */
  view(scope: Pick<ClusterScope, "name" | "hostNamespace">): ClusterPods {
    return this.namespaces.get(scope.hostNamespace)?.clusters.get(scope.name) ?? NO_PODS;
  }

  /** Pods the bounds kept out of a host namespace since the last LIST (0 when none). */
  refusedIn(hostNamespace: string): number {
    return this.namespaces.get(hostNamespace)?.refused ?? 0;
  }

  /** Host namespaces some of whose pods the bounds kept out, with how many (an estimate: counted per event). */
  overBound(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [name, ns] of this.namespaces) if (ns.refused > 0) out.set(name, ns.refused);
    return out;
  }

  /** Pods in the index. */
  get size(): number {
    return this.total;
  }
}

/** Bytes of a label map's keys and values. */
function labelBytes(labels: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(labels)) n += k.length + v.length;
  return n;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
