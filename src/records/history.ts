// `vc history`: the git log of a cluster's folder joined with the reconciliations recorded in its status.
import fs from "node:fs";
import git from "isomorphic-git";
import { commitOf } from "../git/dirty.js";
import { folderLog, type FolderCommit } from "../git/log.js";
import type { ClusterStatus, Reconciliation } from "./status.js";

interface HistoryEntry extends FolderCommit {
  /** This folder commit is the one live on the target (its content was applied last). */
  live: boolean;
  /** Reconciliations whose revision had this folder commit as the cluster's content, newest first. */
  reconciliations: Reconciliation[];
}

export interface ClusterHistory {
  cluster: string;
  /** The revision applied last (may be a later commit touching other folders). */
  lastAppliedRevision?: string;
  entries: HistoryEntry[];
}

export interface HistoryOptions {
  /** Git directory (work tree with .git). */
  dir: string;
  /** Folder of the cluster relative to the git root, e.g. `clusters/alpha`. */
  path: string;
  ref?: string;
  limit?: number;
}

/**
 * Joins the folder's commits with the status: a reconciliation at revision R counts for the newest folder
 * commit reachable from R (a full resync records the repository tip, not the commit that changed the folder).
 */
export async function clusterHistory(
  cluster: string,
  status: ClusterStatus | undefined,
  opts: HistoryOptions,
): Promise<ClusterHistory> {
  const cache = {};
  const commits = await folderLog({ dir: opts.dir, path: opts.path, ref: opts.ref, limit: opts.limit, cache });
  const folderAt = new Map<string, string | undefined>();
  const resolveFolderCommit = async (recorded: string): Promise<string | undefined> => {
    // A run from a work tree that differed from its commit (`-dirty`) counts for that commit.
    const revision = commitOf(recorded);
    if (folderAt.has(revision)) return folderAt.get(revision);
    let found: string | undefined;
    if (commits.some((c) => c.commit === revision)) found = revision;
    else {
      try {
        await git.readCommit({ fs, dir: opts.dir, oid: revision, cache });
        found = (await folderLog({ dir: opts.dir, path: opts.path, ref: revision, limit: 1, cache }))[0]?.commit;
      } catch {
        found = undefined; // a revision this copy of the repository does not have (e.g. rewritten history)
      }
    }
    folderAt.set(revision, found);
    return found;
  };
  const byCommit = new Map<string, Reconciliation[]>();
  for (const r of status?.history ?? []) {
    const c = await resolveFolderCommit(r.revision);
    if (c) byCommit.set(c, [...(byCommit.get(c) ?? []), r]);
  }
  const liveCommit = status?.lastAppliedRevision ? await resolveFolderCommit(status.lastAppliedRevision) : undefined;
  return {
    cluster,
    lastAppliedRevision: status?.lastAppliedRevision,
    entries: commits.map((c) => ({
      ...c,
      live: c.commit === liveCommit,
      reconciliations: byCommit.get(c.commit) ?? [],
    })),
  };
}
