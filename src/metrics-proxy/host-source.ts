// The host data the proxy answers from, read through the TTL cache: a cluster's pod metrics (its host namespace, or
// one pod), node metrics (all, or one node), nodes, and which nodes a cluster's pods run on.
import { LABELS } from "../translate/keys.js";
import type { TtlCache } from "./cache.js";
import type { HostClient } from "./host-client.js";
import { errorFromFailure, errorFromHost, type HostAccess } from "./host-errors.js";
import { asRecord, at, stringAt, type JsonRecord } from "./json.js";
import { virtualPodOf, type HostPod } from "./pod-index.js";
import type { ClusterScope } from "./scope.js";
import type { HostMetrics } from "./translate.js";

/** A host Node as far as the proxy reads it (everything else of the object is dropped as it is read). */
export interface HostNode {
  metadata: { name: string; labels?: Record<string, string>; creationTimestamp?: string };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: unknown[];
  };
}

export interface HostSourceOptions {
  /** API group of the host metrics API (metrics.orch.io or metrics.k8s.io). */
  hostApiGroup: string;
  /** Most pods read when a cluster's nodes are asked for (its host namespace's bound). */
  maxPodsPerNamespace: number;
}

/** Bytes of one answer of a LIST; tenants write what some of them hold. */
const MAX_LIST_BYTES = 64 * 1024 * 1024;
/** Bytes of one answer of a single object. */
const MAX_OBJECT_BYTES = 4 * 1024 * 1024;

/** A missing object (404) is an answer too: cached like a found one, so asking again costs no host request. */
const MISSING = null;

export class HostSource {
  constructor(
    private readonly client: HostClient,
    private readonly cache: TtlCache<unknown>,
    private readonly opts: HostSourceOptions,
  ) {}

  private get group(): string {
    return this.opts.hostApiGroup;
  }

  private async read(path: string, access: HostAccess, metricsApi: boolean, maxBytes: number): Promise<JsonRecord> {
    const res = await this.client.get(path, access.resource, { maxBytes }).catch((err) => {
      throw errorFromFailure(err, access);
    });
    if (res.status !== 200) throw errorFromHost(res, access, metricsApi);
    const body = asRecord(res.body);
    if (!body) throw errorFromHost({ ...res, status: 502 }, access, metricsApi);
    return body;
  }

  private async list<T>(path: string, access: HostAccess, metricsApi: boolean): Promise<T[]> {
    const items = (await this.read(path, access, metricsApi, MAX_LIST_BYTES)).items;
    if (!Array.isArray(items)) throw errorFromHost({ status: 502, body: undefined, text: "" }, access, metricsApi);
    return items as T[];
  }

  /**
   * One object named `name`, or MISSING when the host answers that it has none of that name (a 404 whose Status
   * names it: a 404 of the API itself, not registered, is an error).
   */
  private async one<T>(
    path: string,
    name: string,
    access: HostAccess,
    metricsApi: boolean,
  ): Promise<T | typeof MISSING> {
    const res = await this.client.get(path, access.resource, { maxBytes: MAX_OBJECT_BYTES }).catch((err) => {
      throw errorFromFailure(err, access);
    });
    if (res.status === 404 && stringAt(res.body, "details", "name") === name) return MISSING;
    if (res.status !== 200) throw errorFromHost(res, access, metricsApi);
    if (!asRecord(res.body)) throw errorFromHost({ ...res, status: 502 }, access, metricsApi);
    return res.body as T;
  }

  private podsPath(scope: ClusterScope): string {
    return `/apis/${this.group}/v1beta1/namespaces/${encodeURIComponent(scope.hostNamespace)}/pods`;
  }

  private podsKey(scope: ClusterScope): string {
    return `pods:${scope.hostNamespace}/${scope.name}`;
  }

  /**
   * Metrics of a cluster's pods in its host namespace, by host pod name: one LIST selecting its ownership label. The
   * proxy still keeps only pods its index maps (the host's answer is never trusted for isolation).
   */
  podMetrics(scope: ClusterScope): Promise<Map<string, HostMetrics>> | Map<string, HostMetrics> {
    return this.cache.get(this.podsKey(scope), async () => {
      const selector = encodeURIComponent(`${LABELS.managedBy}=${scope.name}`);
      const items = await this.list<HostMetrics>(
        `${this.podsPath(scope)}?labelSelector=${selector}`,
        { verb: "list", resource: "pods", group: this.group, namespace: scope.hostNamespace },
        true,
      );
      return new Map(items.map((m) => [m.metadata.name, m]));
    }) as Promise<Map<string, HostMetrics>> | Map<string, HostMetrics>;
  }

  /**
   * Metrics of one host pod of a cluster: from the cluster's list while it is cached, else one GET of that pod (the
   * host metrics API's per-pod path), cached on its own. Undefined when the host has none for it.
   */
  async podMetricsOf(scope: ClusterScope, hostName: string): Promise<HostMetrics | undefined> {
    const listed = this.cache.peek(this.podsKey(scope)) as Map<string, HostMetrics> | undefined;
    if (listed) return listed.get(hostName);
    const found = await this.cache.get(`pod:${scope.hostNamespace}/${hostName}`, () =>
      this.one<HostMetrics>(
        `${this.podsPath(scope)}/${encodeURIComponent(hostName)}`,
        hostName,
        { verb: "get", resource: "pods", group: this.group, namespace: scope.hostNamespace },
        true,
      ),
    );
    return (found as HostMetrics | null) ?? undefined;
  }

  /** Metrics of every host node, sorted by name. */
  nodeMetrics(): Promise<HostMetrics[]> | HostMetrics[] {
    return this.cache.get("nodes", async () => {
      const items = await this.list<HostMetrics>(
        `/apis/${this.group}/v1beta1/nodes`,
        { verb: "list", resource: "nodes", group: this.group },
        true,
      );
      return items.sort((a, b) => cmp(a.metadata.name, b.metadata.name));
    }) as Promise<HostMetrics[]> | HostMetrics[];
  }

  /** Metrics of one host node: from the list while cached, else one GET of that node. */
  async nodeMetricsOf(name: string): Promise<HostMetrics | undefined> {
    const listed = this.cache.peek("nodes") as HostMetrics[] | undefined;
    if (listed) return listed.find((m) => m.metadata.name === name);
    const found = await this.cache.get(`node:${name}`, () =>
      this.one<HostMetrics>(
        `/apis/${this.group}/v1beta1/nodes/${encodeURIComponent(name)}`,
        name,
        { verb: "get", resource: "nodes", group: this.group },
        true,
      ),
    );
    return (found as HostMetrics | null) ?? undefined;
  }

  /** Every host Node, reduced to what `kubectl top node` reads (name, labels, capacity), sorted by name. */
  nodes(): Promise<HostNode[]> | HostNode[] {
    return this.cache.get("core-nodes", async () => {
      const items = await this.list<unknown>("/api/v1/nodes", { verb: "list", resource: "nodes", group: "" }, false);
      return items.map(reducedNode).sort((a, b) => cmp(a.metadata.name, b.metadata.name));
    }) as Promise<HostNode[]> | HostNode[];
  }

  /** One host Node, reduced; undefined when there is none of that name. */
  async node(name: string): Promise<HostNode | undefined> {
    const listed = this.cache.peek("core-nodes") as HostNode[] | undefined;
    if (listed) return listed.find((n) => n.metadata.name === name);
    const found = await this.cache.get(`core-node:${name}`, async () => {
      const obj = await this.one<unknown>(
        `/api/v1/nodes/${encodeURIComponent(name)}`,
        name,
        { verb: "get", resource: "nodes", group: "" },
        false,
      );
      return obj === MISSING ? MISSING : reducedNode(obj);
    });
    return (found as HostNode | null) ?? undefined;
  }

  /**
   * The nodes a cluster's pods run on: one LIST of its pods in its host namespace (its ownership label), read up to the
   * namespace's bound. The pod index holds metadata only, so this is read when node metrics are asked for.
   */
  nodesOf(scope: ClusterScope): Promise<ReadonlySet<string>> | ReadonlySet<string> {
    return this.cache.get(`pod-nodes:${scope.hostNamespace}/${scope.name}`, async () => {
      const selector = encodeURIComponent(`${LABELS.managedBy}=${scope.name}`);
      const base = `/api/v1/namespaces/${encodeURIComponent(scope.hostNamespace)}/pods?labelSelector=${selector}`;
      const access: HostAccess = { verb: "list", resource: "pods", group: "", namespace: scope.hostNamespace };
      const nodes = new Set<string>();
      let cont = "";
      let read = 0;
      do {
        const page = await this.read(
          `${base}&limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
          access,
          false,
          MAX_LIST_BYTES,
        );
        const items = Array.isArray(page.items) ? page.items : [];
        for (const pod of items) {
          const node = stringAt(pod, "spec", "nodeName");
          // Only pods that stand for a virtual pod count, as in the index.
          if (node && virtualPodOf(pod as HostPod, scope.name)) nodes.add(node);
        }
        read += items.length;
        cont = stringAt(page, "metadata", "continue") ?? "";
      } while (cont && read < this.opts.maxPodsPerNamespace);
      return nodes;
    }) as Promise<ReadonlySet<string>> | ReadonlySet<string>;
  }
}

/** A Node as far as the proxy keeps it. */
function reducedNode(obj: unknown): HostNode {
  const labels = asRecord(at(obj, "metadata", "labels")) as Record<string, string> | undefined;
  const created = stringAt(obj, "metadata", "creationTimestamp");
  const status: NonNullable<HostNode["status"]> = {};
  const capacity = asRecord(at(obj, "status", "capacity"));
  const allocatable = asRecord(at(obj, "status", "allocatable"));
  const conditions = at(obj, "status", "conditions");
  if (capacity) status.capacity = capacity as Record<string, string>;
  if (allocatable) status.allocatable = allocatable as Record<string, string>;
  if (Array.isArray(conditions)) status.conditions = conditions;
  return {
    metadata: {
      name: stringAt(obj, "metadata", "name") ?? "",
      ...(labels ? { labels } : {}),
      ...(created ? { creationTimestamp: created } : {}),
    },
    status,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
