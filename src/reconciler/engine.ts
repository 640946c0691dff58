// The pipeline stages the reconciler drives (load + validate, render, plan + apply), as one injectable set of functions.
import type { KubeObject } from "../kube/object.js";
import type { ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import type { SyncInput, SyncOptions, SyncResult, Target } from "../target/types.js";

/** One cluster folder as loaded and validated; `spec` is absent when it has errors. */
export interface LoadedCluster {
  name: string;
  dir: string;
  spec?: ClusterSpec;
  diagnostics: Diagnostic[];
  /** Its spec when its only error is a host namespace another folder claims too (validate/cluster.ts ClusterResult). */
  contested?: ClusterSpec;
}

export interface LoadResult {
  clusters: LoadedCluster[];
  /** Problems not tied to one cluster folder's validity (layout warnings, cross-cluster rules). */
  diagnostics: Diagnostic[];
}

export interface Engine {
  /** Loads and validates the named clusters of the repository at `root` (all when `clusters` is absent). */
  load(root: string, opts: { clusters?: string[] }): Promise<LoadResult> | LoadResult;
  render(spec: ClusterSpec, revision: string): KubeObject[];
  sync(target: Target, input: SyncInput, opts: SyncOptions): Promise<SyncResult>;
}
