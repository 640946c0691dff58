// The desired state of a repository: validate the selected clusters and render each valid one into host objects.
import type { KubeObject } from "../kube/object.js";
import { defaultHostNamespace } from "../model/cluster.js";
import { formatDiagnostic, type Diagnostic } from "../model/diagnostic.js";
import type { ClusterError } from "../plan/format.js";
import { renderCluster } from "../render/index.js";
import { loadAndValidate } from "../validate/index.js";
import { NAMESPACE_CONFLICT, namespaceClaims } from "../validate/namespace-claims.js";

export interface DesiredCluster {
  name: string;
  hostNamespace: string;
  /** cluster.yaml `prune` (default true): false keeps vc from ever pruning this cluster. */
  prune: boolean;
  /** cluster.yaml `suspend`: `vc apply` leaves the cluster alone. */
  suspend: boolean;
  /** cluster.yaml `force`: recreate objects whose change the server refuses in place. */
  force: boolean;
  objects: KubeObject[];
}

export interface DesiredState {
  root: string;
  revision: string;
  clusters: DesiredCluster[];
  /** Clusters that failed validation or rendering: never applied, never treated as removed. */
  errors: ClusterError[];
  /**
   * The clusters the repository has (valid or not) and their host namespaces (cluster.yaml's when it is valid,
   * else `vc-<name>`): anything else live is a removed cluster.
   */
  known: Map<string, string>;
  /** Clusters asked for by name that have no folder (perhaps removed from the repository). */
  missing: string[];
  /**
   * Clusters refused only because another cluster of the repository claims their host namespace, rendered: a command
   * that sees the host admits the one whose record holds the namespace there (records/holders.ts); they stay in `errors` until then.
   */
  contested?: DesiredCluster[];
  /** Clusters a running rollout holds at an older base: the folder of that base's snapshot, by cluster (src/rollout/command.ts). */
  bases?: Readonly<Record<string, string>>;
}

export async function loadDesired(root: string, revision: string, opts: { clusters?: string[]; namespaceClaims?: ReadonlyMap<string, readonly string[]>; bases?: Readonly<Record<string, string>> } = {}): Promise<DesiredState> {
  const validation = await loadAndValidate(root, { clusters: opts.clusters, namespaceClaims: opts.namespaceClaims, ...(opts.bases ? { bases: opts.bases } : {}) });
  const clusters: DesiredCluster[] = [];
  const errors: ClusterError[] = [];
  const known = new Map<string, string>();
  const missing: string[] = [];
  const contested: DesiredCluster[] = [];
  for (const [i, c] of validation.clusters.entries()) {
    // Renders yield to the event loop between clusters: a chunk loaded ahead shares it with the one being applied.
    if (i > 0) await new Promise((r) => setImmediate(r));
    known.set(c.name, c.settings?.namespace ?? defaultHostNamespace(c.name));
    if (!c.spec) {
      errors.push({ cluster: c.name, message: firstError(c.diagnostics) });
      if (c.contested) {
        try {
          const s = c.contested.settings;
          contested.push({ name: c.name, hostNamespace: s.namespace, prune: s.prune, suspend: s.suspend, force: s.force ?? false, objects: renderCluster(c.contested, revision) });
        } catch {
          // Not renderable: it stays refused.
        }
      }
      continue;
    }
    try {
      const objects = renderCluster(c.spec, revision);
      clusters.push({ name: c.name, hostNamespace: c.spec.settings.namespace, prune: c.spec.settings.prune, suspend: c.spec.settings.suspend, force: c.spec.settings.force ?? false, objects });
    } catch (err) {
      errors.push({ cluster: c.name, message: `cannot render: ${(err as Error).message}` });
    }
  }
  // Diagnostics outside any cluster folder (an unknown --cluster name, layout problems) are errors of the run.
  for (const d of validation.diagnostics) {
    if (d.severity !== "error" || validation.clusters.some((c) => d.file === c.dir || d.file.startsWith(`${c.dir}/`))) continue;
    if (d.code === "unknown-cluster") {
      missing.push(d.file.slice(d.file.lastIndexOf("/") + 1));
      continue;
    }
    const m = /^clusters\/([^/]+)/.exec(d.file);
    errors.push({ cluster: m ? m[1]! : "(repository)", message: formatDiagnostic(d) });
  }
  return { root: validation.root, revision, clusters, errors, known, missing, ...(contested.length > 0 ? { contested } : {}) };
}

function firstError(diagnostics: readonly Diagnostic[]): string {
  const errs = diagnostics.filter((d) => d.severity === "error");
  if (errs.length === 0) return "invalid";
  return `${formatDiagnostic(errs[0]!)}${errs.length > 1 ? ` (and ${errs.length - 1} more: run vc validate)` : ""}`;
}

/** A fleet's desired state without its objects: what a streamed run keeps of the whole fleet (desired.ts DesiredState, clusters empty). */
export interface DesiredIndex {
  /** `clusters` is empty; `errors`, `known` and `missing` are the whole fleet's. */
  state: DesiredState;
  /** The valid clusters, in order: loaded and rendered a chunk at a time (loadDesired with `namespaceClaims`). */
  valid: string[];
  /** The namespace index of the cross-cluster rule (validate/namespace-claims.ts). */
  claims: Map<string, string[]>;
  /** Clusters refused only because another folder claims their host namespace (a command that sees the host may admit one, records/holders.ts). */
  contested: string[];
  /** The public hosts each valid or contested folder claims (validate/host-claims.ts), sorted: the host claims of a streamed run. */
  hosts: Map<string, string[]>;
  /** Clusters whose cluster.yaml says `suspend: true`. */
  suspended: Set<string>;
}

/** The named clusters of an indexed fleet, loaded and rendered as one chunk (the index's namespace claims, its rollout pins). */
export function loadIndexedChunk(index: DesiredIndex, names: string[]): Promise<DesiredState> {
  const { root, revision, bases } = index.state;
  return loadDesired(root, revision, { clusters: names, namespaceClaims: index.claims, bases });
}

/** Validates the whole fleet in summary (no spec, no render): its errors, known clusters and namespace index. */
export async function loadDesiredIndex(root: string, revision: string): Promise<DesiredIndex> {
  const validation = await loadAndValidate(root, { detail: "summary" });
  const errors: ClusterError[] = [];
  const known = new Map<string, string>();
  const valid: string[] = [];
  const contested: string[] = [];
  const hosts = new Map<string, string[]>();
  const suspended = new Set<string>();
  for (const c of validation.clusters) {
    known.set(c.name, c.settings?.namespace ?? defaultHostNamespace(c.name));
    const errs = c.diagnostics.filter((d) => d.severity === "error");
    const isContested = !c.valid && errs.length > 0 && errs.every((d) => d.code === NAMESPACE_CONFLICT);
    if (c.valid) valid.push(c.name);
    else errors.push({ cluster: c.name, message: firstError(c.diagnostics) });
    if (isContested) contested.push(c.name);
    if (c.valid || isContested) {
      const claimed = [...new Set((c.claims ?? []).map((h) => h.host))].sort();
      if (claimed.length > 0) hosts.set(c.name, claimed);
      if (c.settings?.suspend) suspended.add(c.name);
    }
  }
  for (const d of validation.diagnostics) {
    if (d.severity !== "error" || validation.clusters.some((c) => d.file === c.dir || d.file.startsWith(`${c.dir}/`))) continue;
    const m = /^clusters\/([^/]+)/.exec(d.file);
    errors.push({ cluster: m ? m[1]! : "(repository)", message: formatDiagnostic(d) });
  }
  return { state: { root: validation.root, revision, clusters: [], errors, known, missing: [] }, valid, claims: namespaceClaims(validation.clusters), contested, hosts, suspended };
}
