// Rules on effective values beyond the schema: mesh (and cert-manager) and custom-resource conflicts, private nodes,
// metrics servers, backing store.
import type { Severity } from "../model/diagnostic.js";
import { hasUrlCredential } from "../model/secrets.js";
import { meshResourceOf, type Values } from "../model/values.js";
import { isMapping, type Mapping } from "../repo/merge.js";
import { databaseTargets } from "./database-hosts.js";

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
          message:
            `the mesh integration is enabled but the mesh custom resource is also set in ` +
            `\`sync.toHost.customResources\`: "${key}"; remove the entry and use \`integrations.mesh\``,
        });
      }
    }
    if (v.privateNodes.enabled) {
      out.push({
        paths: [
          ["integrations", "mesh", "enabled"],
          ["privateNodes", "enabled"],
        ],
        severity: "error",
        code: "mesh-private-nodes",
        message:
          "the mesh integration is not supported in private nodes mode (privateNodes.enabled is true): it needs " +
          "workloads running as pods in the host cluster; turn one of them off",
      });
    }
  }
  if (v.integrations.certManager.enabled) {
    for (const key of Object.keys(crs).sort()) {
      if (crs[key]?.enabled && /^certificates?\.(v1\.)?cert-manager\.io$/i.test(key)) {
        out.push({
          paths: [["sync", "toHost", "customResources", key]],
          severity: "warning",
          code: "certmanager-conflict",
          message:
            `the certificate-manager integration is enabled and already lets the syncer manage ` +
            `certificates.cert-manager.io: the \`sync.toHost.customResources\` entry "${key}" is redundant; remove ` +
            `it and use \`integrations.certManager\``,
        });
      }
    }
  }
  const metrics = v.integrations.metricsServer;
  if (metrics.enabled && v.deploy.metricsServer.enabled) {
    out.push({
      paths: [
        ["deploy", "metricsServer", "enabled"],
        ["integrations", "metricsServer", "enabled"],
      ],
      severity: "error",
      code: "metrics-conflict",
      message:
        "the metrics integration (integrations.metricsServer.enabled) and the built-in metrics server " +
        "(deploy.metricsServer.enabled) cannot both be on: deploying both is not supported; turn off " +
        "deploy.metricsServer",
    });
  }
  if (metrics.enabled && v.privateNodes.enabled && !v.deploy.metricsServer.enabled) {
    out.push({
      paths: [["integrations", "metricsServer", "enabled"]],
      severity: "warning",
      code: "metrics-private-nodes",
      message:
        "in private nodes mode the built-in metrics server (deploy.metricsServer.enabled) is preferred to the " +
        "metrics integration",
    });
  }
  if (metrics.enabled && !metrics.pods && !metrics.nodes) {
    out.push({
      paths: [["integrations", "metricsServer", "enabled"]],
      severity: "warning",
      code: "metrics-empty",
      message:
        "the metrics integration is enabled but proxies neither pods nor nodes (integrations.metricsServer.pods " +
        "and .nodes are false)",
    });
  }
  // The host's one shared metrics proxy (deploy/metrics-proxy) runs with its own image, replicas and cache TTL.
  const ignored = [["image"], ["replicas"], ["cacheTTL"]].filter((k) =>
    isSet(raw, ["integrations", "metricsServer", "proxy", ...k]),
  );
  if (ignored.length > 0) {
    out.push({
      paths: ignored.map((k) => ["integrations", "metricsServer", "proxy", ...k]),
      severity: "warning",
      code: "metrics-proxy-shared",
      message:
        `integrations.metricsServer.proxy.${ignored.map((k) => k.join(".")).join(", .")} no longer apply: ` +
        "one shared metrics proxy serves every cluster of the host, with the image, replicas and cache TTL " +
        "of its Deployment (deploy/metrics-proxy); remove them",
    });
  }
  const external = v.controlPlane.backingStore.database.external;
  out.push(...endpointRules(external.endpoint));
  if (external.enabled) {
    const hasEndpoint = external.endpoint !== "";
    if (!hasEndpoint && !external.endpointSecretRef) {
      out.push({
        paths: [["controlPlane", "backingStore", "database", "external", "enabled"]],
        severity: "error",
        code: "database-endpoint",
        message:
          "the external database is enabled without a connection: set " +
          "controlPlane.backingStore.database.external.endpoint or .endpointSecretRef",
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

const ENDPOINT = ["controlPlane", "backingStore", "database", "external", "endpoint"];
const SECRET_REF_FORM =
  "controlPlane.backingStore.database.external.endpointSecretRef: {name: <Secret in the host namespace>, key: <key " +
  "holding the URL>}";

/**
 * An inline endpoint must be a URL (an error otherwise) and should hold no password (a warning naming the reference
 * form).
 */
function endpointRules(endpoint: string): RuleFinding[] {
  if (endpoint === "") return [];
  if (!isUrl(endpoint)) {
    // The value is not quoted: whatever it is, it may be a credential.
    return [
      {
        paths: [ENDPOINT],
        severity: "error",
        code: "database-endpoint",
        message:
          `the external database endpoint is not a URL: write it as scheme://[user@]host[:port]/database ` +
          `(e.g. postgres://vc@db.example.com:5432/vc), or keep it in a Secret with ${SECRET_REF_FORM}`,
      },
    ];
  }
  if (hasUrlCredential(endpoint) || urlPassword(endpoint) !== "") {
    return [
      {
        paths: [ENDPOINT],
        severity: "warning",
        code: "credential-in-git",
        message:
          `the external database endpoint holds a password, which is then in git: keep it in a Secret of ` +
          `the host namespace and write ${SECRET_REF_FORM} instead of endpoint`,
      },
    ];
  }
  return [];
}

/** `scheme://host...`: a URL with a scheme and a host (libpq's several `host:port` and `?host=` forms included). */
function isUrl(text: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return false;
  try {
    if (new URL(text).hostname !== "") return true;
  } catch {
    // not a WHATWG URL: it may still be a libpq URI with several hosts
  }
  const targets = databaseTargets(text);
  return targets.hosts.length > 0 && targets.refusals.length === 0;
}

/** The password of a URL's user part ("" without one), also where WHATWG cannot parse the URL. */
function urlPassword(text: string): string {
  try {
    return new URL(text).password;
  } catch {
    const user = /^[a-z][a-z0-9+.-]*:\/\/([^/@]*)@/i.exec(text)?.[1] ?? "";
    return user.includes(":") ? user.slice(user.indexOf(":") + 1) : "";
  }
}

/** True when the values as written (before defaults) set the key at `path`. */
function isSet(raw: Mapping, path: string[]): boolean {
  let node: unknown = raw;
  for (const key of path) {
    if (!isMapping(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

function explicitlyTrue(raw: Mapping, path: string[]): boolean {
  let node: unknown = raw;
  for (const seg of path) {
    if (!isMapping(node)) return false;
    node = node[seg];
  }
  return node === true;
}
