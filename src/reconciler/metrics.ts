// The reconciler's Prometheus metrics, in a registry of its own (prom-client).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface ReconcilerMetrics {
  registry: Registry;
  reconcileDuration: Histogram<"result">;
  objectsApplied: Counter<"outcome">;
  errors: Counter<"cluster" | "reason">;
  lastSuccess: Gauge<"cluster">;
  gitFetchDuration: Histogram<"result">;
  leader: Gauge;
  clustersByResult: Gauge<"result">;
  clusterHealth: Gauge<"cluster" | "health">;
}

/** Creates the metrics; `defaults` adds the process metrics (memory, CPU, event loop lag). */
export function createMetrics(opts: { defaults?: boolean } = {}): ReconcilerMetrics {
  const registry = new Registry();
  if (opts.defaults ?? true) collectDefaultMetrics({ register: registry, prefix: "vc_reconciler_" });
  return {
    registry,
    reconcileDuration: new Histogram({
      name: "vc_reconcile_duration_seconds",
      help: "Time to reconcile one cluster (load, render, plan, apply, status), by result.",
      labelNames: ["result"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    objectsApplied: new Counter({
      name: "vc_objects_applied_total",
      help: "Host objects written by the reconciler, by outcome (created, updated, deleted, failed).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    errors: new Counter({
      name: "vc_reconcile_errors_total",
      help: "Reconcile errors by cluster and reason (invalid, failed, blocked, git, status).",
      labelNames: ["cluster", "reason"],
      registers: [registry],
    }),
    lastSuccess: new Gauge({
      name: "vc_cluster_last_success_timestamp_seconds",
      help: "Unix time of the last successful reconciliation of each cluster.",
      labelNames: ["cluster"],
      registers: [registry],
    }),
    gitFetchDuration: new Histogram({
      name: "vc_git_fetch_duration_seconds",
      help: "Time to fetch (or clone) the repository and check out the commit, by result.",
      labelNames: ["result"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    leader: new Gauge({
      name: "vc_reconciler_leader",
      help: "1 while this replica holds the leader lease.",
      registers: [registry],
    }),
    clustersByResult: new Gauge({
      name: "vc_clusters",
      help: "Clusters of this replica by the result of their last reconciliation.",
      labelNames: ["result"],
      registers: [registry],
    }),
    clusterHealth: new Gauge({
      name: "vc_cluster_health",
      help:
        "Health of each cluster as its last reconciliation saw it: 1 for its health (Healthy, Progressing, " +
        "Degraded, Unknown), 0 for the others.",
      labelNames: ["cluster", "health"],
      registers: [registry],
    }),
  };
}
