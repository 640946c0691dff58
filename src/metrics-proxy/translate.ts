// Translation between host and virtual objects: which host labels are virtual, and metrics objects back to virtual
// names.
import { PREFIX } from "../translate/keys.js";

/**
 * True for a label key that vc or its syncer put on a host object, which never belongs to the virtual
 * object: every key whose prefix is `vc.orch.io` or one of its subdomains (`*.vc.orch.io/...`).
 */
export function isHostOnlyKey(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const prefix = key.slice(0, slash);
  return prefix === PREFIX || prefix.endsWith(`.${PREFIX}`);
}

/** The virtual labels of a host object: its labels without the host-only keys. Sorted by key. */
export function virtualLabels(hostLabels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!hostLabels) return out;
  for (const key of Object.keys(hostLabels).sort()) {
    if (!isHostOnlyKey(key)) out[key] = hostLabels[key]!;
  }
  return out;
}

/** The upstream shape of a host metrics object (PodMetrics or NodeMetrics) as far as the proxy reads it. */
export interface HostMetrics {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; creationTimestamp?: string };
  timestamp?: string;
  window?: string;
  containers?: Array<{ name: string; usage: Record<string, string> }>;
  usage?: Record<string, string>;
}

export interface VirtualIdentity {
  name: string;
  namespace: string;
  labels: Record<string, string>;
}

/** A host PodMetrics as the virtual cluster's PodMetrics: only the virtual identity and the usage figures. */
export function toVirtualPodMetrics(
  apiVersion: string,
  pod: VirtualIdentity,
  host: HostMetrics,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: pod.name, namespace: pod.namespace };
  if (host.metadata.creationTimestamp) metadata.creationTimestamp = host.metadata.creationTimestamp;
  if (Object.keys(pod.labels).length > 0) metadata.labels = pod.labels;
  return {
    kind: "PodMetrics",
    apiVersion,
    metadata,
    timestamp: host.timestamp,
    window: host.window,
    containers: (host.containers ?? []).map((c) => ({ name: c.name, usage: { ...c.usage } })),
  };
}

/** A host NodeMetrics as the virtual cluster's NodeMetrics: same node name, host-only labels removed. */
export function toVirtualNodeMetrics(apiVersion: string, host: HostMetrics): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: host.metadata.name };
  if (host.metadata.creationTimestamp) metadata.creationTimestamp = host.metadata.creationTimestamp;
  const labels = virtualLabels(host.metadata.labels);
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  return {
    kind: "NodeMetrics",
    apiVersion,
    metadata,
    timestamp: host.timestamp,
    window: host.window,
    usage: { ...host.usage },
  };
}

/** A list object of the upstream shape. */
export function listOf(kind: string, apiVersion: string, items: unknown[]): Record<string, unknown> {
  return { kind, apiVersion, metadata: {}, items };
}
