// The desired state of a repository: validate the selected clusters and render each valid one into host objects.
import type { KubeObject } from "../kube/object.js";
import { defaultHostNamespace } from "../model/cluster.js";
import { formatDiagnostic, type Diagnostic } from "../model/diagnostic.js";
import type { ClusterError } from "../plan/format.js";
import { renderCluster } from "../render/index.js";
import { loadAndValidate } from "../validate/index.js";

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
}

export async function loadDesired(root: string, revision: string, opts: { clusters?: string[] } = {}): Promise<DesiredState> {
  const validation = await loadAndValidate(root, { clusters: opts.clusters });
  const clusters: DesiredCluster[] = [];
  const errors: ClusterError[] = [];
  const known = new Map<string, string>();
  const missing: string[] = [];
  const contested: DesiredCluster[] = [];
  for (const c of validation.clusters) {
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
