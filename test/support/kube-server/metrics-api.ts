// The read-only metrics API (PodMetrics, NodeMetrics) fed by the test, served under metrics.orch.io and metrics.k8s.io.
import type { KubeObject } from "../../../src/kube/object.js";
import { labelMatcher, matchesFields, parseFieldSelector, SelectorError } from "../../../src/kube/selector.js";
import type { Served } from "./catalog.js";
import { ApiError, badRequest } from "./status.js";
import type { Store } from "./store.js";

export interface ContainerUsage {
  name: string;
  usage: { cpu: string; memory: string };
}

interface PodRecord {
  namespace: string;
  name: string;
  containers: ContainerUsage[];
  timestamp: string;
  window: string;
  created: string;
}

interface NodeRecord {
  name: string;
  usage: { cpu: string; memory: string };
  timestamp: string;
  window: string;
  created: string;
}

function stamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

export class MetricsApi {
  available = true;
  private readonly pods = new Map<string, PodRecord>();
  private readonly nodes = new Map<string, NodeRecord>();

  constructor(private readonly store: Store) {}

  setPod(
    namespace: string,
    name: string,
    containers: ContainerUsage[],
    opts: { timestamp?: string; window?: string } = {},
  ): void {
    this.pods.set(`${namespace}/${name}`, {
      namespace,
      name,
      containers: structuredClone(containers),
      timestamp: opts.timestamp ?? stamp(),
      window: opts.window ?? "30s",
      created: stamp(),
    });
  }

  setNode(
    name: string,
    usage: { cpu: string; memory: string },
    opts: { timestamp?: string; window?: string } = {},
  ): void {
    this.nodes.set(name, {
      name,
      usage: { ...usage },
      timestamp: opts.timestamp ?? stamp(),
      window: opts.window ?? "30s",
      created: stamp(),
    });
  }

  removePod(namespace: string, name: string): boolean {
    return this.pods.delete(`${namespace}/${name}`);
  }

  removeNode(name: string): boolean {
    return this.nodes.delete(name);
  }

  private labelsOf(kindKey: string, ns: string, name: string): Record<string, string> | undefined {
    return this.store.get(kindKey, ns, name)?.obj.metadata.labels;
  }

  private podObject(apiVersion: string, r: PodRecord): KubeObject {
    const labels = this.labelsOf("v1/Pod", r.namespace, r.name);
    return {
      kind: "PodMetrics",
      apiVersion,
      metadata: {
        name: r.name,
        namespace: r.namespace,
        creationTimestamp: r.created,
        ...(labels ? { labels: { ...labels } } : {}),
      },
      timestamp: r.timestamp,
      window: r.window,
      containers: structuredClone(r.containers),
    };
  }

  private nodeObject(apiVersion: string, r: NodeRecord): KubeObject {
    const labels = this.labelsOf("v1/Node", "", r.name);
    return {
      kind: "NodeMetrics",
      apiVersion,
      metadata: { name: r.name, creationTimestamp: r.created, ...(labels ? { labels: { ...labels } } : {}) },
      timestamp: r.timestamp,
      window: r.window,
      usage: { ...r.usage },
    };
  }

  /** Answers a get or list; throws 503 while unavailable, 404 for unknown objects, 400 for bad selectors. */
  serve(
    served: Served,
    verb: string,
    namespace: string | undefined,
    name: string | undefined,
    query: URLSearchParams,
  ): unknown {
    if (!this.available)
      throw new ApiError(503, "the server is currently unable to handle the request", "ServiceUnavailable");
    if (verb !== "get" && verb !== "list")
      throw new ApiError(405, `the server does not allow this method on the requested resource`, "MethodNotAllowed");
    const apiVersion = served.apiVersion;
    const isPod = served.kind === "PodMetrics";
    if (verb === "get") {
      const rec = isPod ? this.pods.get(`${namespace}/${name}`) : this.nodes.get(name!);
      if (!rec)
        throw new ApiError(
          404,
          `${isPod ? "podmetrics" : "nodemetrics"}.metrics.k8s.io "${name}" not found`,
          "NotFound",
          { name, group: served.group, kind: served.plural },
        );
      return isPod ? this.podObject(apiVersion, rec as PodRecord) : this.nodeObject(apiVersion, rec as NodeRecord);
    }
    let match: ReturnType<typeof labelMatcher>;
    let fields: ReturnType<typeof parseFieldSelector>;
    try {
      match = labelMatcher(query.get("labelSelector"));
      fields = parseFieldSelector(query.get("fieldSelector"));
    } catch (err) {
      if (err instanceof SelectorError) throw badRequest(`unable to parse requirement: ${err.message}`);
      throw err;
    }
    const items = isPod
      ? [...this.pods.values()]
          .filter((r) => namespace === undefined || r.namespace === namespace)
          .map((r) => this.podObject(apiVersion, r))
      : [...this.nodes.values()].map((r) => this.nodeObject(apiVersion, r));
    const selected = items
      .filter(
        (o) =>
          match(o.metadata.labels) &&
          matchesFields(fields, { "metadata.name": o.metadata.name, "metadata.namespace": o.metadata.namespace ?? "" }),
      )
      .sort((a, b) =>
        `${a.metadata.namespace ?? ""}/${a.metadata.name}`.localeCompare(
          `${b.metadata.namespace ?? ""}/${b.metadata.name}`,
        ),
      );
    return { kind: `${served.kind}List`, apiVersion, metadata: {}, items: selected };
  }
}
