// The proxy's own Prometheus metrics (prom-client, one registry per proxy): request durations, cache hits, host
// latency.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CacheStats } from "./cache.js";

export class ProxyMetrics {
  readonly registry = new Registry();
  readonly requestDuration: Histogram<"verb" | "group" | "resource">;
  readonly requests: Counter<"verb" | "group" | "resource" | "code">;
  readonly cache: Counter<"cache" | "result">;
  readonly hostDuration: Histogram<"resource" | "code">;
  readonly indexedPods: Gauge;

  constructor(indexSize: () => number, defaults = true) {
    const registers = [this.registry];
    this.requestDuration = new Histogram({
      name: "apiserver_request_duration_seconds",
      help: "Response latency of the metrics proxy by verb, API group and resource.",
      labelNames: ["verb", "group", "resource"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.requests = new Counter({
      name: "apiserver_request_total",
      help: "Requests answered by the metrics proxy by verb, API group, resource and HTTP code.",
      labelNames: ["verb", "group", "resource", "code"],
      registers,
    });
    this.cache = new Counter({
      name: "vc_metrics_proxy_cache_requests_total",
      help:
        "Reads of the host metrics cache by cache (pods, pod, nodes, node, core-nodes, core-node, pod-nodes) and " +
        "result (hit: fresh entry; miss: started a host request; shared: joined one in flight).",
      labelNames: ["cache", "result"],
      registers,
    });
    this.hostDuration = new Histogram({
      name: "vc_metrics_proxy_host_request_duration_seconds",
      help: "Latency of requests from the proxy to the host API server by resource and HTTP code.",
      labelNames: ["resource", "code"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.indexedPods = new Gauge({
      name: "vc_metrics_proxy_indexed_pods",
      help: "Pods of the virtual cluster in the pod index.",
      registers,
      collect() {
        this.set(indexSize());
      },
    });
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }

  cacheStats(): CacheStats {
    return {
      hit: (key) => this.cache.inc({ cache: key, result: "hit" }),
      miss: (key) => this.cache.inc({ cache: key, result: "miss" }),
      shared: (key) => this.cache.inc({ cache: key, result: "shared" }),
    };
  }

  observeHost = (resource: string, code: string, seconds: number): void => {
    this.hostDuration.observe({ resource, code }, seconds);
  };
}
