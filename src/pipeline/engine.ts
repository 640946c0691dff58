// The stages every run drives (load + validate, render) as one injectable set, and loading a chunk of cluster folders
// so that a folder that breaks the loader takes only itself down.
import type { KubeObject } from "../kube/object.js";
import type { ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { renderCluster } from "../render/index.js";
import { CLUSTERS_DIR } from "../repo/layout.js";
import { loadAndValidate } from "../validate/index.js";
import type { ValidatedFolder } from "../validate/digest.js";

/** One cluster folder as loaded and validated; `spec` is absent when it has errors. */
export interface LoadedCluster {
  name: string;
  dir: string;
  spec?: ClusterSpec;
  diagnostics: Diagnostic[];
  /** Its spec when its only error is a host namespace another folder claims too (validate/result.ts ClusterResult). */
  contested?: ClusterSpec;
  /** Whether the folder has no errors (set by the validator; a summary load has it without `spec`). */
  valid?: boolean;
  /** cluster.yaml's settings when that file is valid (a summary load has them without `spec`). */
  settings?: { namespace: string; suspend?: boolean };
  /** The public hosts a valid folder claims (validate/host-claims.ts; a summary load has them without `spec`). */
  claims?: ReadonlyArray<{ host: string }>;
  /**
   * Set by a pass of a fleet with rollouts (src/rollout/driver.ts): the base snapshot the cluster is rendered at (its
   * record's `base`; none: unpinned), the one it came from while a rollout moved it, and why it waits for its wave.
   */
  rollout?: { base?: string; previousBase?: string; waiting?: string };
  /** The digest of the folder's validation inputs (validate/digest.ts), when the load was asked for digests. */
  digest?: string;
  /** A summary taken from the cluster's record, its digest matching: the folder was not validated again. */
  recorded?: true;
}

export interface LoadOptions {
  clusters?: string[];
  /** "summary": validity and settings only, no spec (the index a run keeps of the whole fleet). */
  detail?: "summary" | "full";
  /** Namespaces claimed by valid clusters outside this load (validate/namespace-claims.ts). */
  namespaceClaims?: ReadonlyMap<string, readonly string[]>;
  /** Clusters a rollout pins to a base snapshot: the folder of its fleet/ files, by cluster (src/rollout/). */
  bases?: Readonly<Record<string, string>>;
  /**
   * Digests of the folders' validation inputs: with the records' summaries (a summary load takes a folder's from its
   * record when the digest matches, validate/digest.ts), or `true` for the digests alone.
   */
  validated?: ReadonlyMap<string, ValidatedFolder> | true;
}

export interface LoadResult {
  /** The repository's real path, when the loader resolved it. */
  root?: string;
  clusters: LoadedCluster[];
  /** Problems not tied to one cluster folder's validity (layout warnings, cross-cluster rules). */
  diagnostics: Diagnostic[];
}

export interface Engine {
  /** Loads and validates the named clusters of the repository at `root` (all when `clusters` is absent). */
  load(root: string, opts: LoadOptions): Promise<LoadResult> | LoadResult;
  render(spec: ClusterSpec, revision: string): KubeObject[];
}

export const defaultEngine: Engine = {
  load: (root, opts) => loadAndValidate(root, opts),
  render: renderCluster,
};

/**
 * Loads the named clusters together; when that throws (a loader bug, a file no limit foresaw), loads them one by one so
 * that only the cluster that fails is invalid, with its own error, and the others go on. `warn` hears of the fall-back.
 */
export async function loadIsolated(
  engine: Engine,
  root: string,
  names: string[],
  extra: Omit<LoadOptions, "clusters"> = {},
  warn: (message: string, fields: Record<string, unknown>) => void = () => {},
): Promise<LoadResult> {
  try {
    return await engine.load(root, { ...extra, clusters: names });
  } catch (err) {
    // The whole repository (no names) has nothing to isolate: its error is the run's.
    if (names.length === 0) throw err;
    warn("loading the clusters together failed: loading them one by one", { error: (err as Error).message });
  }
  const out: LoadResult = { clusters: [], diagnostics: [] };
  for (const name of names) {
    try {
      const one = await engine.load(root, { ...extra, clusters: [name] });
      out.root ??= one.root;
      out.clusters.push(...one.clusters);
      out.diagnostics.push(...one.diagnostics);
    } catch (err) {
      const dir = `${CLUSTERS_DIR}/${name}`;
      const message = `cannot load this cluster folder: ${(err as Error).message ?? String(err)}`;
      out.clusters.push({
        name,
        dir,
        diagnostics: [{ file: dir, line: 0, col: 0, severity: "error", code: "load-failed", message }],
      });
    }
  }
  return out;
}

/** The loaded clusters, each also invalid for the repository-level errors located in its folder. */
export function attribute(res: LoadResult): LoadedCluster[] {
  const errors = res.diagnostics.filter((d) => d.severity === "error");
  if (errors.length === 0) return res.clusters;
  return res.clusters.map((c) => {
    const known = new Set(c.diagnostics.map((d) => JSON.stringify(d)));
    const mine = errors.filter(
      (d) => (d.file === c.dir || d.file.startsWith(`${c.dir}/`)) && !known.has(JSON.stringify(d)),
    );
    if (mine.length === 0 && (c.spec === undefined || !c.diagnostics.some((d) => d.severity === "error"))) return c;
    const { spec: _spec, ...rest } = c;
    return { ...rest, diagnostics: [...c.diagnostics, ...mine] };
  });
}
