// What validating one cluster folder yields (ClusterResult), and where a rule across clusters points into it.
import type { ClusterSettings, ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import type { Values } from "../model/values.js";
import { loadYamlFile } from "../repo/load.js";
import { fileDiagnostic, SourceFile } from "./finding.js";

/** One public host a folder claims, and where: the manifest file, its document and the path to the host in it. */
export interface FolderClaim {
  host: string;
  file: string;
  doc: number;
  path: Array<string | number>;
}

/** What validating one cluster folder yields. */
export interface ClusterResult {
  name: string;
  /** `clusters/<name>`. */
  dir: string;
  /** Whether the folder has no errors (then `spec` is set, unless only a summary was asked for). */
  valid: boolean;
  /** The folder's cluster.yaml, when it has one. */
  clusterFile?: string;
  /** Only when the folder has no errors: what may be applied. */
  spec?: ClusterSpec;
  /** The cluster.yaml settings when that file is valid (or absent), even if other files are not: for diagnosis. */
  settings?: ClusterSettings;
  /** The effective values when every values file is valid, even if other files are not: for diagnosis. */
  values?: Values;
  /**
   * The public hosts a valid folder's mesh manifests claim (host-claims.ts): kept in summaries, for rules across
   * clusters.
   */
  claims?: FolderClaim[];
  diagnostics: Diagnostic[];
  /**
   * Set when the folder's only error is that another cluster of the repository claims its host namespace: its spec,
   * for a command that sees the host to admit the cluster that already holds the namespace there (records/holders.ts).
   */
  contested?: ClusterSpec;
  /** SHA-256 of the folder's validation inputs (digest.ts folderDigest), when the folder's files could be read. */
  digest?: string;
  /** The summary is the one the cluster's record kept for this digest: the folder was not validated again. */
  recorded?: true;
}

/** The parsed cluster.yaml of each result that has one, for rules across clusters to point into. */
const settingsSources = new WeakMap<ClusterResult, SourceFile>();

/** Keeps the parsed cluster.yaml of a result, for namespaceDiagnostic. */
export function rememberSettingsSource(result: ClusterResult, source: SourceFile): void {
  settingsSources.set(result, source);
}

/**
 * Where a cluster's host namespace is set: the `namespace` key of its cluster.yaml, else the folder. A result
 * from the cache has no parsed cluster.yaml: the file is read again (only when there is something to report).
 */
export function namespaceDiagnostic(
  realRoot: string,
  result: ClusterResult,
  code: string,
  message: string,
): Diagnostic {
  let source = settingsSources.get(result);
  if (!source && result.clusterFile) {
    const loaded = loadYamlFile(realRoot, result.clusterFile);
    if (loaded.ok) source = new SourceFile(result.clusterFile, loaded.text);
  }
  if (source) return source.diagnostic({ doc: 0, path: ["namespace"], at: "key", severity: "error", code, message });
  return fileDiagnostic(result.dir, "error", code, message);
}
