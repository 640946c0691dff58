// The host data the proxy answers from, each read through the TTL cache: pod metrics, node metrics and nodes.
import { LABELS } from "../translate/keys.js";
import type { TtlCache } from "./cache.js";
import type { HostClient } from "./host-client.js";
import { errorFromFailure, errorFromHost, type HostAccess } from "./host-errors.js";
import { at } from "./json.js";
import type { HostMetrics } from "./translate.js";

/** A host Node as far as the proxy reads it. */
export interface HostNode {
  metadata: { name: string; labels?: Record<string, string>; creationTimestamp?: string };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: unknown[];
    nodeInfo?: unknown;
  };
}

export interface HostSourceOptions {
  cluster: string;
  hostNamespace: string;
  /** API group of the host metrics API (metrics.orch.io or metrics.k8s.io). */
  hostApiGroup: string;
}

export class HostSource {
  constructor(
    private readonly client: HostClient,
    private readonly cache: TtlCache<unknown>,
    private readonly opts: HostSourceOptions,
  ) {}

  private async list<T>(path: string, access: HostAccess, metricsApi: boolean): Promise<T[]> {
    const res = await this.client.get(path, access.resource).catch((err) => {
      throw errorFromFailure(err, access);
    });
    if (res.status !== 200) throw errorFromHost(res, access, metricsApi);
    const items = at(res.body, "items");
    if (!Array.isArray(items)) throw errorFromHost({ ...res, status: 502 }, access, metricsApi);
    return items as T[];
  }

  /**
   * Metrics of this cluster's pods in the host namespace, by host pod name. The host filters by the
   * ownership label; the proxy still keeps only pods its index maps (the host's answer is never trusted for isolation).
   */
  podMetrics(): Promise<Map<string, HostMetrics>> | Map<string, HostMetrics> {
    return this.cache.get("pods", async () => {
      const { hostApiGroup, hostNamespace, cluster } = this.opts;
      const selector = encodeURIComponent(`${LABELS.managedBy}=${cluster}`);
      const path = `/apis/${hostApiGroup}/v1beta1/namespaces/${encodeURIComponent(hostNamespace)}/pods?labelSelector=${selector}`;
      const items = await this.list<HostMetrics>(
        path,
        { verb: "list", resource: "pods", group: hostApiGroup, namespace: hostNamespace },
        true,
      );
      return new Map(items.map((m) => [m.metadata.name, m]));
    }) as Promise<Map<string, HostMetrics>> | Map<string, HostMetrics>;
  }

  /** Metrics of every host node, sorted by name. */
  nodeMetrics(): Promise<HostMetrics[]> | HostMetrics[] {
    return this.cache.get("nodes", async () => {
      const group = this.opts.hostApiGroup;
      const items = await this.list<HostMetrics>(
        `/apis/${group}/v1beta1/nodes`,
        { verb: "list", resource: "nodes", group },
        true,
      );
      return items.sort((a, b) => cmp(a.metadata.name, b.metadata.name));
    }) as Promise<HostMetrics[]> | HostMetrics[];
  }

  /** Every host Node object, sorted by name (for `kubectl top node`, which reads capacity from them). */
  nodes(): Promise<HostNode[]> | HostNode[] {
    return this.cache.get("core-nodes", async () => {
      const items = await this.list<HostNode>("/api/v1/nodes", { verb: "list", resource: "nodes", group: "" }, false);
      return items.sort((a, b) => cmp(a.metadata.name, b.metadata.name));
    }) as Promise<HostNode[]> | HostNode[];
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
