// A virtual cluster as read from its folder in the repository, after validation.
import type { KubeObject } from "../kube/object.js";
import type { Values } from "./values.js";

/** Per-cluster settings from `clusters/<name>/cluster.yaml` (all optional in the file). */
export interface ClusterSettings {
  /** Host namespace; default `vc-<name>`. */
  namespace: string;
  /** Stop reconciling this cluster. */
  suspend: boolean;
  /** Delete host objects vc applied for this cluster that are no longer in the repository. */
  prune: boolean;
  /**
   * Recreate objects whose change the API server refuses in place (immutable fields); set only when cluster.yaml says
   * `force: true`.
   */
  force?: boolean;
}

/** One document of a manifest file of a cluster folder (`mesh/**.yaml`, `certificates/**.yaml`). */
export interface FolderManifest {
  /** Repository-relative path, `/`-separated. */
  file: string;
  /** Index of the document within its file (0-based). */
  index: number;
  object: KubeObject;
}

/** One mesh document of `clusters/<name>/mesh/**.yaml`. */
export type MeshManifest = FolderManifest;

/** One cert-manager Certificate document of `clusters/<name>/certificates/**.yaml`. */
export type CertificateManifest = FolderManifest;

/** A cluster folder that passed validation: everything rendering needs, nothing it must read. */
export interface ClusterSpec {
  /** The folder name: the virtual cluster's name (a DNS-1123 label). */
  name: string;
  /** Repository-relative folder, `clusters/<name>`. */
  dir: string;
  settings: ClusterSettings;
  /** Effective values: the values files deep-merged in order, defaults filled in. */
  values: Values;
  /** Repository-relative paths of the values files, in merge order. */
  valuesFiles: string[];
  /** Mesh documents, sorted by file then index. */
  mesh: MeshManifest[];
  /** Certificate documents, sorted by file then index (only while integrations.certManager.enabled; absent: none). */
  certificates?: CertificateManifest[];
}

export function defaultHostNamespace(cluster: string): string {
  return `vc-${cluster}`;
}
