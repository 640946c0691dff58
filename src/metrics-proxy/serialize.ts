// Pre-serialised JSON answers: each PodMetrics item is stringified once per host metrics load, lists are joined
// strings.
import type { VirtualPod } from "./pod-index.js";
import { toVirtualPodMetrics, type HostMetrics } from "./translate.js";

/** A JSON body that is already serialised; the server writes it as is. */
export class RawJson {
  constructor(readonly json: string) {}
}

/** A list object of the upstream shape from serialised items. */
export function rawList(kind: string, apiVersion: string, items: readonly string[]): RawJson {
  return new RawJson(
    `{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":{},` +
      `"items":[${items.join(",")}]}`,
  );
}

/**
 * The JSON of a virtual pod's PodMetrics, cached per index entry and host metrics object: both are replaced
 * (never mutated) when the watch or a cache reload changes them, so identity decides freshness.
 */
export class PodMetricsJson {
  private readonly cache = new WeakMap<VirtualPod, { metrics: HostMetrics; json: string }>();
  constructor(private readonly apiVersion: string) {}

  of(pod: VirtualPod, metrics: HostMetrics): string {
    const hit = this.cache.get(pod);
    if (hit && hit.metrics === metrics) return hit.json;
    const json = JSON.stringify(toVirtualPodMetrics(this.apiVersion, pod, metrics));
    this.cache.set(pod, { metrics, json });
    return json;
  }
}
