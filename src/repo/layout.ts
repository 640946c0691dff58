// The repository layout: finds the repository root and each cluster folder's values files, cluster.yaml, mesh and
// certificate manifests.
import { existsSync, lstatSync, readdirSync, statSync, type Dirent } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import type { Diagnostic } from "../model/diagnostic.js";
import { isInside, safeRealpath } from "./read.js";

export const CLUSTERS_DIR = "clusters";
export const VALUES_FILE = "values.yaml";
export const CLUSTER_FILE = "cluster.yaml";
const MESH_DIR = "mesh";
/** cert-manager Certificate manifests (read while integrations.certManager.enabled; an error otherwise). */
const CERTIFICATES_DIR = "certificates";
/** Deepest folder nesting under mesh/ and certificates/. */
const MAX_MANIFEST_DEPTH = 16;

export interface ClusterFiles {
  name: string;
  /** `clusters/<name>`. */
  dir: string;
  /** Repository-relative values files in merge order: values.yaml, then values.*.yaml by name. */
  values: string[];
  /** Whether values.yaml itself exists. */
  hasValuesYaml: boolean;
  clusterFile?: string;
  /** Repository-relative mesh files (.yaml, .yml), sorted. */
  mesh: string[];
  /** Repository-relative certificate files (.yaml, .yml) under certificates/, sorted. */
  certificates: string[];
  /** Layout problems: ignored files, symlinked folders. */
  diagnostics: Diagnostic[];
  /** The first file past the `maxFiles` given to listClusterFiles: listing stopped there. */
  truncated?: string;
}

/**
 * The repository root for a path: the path itself when it holds `clusters/`, the parent when it is
 * `clusters/`, or the nearest ancestor holding `clusters/`. A path inside `clusters/<name>` also names that cluster.
 */
export function findRepoRoot(path: string): { root: string; cluster?: string } | undefined {
  let dir = resolve(path);
  let child: string | undefined;
  let grandchild: string | undefined;
  for (;;) {
    if (basename(dir) === CLUSTERS_DIR && isDir(dir) && child !== undefined) {
      return { root: dirname(dir), cluster: child };
    }
    if (isDir(join(dir, CLUSTERS_DIR))) {
      return child === CLUSTERS_DIR && grandchild ? { root: dir, cluster: grandchild } : { root: dir };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    grandchild = child;
    child = basename(dir);
    dir = parent;
  }
}

/** Names of the folders under clusters/ (sorted), with diagnostics for entries that are not cluster folders. */
export function listClusterFolders(realRoot: string): { names: string[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const names: string[] = [];
  const base = join(realRoot, CLUSTERS_DIR);
  if (isSymlink(base)) {
    // Never followed, wherever it points: the repository's clusters are the files in it.
    const d = symlinkDiag(realRoot, base, CLUSTERS_DIR);
    diagnostics.push({
      ...d,
      severity: "error",
      message: `clusters/ is a symlink: refused, not followed (${d.message})`,
    });
    return { names, diagnostics };
  }
  if (!existsSync(base)) {
    diagnostics.push(
      diag(CLUSTERS_DIR, "error", "layout", "no clusters/ folder: each virtual cluster is a folder clusters/<name>/"),
    );
    return { names, diagnostics };
  }
  for (const ent of sortedEntries(base)) {
    if (ent.name.startsWith(".")) continue;
    const rel = `${CLUSTERS_DIR}/${ent.name}`;
    if (ent.isDirectory()) names.push(ent.name);
    else if (ent.isSymbolicLink()) diagnostics.push(symlinkDiag(realRoot, join(base, ent.name), rel));
    else diagnostics.push(diag(rel, "warning", "layout", "not a cluster folder: ignored"));
  }
  return { names, diagnostics };
}

/**
 * The named cluster folders, looked up one by one, as listClusterFolders reports them (a symlink or a file under a
 * name is reported, not followed; a name that is not there, or could not be a folder of clusters/, is left out), but
 * nothing of the rest of clusters/: for a chunk of a fleet whose index listed the whole folder once. Listing the
 * folder for each chunk of a fleet of N is N × N / chunk entries read.
 */
export function namedClusterFolders(
  realRoot: string,
  wanted: readonly string[],
): { names: string[]; diagnostics: Diagnostic[] } {
  const base = join(realRoot, CLUSTERS_DIR);
  if (isSymlink(base) || !existsSync(base)) return listClusterFolders(realRoot);
  const diagnostics: Diagnostic[] = [];
  const names: string[] = [];
  for (const name of [...new Set(wanted)].sort(byName)) {
    if (name === "" || name.startsWith(".") || name.includes("/") || name.includes("\0")) continue;
    const abs = join(base, name);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st) continue;
    const rel = `${CLUSTERS_DIR}/${name}`;
    if (st.isDirectory()) names.push(name);
    else if (st.isSymbolicLink()) diagnostics.push(symlinkDiag(realRoot, abs, rel));
    else diagnostics.push(diag(rel, "warning", "layout", "not a cluster folder: ignored"));
  }
  return { names, diagnostics };
}

/**
 * The cluster folder names of the repository at `root`, for messages naming what exists; undefined without a clusters/
 * folder.
 */
export function clusterFolderNames(root: string): string[] | undefined {
  const real = safeRealpath(root);
  if (real === undefined || !isDir(join(real, CLUSTERS_DIR))) return undefined;
  return listClusterFolders(real).names;
}

/** Every file vc reads of a cluster folder: values files, cluster.yaml, mesh and certificate manifests. */
export function folderFiles(files: ClusterFiles): string[] {
  return [...files.values, ...(files.clusterFile ? [files.clusterFile] : []), ...files.mesh, ...files.certificates];
}

/** The files of one cluster folder; listing stops at the first file past `maxFiles` (named in `truncated`). */
export function listClusterFiles(realRoot: string, name: string, maxFiles = Infinity): ClusterFiles {
  const dir = `${CLUSTERS_DIR}/${name}`;
  const abs = join(realRoot, CLUSTERS_DIR, name);
  const out: ClusterFiles = {
    name,
    dir,
    values: [],
    hasValuesYaml: false,
    mesh: [],
    certificates: [],
    diagnostics: [],
  };
  const layered: string[] = [];
  const room = { left: maxFiles, out };
  for (const ent of sortedEntries(abs)) {
    if (out.truncated) break;
    if (ent.name.startsWith(".")) continue;
    const rel = `${dir}/${ent.name}`;
    const link = ent.isSymbolicLink();
    const manifests = ent.name === MESH_DIR ? out.mesh : ent.name === CERTIFICATES_DIR ? out.certificates : undefined;
    if (manifests && (ent.isDirectory() || link)) {
      if (link) out.diagnostics.push(symlinkDiag(realRoot, join(abs, ent.name), rel));
      else walkManifests(realRoot, rel, 0, manifests, out.diagnostics, room);
    } else if (!ent.isDirectory() && !(link && isDir(join(abs, ent.name)))) {
      const read = ent.name === VALUES_FILE || /^values\.[^/]+\.yaml$/.test(ent.name) || ent.name === CLUSTER_FILE;
      if (read && !take(room, rel)) break;
      if (ent.name === VALUES_FILE) {
        out.hasValuesYaml = true;
      } else if (/^values\.[^/]+\.yaml$/.test(ent.name)) {
        layered.push(rel);
      } else if (ent.name === CLUSTER_FILE) {
        out.clusterFile = rel;
      } else {
        out.diagnostics.push(
          diag(
            rel,
            "warning",
            "layout",
            "not part of the cluster layout (values.yaml, values.*.yaml, cluster.yaml, mesh/, certificates/): ignored",
          ),
        );
      }
    } else if (link) {
      out.diagnostics.push(symlinkDiag(realRoot, join(abs, ent.name), rel));
    } else {
      out.diagnostics.push(
        diag(
          rel,
          "warning",
          "layout",
          "folder not part of the cluster layout (only mesh/ and certificates/ are read): ignored",
        ),
      );
    }
  }
  if (out.hasValuesYaml) out.values.push(`${dir}/${VALUES_FILE}`);
  out.values.push(...layered);
  return out;
}

/** Counts one more file against `maxFiles`: false (and the file named in `truncated`) once past it. */
function take(room: { left: number; out: ClusterFiles }, rel: string): boolean {
  if (room.left <= 0) {
    room.out.truncated ??= rel;
    return false;
  }
  room.left--;
  return true;
}

/**
 * The YAML files below a manifest folder (mesh/, certificates/) into `files`, in sorted order; symlinked folders are
 * not followed.
 */
function walkManifests(
  realRoot: string,
  rel: string,
  depth: number,
  files: string[],
  diagnostics: Diagnostic[],
  room: { left: number; out: ClusterFiles },
): void {
  const abs = join(realRoot, ...rel.split("/"));
  for (const ent of sortedEntries(abs)) {
    if (room.out.truncated) return;
    if (ent.name.startsWith(".")) continue;
    const child = `${rel}/${ent.name}`;
    const yaml = ent.name.endsWith(".yaml") || ent.name.endsWith(".yml");
    if (ent.isDirectory()) {
      const top = rel.split("/")[2];
      if (depth + 1 >= MAX_MANIFEST_DEPTH)
        diagnostics.push(
          diag(child, "warning", "layout", `${top} folders nested deeper than ${MAX_MANIFEST_DEPTH}: ignored`),
        );
      else walkManifests(realRoot, child, depth + 1, files, diagnostics, room);
    } else if (ent.isSymbolicLink() && isDir(join(abs, ent.name))) {
      diagnostics.push(symlinkDiag(realRoot, join(abs, ent.name), child));
    } else if (yaml) {
      if (!take(room, child)) return;
      files.push(child);
    } else {
      diagnostics.push(diag(child, "warning", "layout", "not a .yaml or .yml file: ignored"));
    }
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** A symlinked folder is never followed: an error when it leads outside the repository, else a warning. */
function symlinkDiag(realRoot: string, abs: string, rel: string): Diagnostic {
  const target = safeRealpath(abs);
  if (target === undefined || !isInside(realRoot, target)) {
    return diag(rel, "error", "symlink", "symlink points outside the repository (or nowhere): refused, not followed");
  }
  return diag(
    rel,
    "warning",
    "symlink",
    `symlinked folder not followed (it points to ${relative(realRoot, target).split(sep).join("/")})`,
  );
}

/** Names in code-unit order (as the listing is sorted). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedEntries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => byName(a.name, b.name));
  } catch {
    return [];
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function diag(file: string, severity: Diagnostic["severity"], code: string, message: string): Diagnostic {
  return { file, line: 0, col: 0, severity, code, message };
}
