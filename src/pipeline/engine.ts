// The pipeline stages the reconciler drives (load + validate, render, plan + apply), as one injectable set of functions.
import type { KubeObject } from "../kube/object.js";
import type { ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import type { SyncInput, SyncOptions, SyncResult, Target } from "../sinks/types.js";

/** One cluster folder as loaded and validated; `spec` is absent when it has errors. */
export interface LoadedCluster {
  name: string;
  dir: string;
  spec?: ClusterSpec;
  diagnostics: Diagnostic[];
  /** Its spec when its only error is a host namespace another folder claims too (validate/cluster.ts ClusterResult). */
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
}

export interface LoadOptions {
  clusters?: string[];
  /** "summary": validity and settings only, no spec (the index a full pass keeps of the whole fleet). */
  detail?: "summary" | "full";
  /** Namespaces claimed by valid clusters outside this load (validate/namespace-claims.ts). */
  namespaceClaims?: ReadonlyMap<string, readonly string[]>;
  /** Clusters a rollout pins to a base snapshot: the folder of its fleet/ files, by cluster (src/rollout/). */
  bases?: Readonly<Record<string, string>>;
}

export interface LoadResult {
  clusters: LoadedCluster[];
  /** Problems not tied to one cluster folder's validity (layout warnings, cross-cluster rules). */
  diagnostics: Diagnostic[];
}

export interface Engine {
  /** Loads and validates the named clusters of the repository at `root` (all when `clusters` is absent). */
  load(root: string, opts: LoadOptions): Promise<LoadResult> | LoadResult;
  render(spec: ClusterSpec, revision: string): KubeObject[];
  sync(target: Target, input: SyncInput, opts: SyncOptions): Promise<SyncResult>;
}
