// Validation of a whole repository: every selected cluster folder, plus rules across clusters; the entry point other
// stages call.
import { hostNamespaceRules } from "./host-namespace.js";
import { maskShapedCredentials } from "../model/secrets.js";
import { compareDiagnostics, type Diagnostic } from "../model/diagnostic.js";
import type { ClusterSpec } from "../model/cluster.js";
import { CLUSTERS_DIR, listClusterFolders, namedClusterFolders } from "../repo/layout.js";
import { NAMESPACE_CONFLICT } from "./namespace-claims.js";
import { safeRealpath } from "../repo/read.js";
import { fileDiagnostic } from "./finding.js";
import { namespaceDiagnostic, type ClusterResult } from "./result.js";
import { pruneCache, type Detail } from "./cache.js";
import { openCacheDir } from "./cache-dir.js";
import { defaultJobs, validateFolders } from "./pool.js";
import { loadPolicy } from "./policy.js";
import { claimConflicts } from "./host-claims.js";
import { loadFleetBase } from "./fleet-base.js";
import { FLEET_DIR } from "../repo/fleet-base.js";
import { loadRollout } from "./rollout-file.js";
import { sharedInputs, type ValidatedFolder } from "./digest.js";

export interface RepoValidation {
  root: string;
  clusters: ClusterResult[];
  /** All diagnostics, sorted by file, line, column. */
  diagnostics: Diagnostic[];
}

export interface ValidateOptions {
  /** Only these cluster folders (by name); all when absent or empty. */
  clusters?: string[];
  /**
   * Folder of the content-addressed cache of validated folders (created 0700 when missing); no cache when absent.
   * A symlink, or a folder of another user or writable by others, is not used (a `cache-refused` warning).
   */
  cacheDir?: string;
  /** Threads to validate on (default: every core); large fleets only, see pool.ts. */
  jobs?: number;
  /** "summary": diagnostics and settings only, no `spec` or `values` (`vc validate`); default "full". */
  detail?: Detail;
  /**
   * Host namespaces claimed by valid clusters outside this load (namespace -> cluster names), for the cross-cluster
   * rules of a fleet loaded chunk by chunk: a compact index instead of every spec at once. Such a load is a chunk of a
   * run that indexed the repository: with `clusters`, only those folders are looked up, and the rest of clusters/
   * (files and symlinks there, reported by the index) is not read again.
   */
  namespaceClaims?: ReadonlyMap<string, readonly string[]>;
  /**
   * Report a public host two clusters of the repository claim (validate/host-claims.ts), as `vc validate` does: it has
   * no host. Commands that reach the host (apply, diff, the reconciler) leave it off and decide by the live claims.
   */
  hostClaims?: boolean;
  /**
   * Clusters pinned by a rollout to a base snapshot: the folder holding its fleet/ files, by cluster (src/rollout/).
   */
  bases?: Readonly<Record<string, string>>;
  /**
   * What the records kept of the folders' last validations (digest.ts ValidatedFolder), by cluster: every result then
   * carries its digest, and in a summary a folder whose digest matches is not validated again (its record's summary
   * is taken; the rules across clusters still run). `true`: digests without a record (a run that records them).
   */
  validated?: ReadonlyMap<string, ValidatedFolder> | true;
}

/** The cluster names given to loadAndValidate that have no folder (its `unknown-cluster` diagnostics), sorted. */
export function unknownClusters(diagnostics: readonly Diagnostic[]): string[] {
  return diagnostics.filter((d) => d.code === "unknown-cluster").map((d) => d.file.slice(d.file.lastIndexOf("/") + 1));
}

/**
 * Loads and validates the repository at `root` (the folder holding `clusters/`). Throws only when `root`
 * itself cannot be read; every problem inside it is a diagnostic.
 */
export async function loadAndValidate(root: string, opts: ValidateOptions = {}): Promise<RepoValidation> {
  const realRoot = safeRealpath(root);
  if (realRoot === undefined) throw new Error(`repository path ${root} does not exist`);
  const some = opts.clusters !== undefined && opts.clusters.length > 0;
  // A chunk of a fleet loaded chunk by chunk looks up its own folders: the run's index listed clusters/ once.
  const listing =
    some && opts.namespaceClaims ? namedClusterFolders(realRoot, opts.clusters!) : listClusterFolders(realRoot);
  const diagnostics: Diagnostic[] = [...listing.diagnostics];
  let names = listing.names;
  if (some) {
    const wanted = new Set(opts.clusters);
    const found = new Set(names);
    for (const w of [...wanted].sort()) {
      if (!found.has(w))
        diagnostics.push(
          fileDiagnostic(`${CLUSTERS_DIR}/${w}`, "error", "unknown-cluster", `no cluster folder ${CLUSTERS_DIR}/${w}`),
        );
    }
    names = names.filter((n) => wanted.has(n));
  }
  const detail = opts.detail ?? "full";
  // The fleet policy bounds every cluster; a broken one blocks them all (its bounds could not be enforced).
  const loadedPolicy = loadPolicy(realRoot);
  diagnostics.push(...loadedPolicy.diagnostics);
  const policy = loadedPolicy.broken || loadedPolicy.policy ? loadedPolicy : undefined;
  const jobs = Math.max(1, opts.jobs ?? defaultJobs());
  // A cache folder others may write (or a symlink) is not used: the run goes on without it, saying why.
  let cacheDir = opts.cacheDir;
  const opened = cacheDir === undefined ? undefined : openCacheDir(cacheDir);
  if (opened && "problem" in opened) {
    diagnostics.push(
      fileDiagnostic(cacheDir!, "warning", "cache-refused", `${opened.problem}; validating without a cache`),
    );
    cacheDir = undefined;
  }
  const known = opts.validated
    ? { shared: sharedInputs(realRoot), validated: opts.validated === true ? new Map() : opts.validated }
    : undefined;
  const clusters = (
    await validateFolders(realRoot, names, {
      jobs,
      detail,
      cacheDir,
      policy,
      ...(opts.bases ? { bases: opts.bases } : {}),
      ...(known ? { known } : {}),
    })
  ).results;
  if (cacheDir !== undefined) pruneCache(cacheDir);
  crossClusterRules(realRoot, clusters, opts.namespaceClaims);
  hostNamespaceRules(realRoot, clusters, loadedPolicy.policy?.hostNamespaces?.pattern);
  if (opts.hostClaims) claimConflicts(realRoot, clusters);
  const fleet = loadFleetBase(realRoot);
  diagnostics.push(...fleet.diagnostics);
  // fleet/rollout.yaml (progressive rollouts of the base): checked here, read by the reconciler (src/rollout/).
  diagnostics.push(...loadRollout(realRoot).diagnostics);
  for (const c of clusters) diagnostics.push(...c.diagnostics.filter((d) => !isFleetFile(d.file)));
  diagnostics.push(...onceForTheFleet(clusters));
  // A message may quote a value: no credential recognisable by its shape (a URL's password, a token) leaves the
  // validator, in any output format, whether listed for the repository or under its cluster.
  for (const d of [...diagnostics, ...clusters.flatMap((c) => c.diagnostics)])
    d.message = maskShapedCredentials(d.message);
  diagnostics.sort(compareDiagnostics);
  return { root: realRoot, clusters, diagnostics };
}

const isFleetFile = (file: string) => file.startsWith(`${FLEET_DIR}/`);

/**
 * A base file's problem is reported once for the repository, however many clusters it reaches, naming them (each
 * cluster's own result keeps it, so that cluster is invalid and says why).
 */
function onceForTheFleet(clusters: readonly ClusterResult[]): Diagnostic[] {
  const reached = new Map<string, { d: Diagnostic; clusters: string[] }>();
  for (const c of clusters) {
    for (const d of c.diagnostics) {
      if (!isFleetFile(d.file)) continue;
      const key = JSON.stringify([d.file, d.line, d.col, d.severity, d.code, d.message]);
      const seen = reached.get(key);
      if (seen) seen.clusters.push(c.name);
      else reached.set(key, { d, clusters: [c.name] });
    }
  }
  return [...reached.values()].map(({ d, clusters: names }) => ({
    ...d,
    message:
      `${d.message} (reaches ${names.length} cluster${names.length === 1 ? "" : "s"}: ` +
      `${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""})`,
  }));
}

/**
 * Two clusters in one host namespace would overwrite each other's control plane: both are errors (the repository alone
 * cannot tell which came first); a command that sees the host admits the one whose record holds the namespace there.
 * `claims` adds the valid clusters of the fleet outside this load (a chunk of a streamed fleet), by namespace.
 */
function crossClusterRules(
  realRoot: string,
  clusters: ClusterResult[],
  claims?: ReadonlyMap<string, readonly string[]>,
): void {
  const byNamespace = new Map<string, ClusterResult[]>();
  for (const c of clusters) {
    const ns = c.valid ? c.settings?.namespace : undefined;
    if (ns !== undefined) byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), c]);
  }
  for (const [ns, group] of byNamespace) {
    const here = new Set(group.map((c) => c.name));
    const outside = (claims?.get(ns) ?? []).filter((n) => !here.has(n));
    if (group.length + outside.length < 2) continue;
    for (const c of group) {
      const others = [...group.filter((o) => o !== c).map((o) => o.name), ...outside].sort().join(", ");
      c.diagnostics.push(
        namespaceDiagnostic(
          realRoot,
          c,
          NAMESPACE_CONFLICT,
          `host namespace "${ns}" is also used by cluster ${others}: each cluster needs its own namespace`,
        ),
      );
      if (c.spec) c.contested = c.spec;
      delete c.spec;
      c.valid = false;
    }
  }
}

/** The specs of the valid clusters, by name. */
export function validSpecs(v: RepoValidation): ClusterSpec[] {
  return v.clusters.flatMap((c) => (c.spec ? [c.spec] : []));
}
