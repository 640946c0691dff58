// The commits that touched a folder of the repository, newest first: the audit trail `vc history` joins with status.
import fs from "node:fs";
import git from "isomorphic-git";

export interface FolderCommit {
  commit: string;
  /** First line of the message. */
  subject: string;
  author: string;
  /** ISO 8601 time of the commit. */
  time: string;
}

export interface FolderLogOptions {
  dir: string;
  /** Repository-relative folder (or file), e.g. `clusters/alpha`. */
  path: string;
  /** Commit or ref to start from; default HEAD. */
  ref?: string;
  /** At most this many commits. */
  limit?: number;
  cache?: object;
}

/** Commits reachable from `ref` whose tree changed `path`, newest first. */
export async function folderLog(opts: FolderLogOptions): Promise<FolderCommit[]> {
  let entries;
  try {
    // force: a folder removed since (a deleted cluster) still has its history, down to the commit that removed it.
    entries = await git.log({
      fs,
      dir: opts.dir,
      ref: opts.ref ?? "HEAD",
      filepath: opts.path,
      depth: opts.limit,
      force: true,
      cache: opts.cache ?? {},
    });
  } catch (err) {
    // isomorphic-git throws NotFoundError when the path never existed in the history
    if ((err as { code?: string }).code === "NotFoundError") return [];
    throw err;
  }
  return entries.map((e) => ({
    commit: e.oid,
    subject: e.commit.message.split("\n")[0]!,
    author: e.commit.author.name,
    time: new Date(e.commit.committer.timestamp * 1000).toISOString(),
  }));
}

/**
 * The commit HEAD points to in the git repository holding `dir` (also from a subfolder), or undefined outside git or
 * before a first commit.
 */
export async function headCommit(dir: string): Promise<string | undefined> {
  try {
    const top = await git.findRoot({ fs, filepath: dir });
    return await git.resolveRef({ fs, dir: top, ref: "HEAD" });
  } catch {
    return undefined;
  }
}

/**
 * The subject, author and time of each commit of `revisions` the repository holding `dir` has (`<sha>-dirty` read as
 * its commit), by the revision as given; revisions it does not have (or `local`) are left out.
 */
export async function commitsOf(dir: string, revisions: Iterable<string>): Promise<Map<string, FolderCommit>> {
  const out = new Map<string, FolderCommit>();
  let top: string;
  try {
    top = await git.findRoot({ fs, filepath: dir });
  } catch {
    return out;
  }
  const cache = {};
  for (const revision of new Set(revisions)) {
    const oid = revision.replace(/-dirty$/, "");
    if (!/^[0-9a-f]{40}$/.test(oid)) continue;
    try {
      const { commit } = await git.readCommit({ fs, dir: top, oid, cache });
      out.set(revision, {
        commit: oid,
        subject: commit.message.split("\n")[0]!,
        author: commit.author.name,
        time: new Date(commit.committer.timestamp * 1000).toISOString(),
      });
    } catch {
      // a revision this copy of the repository does not have
    }
  }
  return out;
}
