// The fleet policy's bounds on one cluster (pure): hosts its mesh objects and certificates claim, gateway selectors and
// credentials, quota, database host.
import type { KubeObject } from "../kube/object.js";
import type { Values } from "../model/values.js";
import { compareQuantities } from "../kube/quantity.js";
import { hostAllowed } from "../claims/hosts.js";
import type { FolderBudget } from "../repo/budget.js";
import type { PathSegment } from "../repo/positions.js";
import { classifyHost, meshNamespaces } from "../translate/names.js";
import { hostFields } from "./mesh-hosts.js";
import { databaseTargets } from "./database-hosts.js";

/** policy.yaml as schemas/policy.schema.json describes it; a key left out bounds nothing. */
export interface Policy {
  hosts?: { virtualServices?: string[]; gateways?: string[] };
  gateways?: { selectors?: Array<Record<string, string>>; credentialNames?: string[] };
  quota?: { max?: Record<string, string>; required?: boolean };
  database?: { hosts?: string[] };
  /** Overrides of the folder budget's defaults (src/repo/budget.ts). */
  folderBudget?: Partial<FolderBudget>;
  /** Host namespaces a cluster may use (validate/host-namespace.ts). */
  hostNamespaces?: { pattern?: string };
}

export const POLICY_FILE = "policy.yaml";

/** A manifest of the cluster (mesh/, certificates/): its file, document index and object. */
export interface PolicyManifestInput {
  file: string;
  index: number;
  object: KubeObject;
}

/** A policy violation: in the values (`values` path) or in a manifest document (`file`, `doc`, `path`). */
export type PolicyFinding =
  | { where: "values"; paths: string[][]; message: string /** point at the key rather than its value */; at?: "key" }
  | { where: "manifest"; file: string; doc: number; path: PathSegment[]; message: string };

/** Whether `name` matches the glob `pattern` (`*` stands for any characters, nothing else is special). */
export function nameAllowed(name: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return re.test(name);
}

const list = (patterns: readonly string[]): string => (patterns.length === 0 ? "(none)" : patterns.join(", "));

/** Every bound of `policy` that the cluster's effective values, mesh manifests and certificates cross. */
export function policyFindings(
  policy: Policy,
  values: Values,
  mesh: readonly PolicyManifestInput[],
  certificates: readonly PolicyManifestInput[] = [],
): PolicyFinding[] {
  const out: PolicyFinding[] = [];
  quotaFindings(policy, values, out);
  databaseFindings(policy, values, out);
  const namespaces = meshNamespaces(mesh.map((m) => m.object));
  if (values.integrations.mesh.enabled) for (const m of mesh) meshFindings(policy, m, namespaces, out);
  if (values.integrations.certManager.enabled) for (const c of certificates) certificateFindings(policy, c, out);
  return out;
}

function quotaFindings(policy: Policy, values: Values, out: PolicyFinding[]): void {
  const max = policy.quota?.max;
  if (!max || Object.keys(max).length === 0) return;
  const rq = values.policies.resourceQuota;
  const bounded = Object.keys(max).sort();
  const required = policy.quota?.required === true;
  if (!rq.enabled) {
    if (required)
      out.push({
        where: "values",
        paths: [
          ["policies", "resourceQuota", "enabled"],
          ["policies", "resourceQuota"],
        ],
        message:
          `the fleet policy (${POLICY_FILE} quota.required) requires a resource quota: set ` +
          `policies.resourceQuota.enabled: true with ${bounded.join(", ")} at most ` +
          `${bounded.map((k) => max[k]).join(", ")}`,
      });
    return;
  }
  for (const key of bounded) {
    const set = rq.quota[key];
    if (set === undefined) {
      if (required)
        out.push({
          where: "values",
          paths: [
            ["policies", "resourceQuota", "quota"],
            ["policies", "resourceQuota", "enabled"],
          ],
          at: "key",
          message:
            `the fleet policy (${POLICY_FILE} quota.required) requires ` +
            `policies.resourceQuota.quota["${key}"] (at most ${max[key]})`,
        });
      continue;
    }
    const order = compareQuantities(String(set), max[key]!);
    if (order === undefined || order > 0) {
      out.push({
        where: "values",
        paths: [["policies", "resourceQuota", "quota", key]],
        message: `quota ${key}: ${set} is more than the fleet policy allows (${POLICY_FILE} quota.max: ${max[key]})`,
      });
    }
  }
}

function databaseFindings(policy: Policy, values: Values, out: PolicyFinding[]): void {
  const allowed = policy.database?.hosts;
  const ext = values.controlPlane.backingStore.database.external;
  if (!allowed || !ext.enabled || ext.endpoint === "") return;
  const paths = [["controlPlane", "backingStore", "database", "external", "endpoint"]];
  const { hosts, refusals } = databaseTargets(ext.endpoint);
  for (const why of refusals)
    out.push({
      where: "values",
      paths,
      message:
        `the database endpoint cannot be checked against the fleet policy (${POLICY_FILE} ` + `database.hosts): ${why}`,
    });
  for (const host of hosts) {
    if (!allowed.some((p) => hostAllowed(host, p))) {
      out.push({
        where: "values",
        paths,
        message:
          `database host "${host}" is not allowed by the fleet policy (${POLICY_FILE} database.hosts: ` +
          `${list(allowed)})`,
      });
    }
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function meshFindings(
  policy: Policy,
  m: PolicyManifestInput,
  namespaces: ReadonlySet<string>,
  out: PolicyFinding[],
): void {
  const { kind, metadata, spec } = m.object;
  if (!isObject(spec)) return;
  const what = `${kind} ${metadata.namespace ?? "default"}/${metadata.name}`;
  const at = (path: PathSegment[], message: string): void =>
    void out.push({ where: "manifest", file: m.file, doc: m.index, path, message });
  if (kind === "VirtualService" || kind === "DestinationRule") {
    // Every host it names (served hosts, route destinations, mirrors, a DestinationRule's host) that is not a service
    // of this cluster is an external host, kept as written: bounded by hosts.virtualServices (refused forms are mesh
    // errors).
    const allowed = policy.hosts?.virtualServices;
    if (!allowed) return;
    for (const f of hostFields(m.object)) {
      if (classifyHost(f.host, metadata.namespace ?? "default", namespaces).form !== "external") continue;
      const name = f.host.endsWith(".") ? f.host.slice(0, -1) : f.host;
      const label =
        f.role === "hosts"
          ? "host"
          : f.path.includes("mirror") || f.path.includes("mirrors")
            ? "mirror host"
            : kind === "DestinationRule"
              ? "host"
              : "destination host";
      if (!allowed.some((p) => hostAllowed(name, p)))
        at(
          f.path,
          `${what}: ${label} "${f.host}" is not allowed by the fleet policy (${POLICY_FILE} hosts.virtualServices: ` +
            `${list(allowed)})`,
        );
    }
  } else if (kind === "Gateway") {
    const selectors = policy.gateways?.selectors;
    if (selectors) {
      const sel = isObject(spec.selector) ? spec.selector : {};
      if (!selectors.some((s) => Object.entries(s).every(([k, v]) => sel[k] === v))) {
        const shown = selectors
          .map((s) =>
            Object.entries(s)
              .map(([k, v]) => `${k}=${v}`)
              .join(","),
          )
          .map((s) => `{${s}}`);
        at(
          isObject(spec.selector) ? ["spec", "selector"] : ["spec"],
          `${what}: selector ${JSON.stringify(sel)} does not select an ingress gateway the fleet policy allows ` +
            `(${POLICY_FILE} gateways.selectors: ${list(shown)})`,
        );
      }
    }
    if (!Array.isArray(spec.servers)) return;
    const hostPatterns = policy.hosts?.gateways;
    const credentials = policy.gateways?.credentialNames;
    spec.servers.forEach((server, i) => {
      if (!isObject(server)) return;
      if (hostPatterns && Array.isArray(server.hosts)) {
        server.hosts.forEach((h, j) => {
          if (typeof h !== "string") return;
          const dns = h.slice(h.indexOf("/") + 1);
          if (!hostPatterns.some((p) => hostAllowed(dns, p)))
            at(
              ["spec", "servers", i, "hosts", j],
              `${what}: host "${dns}" is not allowed by the fleet policy (${POLICY_FILE} hosts.gateways: ` +
                `${list(hostPatterns)})`,
            );
        });
      }
      const cred = isObject(server.tls) ? server.tls.credentialName : undefined;
      if (credentials && typeof cred === "string" && cred !== "" && !credentials.some((p) => nameAllowed(cred, p))) {
        at(
          ["spec", "servers", i, "tls", "credentialName"],
          `${what}: tls.credentialName "${cred}" is not allowed by the fleet policy (${POLICY_FILE} ` +
            `gateways.credentialNames: ${list(credentials)})`,
        );
      }
    });
  }
}

/** A commonName that reads as a DNS name (a dot, no spaces): clients may still match it against the host. */
const DNS_LIKE = /^[^\s]+\.[^\s]+$/;

/**
 * A Certificate claims host names as a Gateway's servers do, and names the Secret a Gateway's tls.credentialName names:
 * the same bounds (hosts.gateways for spec.dnsNames and a DNS-like spec.commonName, gateways.credentialNames for
 * spec.secretName as written).
 */
function certificateFindings(policy: Policy, c: PolicyManifestInput, out: PolicyFinding[]): void {
  const { metadata, spec } = c.object;
  if (!isObject(spec)) return;
  const what = `Certificate ${metadata.namespace ?? "default"}/${metadata.name}`;
  const at = (path: PathSegment[], message: string): void =>
    void out.push({ where: "manifest", file: c.file, doc: c.index, path, message });
  const hostPatterns = policy.hosts?.gateways;
  if (hostPatterns) {
    const claim = (name: unknown, path: PathSegment[], label: string): void => {
      if (typeof name === "string" && !hostPatterns.some((p) => hostAllowed(name, p))) {
        at(
          path,
          `${what}: ${label} "${name}" is not allowed by the fleet policy (${POLICY_FILE} hosts.gateways: ` +
            `${list(hostPatterns)})`,
        );
      }
    };
    if (Array.isArray(spec.dnsNames)) spec.dnsNames.forEach((h, i) => claim(h, ["spec", "dnsNames", i], "DNS name"));
    if (typeof spec.commonName === "string" && DNS_LIKE.test(spec.commonName))
      claim(spec.commonName, ["spec", "commonName"], "commonName");
  }
  const credentials = policy.gateways?.credentialNames;
  const secret = spec.secretName;
  if (credentials && typeof secret === "string" && !credentials.some((p) => nameAllowed(secret, p))) {
    at(
      ["spec", "secretName"],
      `${what}: secretName "${secret}" is not allowed by the fleet policy (${POLICY_FILE} ` +
        `gateways.credentialNames: ${list(credentials)})`,
    );
  }
}
