// Where the desired state comes from for `vc diff` / `vc apply`: a local folder, or a remote repository cloned with
// isomorphic-git.
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import { loadGitCredential, splitUrlCredential } from "../git/auth.js";
import { dirtyRevision, fleetDiffersFromHead } from "../git/dirty.js";
import { headCommit } from "../git/log.js";
import { GitMirror } from "../git/mirror.js";
import { findRepoRoot } from "../repo/layout.js";
import { noClustersMessage } from "../repo/fleet-folder.js";

export interface SourceOptions {
  /** A repository folder, `clusters/`, or a folder inside `clusters/<name>` (which also selects that cluster). */
  path?: string;
  /** A remote repository URL (HTTP(S)); cloned once into the cache folder, then fetched. */
  repo?: string;
  /** Branch or tag of `repo` (default main). */
  branch?: string;
  /** File with a token or `user:password` for `repo` (else VC_GIT_TOKEN / VC_GIT_USERNAME + VC_GIT_PASSWORD). */
  credentialsFile?: string;
  /** Where remote clones are kept (default $XDG_CACHE_HOME/vc/repos or ~/.cache/vc/repos). */
  cacheDir?: string;
  /**
   * A local folder's revision gets the `-dirty` marker when what vc reads differs from HEAD (git/dirty.ts): for records
   * of what was applied.
   */
  markDirty?: boolean;
}

export interface Source {
  /** The folder holding `clusters/`. */
  root: string;
  /** Commit SHA of the checked-out revision (`<sha>-dirty` with markDirty), or "local" for a folder outside git. */
  revision: string;
  /** The cluster a path inside `clusters/<name>` points at. */
  cluster?: string;
}

/** A source that cannot be read: a path without `clusters/`, an unreachable remote. */
export class SourceError extends Error {}

export async function resolveSource(opts: SourceOptions): Promise<Source> {
  if (opts.repo && opts.path) throw new SourceError("give either a PATH or --repo URL, not both");
  if (opts.repo) {
    const cache = opts.cacheDir ?? join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "vc", "repos");
    const dir = join(
      cache,
      createHash("sha256")
        .update(`${splitUrlCredential(opts.repo).url}\n${opts.branch ?? "main"}`)
        .digest("hex")
        .slice(0, 16),
    );
    const mirror = new GitMirror({
      url: opts.repo,
      dir,
      ref: opts.branch,
      credential: loadGitCredential({ file: opts.credentialsFile }),
    });
    try {
      const synced = await mirror.sync();
      return { root: dir, revision: synced.commit };
    } catch (err) {
      throw new SourceError((err as Error).message);
    }
  }
  const path = opts.path ?? ".";
  const found = findRepoRoot(path);
  if (!found) throw new SourceError(noClustersMessage(path));
  const head = await headCommit(found.root);
  const revision =
    head === undefined
      ? "local"
      : opts.markDirty && (await fleetDiffersFromHead(found.root))
        ? dirtyRevision(head)
        : head;
  return { root: found.root, revision, ...(found.cluster ? { cluster: found.cluster } : {}) };
}
