// The index of this virtual cluster's pods, keyed by host name and by virtual (namespace, name), fed by a host watch.
import { ANNOTATIONS, LABELS } from "../translate/keys.js";
import { virtualLabels } from "./translate.js";

/** What the proxy knows of one synced pod. */
export interface VirtualPod {
  hostName: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  nodeName?: string;
  creationTimestamp?: string;
}

/** The minimal host pod shape the index reads. */
export interface HostPod {
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
  };
  spec?: { nodeName?: string };
}

/**
 * The virtual pod a host pod stands for, or undefined when it does not belong to `cluster`: it must carry
 * the ownership label with the cluster's name and both virtual name and namespace annotations. Names are
 * never parsed: hashing makes them irreversible.
 */
export function virtualPodOf(pod: HostPod, cluster: string): VirtualPod | undefined {
  const meta = pod.metadata;
  if (meta?.labels?.[LABELS.managedBy] !== cluster) return undefined;
  const name = meta.annotations?.[ANNOTATIONS.objectName];
  const namespace = meta.annotations?.[ANNOTATIONS.objectNamespace];
  if (!name || !namespace) return undefined;
  const vp: VirtualPod = { hostName: meta.name, namespace, name, labels: virtualLabels(meta.labels) };
  if (pod.spec?.nodeName) vp.nodeName = pod.spec.nodeName;
  if (meta.creationTimestamp) vp.creationTimestamp = String(meta.creationTimestamp);
  return vp;
}

const vkey = (namespace: string, name: string) => `${namespace}\u0000${name}`;

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export class PodIndex {
  private readonly byHost = new Map<string, VirtualPod>();
  /** Virtual key to the host names claiming it; the smallest host name wins, so a duplicate is deterministic. */
  private readonly byVirtual = new Map<string, string[]>();
  private readonly nodes = new Map<string, number>();
  private sortedCache: VirtualPod[] | undefined;

  constructor(readonly cluster: string) {}

  /** Replaces the whole content (after a LIST). */
  replace(pods: readonly HostPod[]): void {
    this.byHost.clear();
    this.byVirtual.clear();
    this.nodes.clear();
    this.sortedCache = undefined;
    for (const pod of pods) this.apply("ADDED", pod);
  }

  /** Applies one watch event. A pod that stops belonging to the cluster is removed. */
  apply(type: WatchEventType, pod: HostPod): void {
    const hostName = pod.metadata.name;
    this.remove(hostName);
    if (type === "DELETED") return;
    const vp = virtualPodOf(pod, this.cluster);
    if (!vp) return;
    this.byHost.set(hostName, vp);
    const key = vkey(vp.namespace, vp.name);
    const claims = this.byVirtual.get(key) ?? [];
    claims.push(hostName);
    claims.sort();
    this.byVirtual.set(key, claims);
    if (vp.nodeName) this.nodes.set(vp.nodeName, (this.nodes.get(vp.nodeName) ?? 0) + 1);
    this.sortedCache = undefined;
  }

  private remove(hostName: string): void {
    const old = this.byHost.get(hostName);
    if (!old) return;
    this.byHost.delete(hostName);
    const key = vkey(old.namespace, old.name);
    const claims = (this.byVirtual.get(key) ?? []).filter((h) => h !== hostName);
    if (claims.length > 0) this.byVirtual.set(key, claims);
    else this.byVirtual.delete(key);
    if (old.nodeName) {
      const n = (this.nodes.get(old.nodeName) ?? 1) - 1;
      if (n > 0) this.nodes.set(old.nodeName, n);
      else this.nodes.delete(old.nodeName);
    }
    this.sortedCache = undefined;
  }

  /** The pod with this virtual namespace and name. */
  get(namespace: string, name: string): VirtualPod | undefined {
    const claims = this.byVirtual.get(vkey(namespace, name));
    return claims ? this.byHost.get(claims[0]!) : undefined;
  }

  /** The pod whose host object has this name, when it is the one its virtual name resolves to. */
  byHostName(hostName: string): VirtualPod | undefined {
    const vp = this.byHost.get(hostName);
    if (!vp) return undefined;
    return this.byVirtual.get(vkey(vp.namespace, vp.name))![0] === hostName ? vp : undefined;
  }

  /** Every pod (one per virtual name), sorted by namespace then name. */
  sorted(): readonly VirtualPod[] {
    if (!this.sortedCache) {
      const list: VirtualPod[] = [];
      for (const claims of this.byVirtual.values()) list.push(this.byHost.get(claims[0]!)!);
      list.sort((a, b) => (a.namespace === b.namespace ? cmp(a.name, b.name) : cmp(a.namespace, b.namespace)));
      this.sortedCache = list;
    }
    return this.sortedCache;
  }

  /** Names of the host nodes this cluster's pods run on. */
  nodeNames(): ReadonlySet<string> {
    return new Set(this.nodes.keys());
  }

  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }

  get size(): number {
    return this.byVirtual.size;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
