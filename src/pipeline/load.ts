// The desired state of a repository: its clusters validated in summary (the index of a run), and a chunk of them
// validated and rendered into host objects.
import type { KubeObject } from "../kube/object.js";
import { defaultHostNamespace } from "../model/cluster.js";
import { formatDiagnostic, type Diagnostic } from "../model/diagnostic.js";
import type { ClusterError } from "../plan/format.js";
import { NAMESPACE_CONFLICT, namespaceClaims } from "../validate/namespace-claims.js";
import {
  attribute,
  defaultEngine,
  loadIsolated,
  type Engine,
  type LoadedCluster,
  type LoadOptions,
  type LoadResult,
} from "./engine.js";

interface DesiredCluster {
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
   * that sees the host admits the one whose record holds the namespace there (records/holders.ts); they stay in
   * `errors` until then.
   */
  contested?: DesiredCluster[];
  /**
   * Clusters a running rollout holds at an older base: the folder of that base's snapshot, by cluster
   * (src/rollout/command.ts).
   */
  bases?: Readonly<Record<string, string>>;
}

/**
 * What a run keeps of the whole fleet: validated in summary, nothing rendered (its clusters are loaded a chunk at a
 * time).
 */
export interface DesiredIndex {
  /** `clusters` is empty; `errors`, `known` and `missing` are the fleet's (or the selection's). */
  state: DesiredState;
  /** The valid clusters, in order: loaded and rendered a chunk at a time (loadIndexedChunk). */
  valid: string[];
  /** The namespace index of the cross-cluster rule (validate/namespace-claims.ts). */
  claims: Map<string, string[]>;
  /**
   * Clusters refused only because another folder claims their host namespace (a command that sees the host may admit
   * one, records/holders.ts).
   */
  contested: string[];
  /**
   * The public hosts each valid or contested folder claims (validate/host-claims.ts), sorted: the host claims of the
   * run.
   */
  hosts: Map<string, string[]>;
  /** Clusters whose cluster.yaml says `suspend: true`. */
  suspended: Set<string>;
  /**
   * Every folder the index read, as loaded in summary (validity, settings, claims): what the reconciler's pass records.
   */
  folders: LoadedCluster[];
}

export interface LoadDesiredOptions {
  clusters?: string[];
  namespaceClaims?: ReadonlyMap<string, readonly string[]>;
  bases?: Readonly<Record<string, string>>;
  engine?: Engine;
}

/** The named clusters (all when none are named) validated and rendered at once. */
export async function loadDesired(
  root: string,
  revision: string,
  opts: LoadDesiredOptions = {},
): Promise<DesiredState> {
  const engine = opts.engine ?? defaultEngine;
  const res = await loadIsolated(engine, root, opts.clusters ?? [], {
    namespaceClaims: opts.namespaceClaims,
    ...(opts.bases ? { bases: opts.bases } : {}),
  });
  return renderLoaded(engine, { ...res, clusters: attribute(res) }, root, revision);
}

/**
 * A loaded chunk as a desired state: each valid cluster rendered, the others (and the repository's problems) as errors.
 */
export async function renderLoaded(
  engine: Engine,
  res: LoadResult,
  root: string,
  revision: string,
): Promise<DesiredState> {
  const clusters: DesiredCluster[] = [];
  const errors: ClusterError[] = [];
  const known = new Map<string, string>();
  const contested: DesiredCluster[] = [];
  for (const [i, c] of res.clusters.entries()) {
    // Renders yield to the event loop between clusters: a chunk loaded ahead shares it with the one being applied.
    if (i > 0) await new Promise((r) => setImmediate(r));
    known.set(c.name, c.settings?.namespace ?? defaultHostNamespace(c.name));
    if (!c.spec) {
      errors.push({ cluster: c.name, message: firstError(c.diagnostics) });
      if (c.contested) {
        try {
          contested.push(desiredOf(c.name, c.contested, engine.render(c.contested, revision)));
        } catch {
          // Not renderable: it stays refused.
        }
      }
      continue;
    }
    try {
      clusters.push(desiredOf(c.name, c.spec, engine.render(c.spec, revision)));
    } catch (err) {
      errors.push({ cluster: c.name, message: `cannot render: ${(err as Error).message}` });
    }
  }
  const { missing, repository } = repositoryErrors(res);
  errors.push(...repository);
  return {
    root: res.root ?? root,
    revision,
    clusters,
    errors,
    known,
    missing,
    ...(contested.length > 0 ? { contested } : {}),
  };
}

function desiredOf(name: string, spec: NonNullable<LoadedCluster["spec"]>, objects: KubeObject[]): DesiredCluster {
  const s = spec.settings;
  return { name, hostNamespace: s.namespace, prune: s.prune, suspend: s.suspend, force: s.force ?? false, objects };
}

/** The diagnostics outside any cluster folder: names asked for that have no folder, and errors of the run. */
function repositoryErrors(res: LoadResult): { missing: string[]; repository: ClusterError[] } {
  const missing: string[] = [];
  const repository: ClusterError[] = [];
  for (const d of res.diagnostics) {
    if (d.severity !== "error" || res.clusters.some((c) => d.file === c.dir || d.file.startsWith(`${c.dir}/`)))
      continue;
    if (d.code === "unknown-cluster") {
      missing.push(d.file.slice(d.file.lastIndexOf("/") + 1));
      continue;
    }
    const m = /^clusters\/([^/]+)/.exec(d.file);
    repository.push({ cluster: m ? m[1]! : "(repository)", message: formatDiagnostic(d) });
  }
  return { missing, repository };
}

/** The first error of a folder, and how many more there are. */
export function firstError(diagnostics: readonly Diagnostic[]): string {
  const errs = diagnostics.filter((d) => d.severity === "error");
  if (errs.length === 0) return "invalid";
  return `${formatDiagnostic(errs[0]!)}${errs.length > 1 ? ` (and ${errs.length - 1} more: run vc validate)` : ""}`;
}

/**
 * The named clusters of an indexed fleet, loaded and rendered as one chunk (the index's namespace claims, its rollout
 * pins).
 */
export function loadIndexedChunk(
  index: DesiredIndex,
  names: string[],
  engine: Engine = defaultEngine,
): Promise<DesiredState> {
  const { root, revision, bases } = index.state;
  return loadDesired(root, revision, { clusters: names, namespaceClaims: index.claims, bases, engine });
}

/**
 * Validates the fleet in summary (no spec, no render): its errors, known clusters and namespace index. With
 * `clusters`, only those folders: the index of a selection, whose names without a folder are `missing`. With
 * `validated`, a folder whose digest matches what its record kept is not validated again.
 */
export async function loadDesiredIndex(
  root: string,
  revision: string,
  opts: { clusters?: string[]; engine?: Engine; validated?: LoadOptions["validated"] } = {},
): Promise<DesiredIndex> {
  const res = await loadIsolated(opts.engine ?? defaultEngine, root, opts.clusters ?? [], {
    detail: "summary",
    ...(opts.validated ? { validated: opts.validated } : {}),
  });
  const folders = attribute(res);
  const errors: ClusterError[] = [];
  const known = new Map<string, string>();
  const valid: string[] = [];
  const contested: string[] = [];
  const hosts = new Map<string, string[]>();
  const suspended = new Set<string>();
  for (const c of folders) {
    known.set(c.name, c.settings?.namespace ?? defaultHostNamespace(c.name));
    const errs = c.diagnostics.filter((d) => d.severity === "error");
    const isValid = c.valid === true && errs.length === 0;
    const isContested = !isValid && errs.length > 0 && errs.every((d) => d.code === NAMESPACE_CONFLICT);
    if (isValid) valid.push(c.name);
    else errors.push({ cluster: c.name, message: firstError(c.diagnostics) });
    if (isContested) contested.push(c.name);
    if (isValid || isContested) {
      const claimed = [...new Set((c.claims ?? []).map((h) => h.host))].sort();
      if (claimed.length > 0) hosts.set(c.name, claimed);
      if (c.settings?.suspend) suspended.add(c.name);
    }
  }
  const { missing, repository } = repositoryErrors({ ...res, clusters: folders });
  errors.push(...repository);
  const claims = namespaceClaims(res.clusters);
  return {
    state: { root: res.root ?? root, revision, clusters: [], errors, known, missing },
    valid,
    claims,
    contested,
    hosts,
    suspended,
    folders,
  };
}
