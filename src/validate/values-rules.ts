// Rules on effective values beyond the schema: mesh and custom-resource conflict, private nodes, metrics servers, backing store.
import type { Severity } from "../model/diagnostic.js";
import { meshResourceOf, type Values } from "../model/values.js";
import { isMapping, type Mapping } from "../repo/merge.js";

export interface RuleFinding {
  /** Key paths to point at, most relevant first; the first one a values file sets is used. */
  paths: string[][];
  severity: Severity;
  code: string;
  message: string;
}

/** Findings of the rules; `raw` is the merged values before defaults (to tell set keys from defaults). */
export function valuesRules(v: Values, raw: Mapping): RuleFinding[] {
  const out: RuleFinding[] = [];
  const mesh = v.integrations.mesh;
  const crs = v.sync.toHost.customResources;
  if (mesh.enabled) {
    for (const key of Object.keys(crs).sort()) {
      if (crs[key]?.enabled && meshResourceOf(key) !== undefined) {
        out.push({
          paths: [["sync", "toHost", "customResources", key]],
          severity: "error",
          code: "mesh-conflict",
          message: `the mesh integration is enabled but the mesh custom resource is also set in \`sync.toHost.customResources\`: "${key}"; remove the entry and use \`integrations.mesh\``,
        });
      }
    }
    if (v.privateNodes.enabled) {
      out.push({
        paths: [["integrations", "mesh", "enabled"], ["privateNodes", "enabled"]],
        severity: "error",
        code: "mesh-private-nodes",
        message: "the mesh integration is not supported in private nodes mode (privateNodes.enabled is true): it needs workloads running as pods in the host cluster; turn one of them off",
      });
    }
  }
  const metrics = v.integrations.metricsServer;
  if (metrics.enabled && v.deploy.metricsServer.enabled) {
    out.push({
      paths: [["deploy", "metricsServer", "enabled"], ["integrations", "metricsServer", "enabled"]],
      severity: "error",
      code: "metrics-conflict",
      message: "the metrics integration (integrations.metricsServer.enabled) and the built-in metrics server (deploy.metricsServer.enabled) cannot both be on: deploying both is not supported; turn off deploy.metricsServer",
    });
  }
  if (metrics.enabled && v.privateNodes.enabled && !v.deploy.metricsServer.enabled) {
    out.push({
      paths: [["integrations", "metricsServer", "enabled"]],
      severity: "warning",
      code: "metrics-private-nodes",
      message: "in private nodes mode the built-in metrics server (deploy.metricsServer.enabled) is preferred to the metrics integration",
    });
  }
  if (metrics.enabled && !metrics.pods && !metrics.nodes) {
    out.push({
      paths: [["integrations", "metricsServer", "enabled"]],
      severity: "warning",
      code: "metrics-empty",
      message: "the metrics integration is enabled but proxies neither pods nor nodes (integrations.metricsServer.pods and .nodes are false)",
    });
  }
  const external = v.controlPlane.backingStore.database.external;
  if (external.enabled) {
    const hasEndpoint = external.endpoint !== "";
    if (!hasEndpoint && !external.endpointSecretRef) {
      out.push({
        paths: [["controlPlane", "backingStore", "database", "external", "enabled"]],
        severity: "error",
        code: "database-endpoint",
        message: "the external database is enabled without a connection: set controlPlane.backingStore.database.external.endpoint or .endpointSecretRef",
      });
    } else if (hasEndpoint && external.endpointSecretRef) {
      out.push({
        paths: [["controlPlane", "backingStore", "database", "external", "endpointSecretRef"]],
        severity: "error",
        code: "database-endpoint",
        message: "set either external.endpoint or external.endpointSecretRef, not both",
      });
    }
    if (explicitlyTrue(raw, ["controlPlane", "backingStore", "kvstore", "embedded", "enabled"])) {
      out.push({
        paths: [["controlPlane", "backingStore", "kvstore", "embedded", "enabled"]],
        severity: "error",
        code: "backing-store",
        message: "both the embedded kvstore and an external database are enabled: choose one backing store",
      });
    }
  }
  const quota = v.policies.resourceQuota;
  if (quota.enabled && Object.keys(quota.quota).length === 0) {
    out.push({
      paths: [["policies", "resourceQuota", "enabled"]],
      severity: "warning",
      code: "quota-empty",
      message: "the resource quota is enabled but policies.resourceQuota.quota is empty: it limits nothing",
    });
  }
  return out;
}

function explicitlyTrue(raw: Mapping, path: string[]): boolean {
  let node: unknown = raw;
  for (const seg of path) {
    if (!isMapping(node)) return false;
    node = node[seg];
  }
  return node === true;
}
