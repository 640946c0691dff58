// Public host claims across the cluster folders of one repository: a compact index per folder (carried in summaries,
// the validation cache and worker answers) and the conflicts it shows without the host.
//
// Without the host, "newer" cannot be read from creation times: of two clusters claiming one public host, the
// cluster whose name sorts later is reported (the reconciler's rule for claims nobody serves yet). On the host, the
// older live claim wins whatever the names (claims/host-claims.ts); `vc diff` shows the host's decision.
import type { KubeObject } from "../kube/object.js";
import type { ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { loadYamlFile } from "../repo/load.js";
import { claimedHostPaths } from "../claims/host-claims.js";
import { overlaps } from "../claims/hosts.js";
import { MESH_API_VERSION } from "../kube/resources.js";
import { meshKindEnabled } from "../model/values.js";
import { translateMeshSpec, virtualNamespaceOf } from "../translate/mesh/spec.js";
import { meshNamespaces } from "../translate/names.js";
import type { ClusterResult, FolderClaim } from "./result.js";
import { fileDiagnostic, SourceFile } from "./finding.js";

/** The public hosts a valid cluster's mesh manifests claim once rendered (the same rule the host applies). */
export function folderClaims(spec: ClusterSpec): FolderClaim[] {
  if (!spec.values.integrations.mesh.enabled || spec.mesh.length === 0) return [];
  const namespaces = meshNamespaces(spec.mesh.map((m) => m.object));
  const out: FolderClaim[] = [];
  for (const m of spec.mesh) {
    const claiming = claimingPart(m.object);
    if (!claiming || claiming.apiVersion !== MESH_API_VERSION || !meshKindEnabled(spec.values, claiming.kind)) continue;
    // Only the spec decides claims: translated as rendering translates it (the naming contract), nothing else rendered.
    const scope = {
      cluster: spec.name,
      virtualNamespace: virtualNamespaceOf(claiming),
      hostNamespace: spec.settings.namespace,
      namespaces,
    };
    const hostSpec = translateMeshSpec(claiming.kind, claiming.spec, scope);
    const host: KubeObject = {
      apiVersion: claiming.apiVersion,
      kind: claiming.kind,
      metadata: { name: claiming.metadata.name },
      ...(hostSpec ? { spec: hostSpec } : {}),
    };
    for (const c of claimedHostPaths(host)) out.push({ host: c.host, file: m.file, doc: m.index, path: c.path });
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Only what decides a manifest's claims, indices kept (a Gateway's server hosts; a VirtualService's hosts and
 * gateways): rendering that is all the index costs. Undefined for a kind that claims nothing.
 */
function claimingPart(obj: KubeObject): KubeObject | undefined {
  const spec = isObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return undefined;
  if (obj.kind === "Gateway") {
    const servers = Array.isArray(spec.servers)
      ? spec.servers.map((s) => (isObject(s) ? { hosts: s.hosts } : s))
      : spec.servers;
    return { ...obj, spec: { servers } };
  }
  if (obj.kind === "VirtualService") {
    const http = Array.isArray(spec.http) ? spec.http.map((r) => (isObject(r) ? { match: r.match } : r)) : spec.http;
    return { ...obj, spec: { hosts: spec.hosts, gateways: spec.gateways, http } };
  }
  return undefined;
}

interface Claimant {
  cluster: ClusterResult;
  claim: FolderClaim;
}

/**
 * Reports each public host claimed by two valid clusters of the repository as an error on the claim of the cluster
 * whose name sorts later (one diagnostic per cluster and host, at its first claim of it), which is then invalid.
 * Exact hosts are matched through an index; only wildcard claims are compared with every claim.
 */
export function claimConflicts(realRoot: string, clusters: readonly ClusterResult[]): void {
  const ordered = clusters
    .filter((c) => c.valid && (c.claims?.length ?? 0) > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (ordered.length < 2) return;
  const exact = new Map<string, Claimant>();
  const wildcards: Claimant[] = [];
  const all: Claimant[] = [];
  const conflicts = new Map<ClusterResult, Array<{ mine: FolderClaim; holder: Claimant }>>();
  for (const cluster of ordered) {
    const seen = new Set<string>();
    const mine: Claimant[] = cluster.claims!.map((claim) => ({ cluster, claim }));
    for (const c of mine) {
      if (seen.has(c.claim.host)) continue;
      const holder = c.claim.host.startsWith("*")
        ? all.find((o) => overlaps(o.claim.host, c.claim.host))
        : (exact.get(c.claim.host) ?? wildcards.find((o) => overlaps(o.claim.host, c.claim.host)));
      if (!holder) continue;
      seen.add(c.claim.host);
      conflicts.set(cluster, [...(conflicts.get(cluster) ?? []), { mine: c.claim, holder }]);
    }
    for (const c of mine) {
      all.push(c);
      if (c.claim.host.startsWith("*")) wildcards.push(c);
      else if (!exact.has(c.claim.host)) exact.set(c.claim.host, c);
    }
  }
  const sources = new Map<string, SourceFile | undefined>();
  const locate = (claim: FolderClaim, message: string): Diagnostic => {
    if (!sources.has(claim.file)) {
      const loaded = loadYamlFile(realRoot, claim.file);
      sources.set(claim.file, loaded.ok ? new SourceFile(claim.file, loaded.text, loaded.events) : undefined);
    }
    const source = sources.get(claim.file);
    return source
      ? source.diagnostic({
          doc: claim.doc,
          path: claim.path,
          at: "value",
          severity: "error",
          code: "public-host-claimed",
          message,
        })
      : fileDiagnostic(claim.file, "error", "public-host-claimed", message);
  };
  for (const [cluster, found] of conflicts) {
    for (const { mine, holder } of found) {
      const at = locate(holder.claim, "");
      const message =
        `public host "${mine.host}" is also claimed by cluster ${holder.cluster.name} ("${holder.claim.host}" at ` +
        `${at.file}:${at.line}:${at.col}): one cluster per public host. ` +
        `Without the host, the cluster whose name sorts later is reported (the reconciler applies the first name ` +
        `of claims nobody serves yet); ` +
        `on the host the older live claim wins whatever the names (vc diff shows which): remove the host from one ` +
        `of them`;
      cluster.diagnostics.push(locate(mine, message));
    }
    delete cluster.spec;
    cluster.valid = false;
  }
}
