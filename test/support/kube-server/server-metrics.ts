// The server's own /metrics in Prometheus text: apiserver_request_total and apiserver_request_duration_seconds, as
// upstream names them.
import { Counter, Histogram, Registry } from "prom-client";
import type { LoggedRequest } from "./request-log.js";

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly total = new Counter({
    name: "apiserver_request_total",
    help: "Counter of apiserver requests broken out for each verb, group, resource, scope and HTTP response code.",
    labelNames: ["verb", "group", "resource", "subresource", "scope", "code"],
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: "apiserver_request_duration_seconds",
    help: "Response latency distribution in seconds for each verb, group, resource, subresource and scope.",
    labelNames: ["verb", "group", "resource", "subresource", "scope"],
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    registers: [this.registry],
  });

  /** Records a finished request (verbs upper-cased as upstream: GET, LIST, WATCH, POST, PUT, PATCH, DELETE). */
  observe(r: LoggedRequest, group: string, seconds: number): void {
    const verb = r.verb === "create" ? "POST" : r.verb === "update" ? "PUT" : r.verb.toUpperCase();
    const scope = r.name ? "resource" : r.namespace ? "namespace" : "cluster";
    const labels = { verb, group, resource: r.resource ?? "", subresource: r.subresource ?? "", scope };
    this.total.inc({ ...labels, code: String(r.status) });
    this.duration.observe(labels, seconds);
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
