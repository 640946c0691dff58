// Where the repository comes from: a remote git repository (mirrored, polled, webhook) or a local folder (watched).
import { watch as chokidarWatch } from "chokidar";
import fs from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import git from "isomorphic-git";
import { changedPaths } from "../git/changes.js";
import { GitMirror } from "../git/mirror.js";
import type { GitCredential } from "../git/auth.js";
import { redactUrl } from "../git/auth.js";
import { CLUSTERS_DIR } from "./affected.js";
import { watchTop } from "./top-watch.js";

export interface Snapshot {
  /** Folder holding the repository content at `revision` (the one that holds `clusters/`). */
  root: string;
  /** Commit SHA, or `local` for a folder outside git. */
  revision: string;
}

export interface Source {
  readonly description: string;
  /** Brings the content up to date (fetch and checkout for a remote). Remote failures throw GitRemoteError. */
  sync(): Promise<Snapshot>;
  /** Repository paths (relative to `root`) changed between two revisions; undefined when it cannot tell. */
  changes(from: string, to: string): Promise<string[] | undefined>;
  /** Git directory for logs (`vc history`), when the content is in git. */
  readonly gitDir: string | undefined;
  /** Starts watching a local folder: calls back with changed paths after a quiet period. Returns a stop function. */
  watch?(onChange: (paths: string[]) => void, debounceMs?: number): Promise<() => Promise<void>>;
  /** How watch() follows the folder at its size (WatchMode). */
  watchMode?(): Promise<WatchMode>;
}

/**
 * How a folder is watched, bounded at any fleet size (chokidar keeps a watch and a stat per path it follows):
 * - "files": up to WATCH_ALL_FILES_MAX cluster folders, every file under clusters/ (edit, save, see it applied).
 * - "git": a larger fleet in a git checkout: HEAD, packed-refs and refs/heads only; a commit or checkout triggers a
 *   pass that takes the changed paths from git (uncommitted edits wait for the next resync).
 * - "top": a larger fleet outside git: clusters/ and each folder's own entries (cluster.yaml, values files; a change
 *   deeper, as under mesh/, waits for the next resync), with one fs.watch per folder (top-watch.ts). Keep a large
 *   fleet in git.
 */
export type WatchMode = "git" | "files" | "top";

/** Cluster folders up to which a folder outside git is watched file by file. */
export const WATCH_ALL_FILES_MAX = 1000;

export class GitSource implements Source {
  readonly mirror: GitMirror;
  constructor(opts: { url: string; dir: string; ref?: string; credential?: GitCredential }) {
    this.mirror = new GitMirror(opts);
  }
  get description(): string {
    return `git ${redactUrl(this.mirror.url)} (${this.mirror.ref})`;
  }
  get gitDir(): string {
    return this.mirror.dir;
  }
  async sync(): Promise<Snapshot> {
    const r = await this.mirror.sync();
    return { root: this.mirror.dir, revision: r.commit };
  }
  async changes(from: string, to: string): Promise<string[] | undefined> {
    if (from === to) return [];
    try {
      return await changedPaths({ dir: this.mirror.dir, from, to, cache: this.mirror.cache });
    } catch {
      return undefined; // `from` no longer known (e.g. a fresh mirror after a restart): reconcile everything
    }
  }
}

export class FolderSource implements Source {
  readonly root: string;
  #gitRoot?: string | null;
  constructor(path: string) {
    this.root = resolve(path);
  }
  get description(): string {
    return `folder ${this.root}`;
  }
  get gitDir(): string | undefined {
    return this.#gitRoot ?? undefined;
  }
  async #findGitRoot(): Promise<string | null> {
    if (this.#gitRoot === undefined) {
      try {
        this.#gitRoot = await git.findRoot({ fs, filepath: this.root });
      } catch {
        this.#gitRoot = null;
      }
    }
    return this.#gitRoot;
  }
  async sync(): Promise<Snapshot> {
    if (!fs.existsSync(this.root)) throw new Error(`folder ${this.root} does not exist`);
    const gitRoot = await this.#findGitRoot();
    let revision = "local";
    if (gitRoot) {
      try {
        revision = await git.resolveRef({ fs, dir: gitRoot, ref: "HEAD" });
      } catch {
        revision = "local"; // a repository without commits
      }
    }
    return { root: this.root, revision };
  }
  async changes(from: string, to: string): Promise<string[] | undefined> {
    const gitRoot = await this.#findGitRoot();
    if (!gitRoot || from === "local" || to === "local") return from === to ? [] : undefined;
    if (from === to) return [];
    try {
      const prefix = relative(gitRoot, this.root).split(sep).join("/");
      const paths = await changedPaths({ dir: gitRoot, from, to });
      if (!prefix) return paths;
      return paths.filter((p) => p.startsWith(`${prefix}/`)).map((p) => p.slice(prefix.length + 1));
    } catch {
      return undefined;
    }
  }
  /**
   * The watch mode for this folder (WatchMode), from whether it is a git checkout and how many cluster folders it has.
   */
  async watchMode(): Promise<WatchMode> {
    let folders = 0;
    try {
      folders = fs.readdirSync(resolve(this.root, CLUSTERS_DIR)).length;
    } catch {
      folders = 0;
    }
    if (folders <= WATCH_ALL_FILES_MAX) return "files";
    const gitRoot = await this.#findGitRoot();
    return gitRoot && fs.statSync(join(gitRoot, ".git"), { throwIfNoEntry: false })?.isDirectory() ? "git" : "top";
  }

  /**
   * Watches what the mode says (chokidar 5 takes no globs: filtering is done with `ignored`; "top" is top-watch.ts),
   * debounced. The paths reported are repository paths (a cluster folder itself as `clusters/<name>/`); in "git" mode
   * none (the pass asks git what the new commit changed).
   */
  async watch(onChange: (paths: string[]) => void, debounceMs = 300, mode?: WatchMode): Promise<() => Promise<void>> {
    const chosen = mode ?? (await this.watchMode());
    const gitDir = chosen === "git" ? join((await this.#findGitRoot())!, ".git") : undefined;
    const base = resolve(this.root, CLUSTERS_DIR);
    const pending = new Set<string>();
    let timer: NodeJS.Timeout | undefined;
    const note = (p: string): void => {
      if (!gitDir) pending.add(relative(this.root, p).split(sep).join("/") + (p.endsWith(sep) ? "/" : ""));
      clearTimeout(timer);
      timer = setTimeout(() => {
        const paths = [...pending].sort();
        pending.clear();
        onChange(paths);
      }, debounceMs);
    };
    if (chosen === "top") {
      // A large fleet: one fs.watch per cluster folder (top-watch.ts), not chokidar's watcher and stat per path.
      const top = watchTop(base, note);
      return async () => {
        clearTimeout(timer);
        top.close();
      };
    }
    const watcher = gitDir
      ? chokidarWatch(gitDir, {
          ignoreInitial: true,
          awaitWriteFinish: false,
          ignored: (p: string) => !isRefPath(relative(gitDir, p).split(sep)),
        })
      : chokidarWatch(base, {
          ignoreInitial: true,
          ignored: (p: string) => p.split(sep).some((part) => part === ".git" || part === "node_modules"),
          awaitWriteFinish: false,
        });
    for (const ev of ["add", "change", "unlink", "addDir", "unlinkDir"] as const) watcher.on(ev, note);
    await new Promise<void>((r) => watcher.once("ready", () => r()));
    return async () => {
      clearTimeout(timer);
      await watcher.close();
    };
  }
}

/**
 * Inside a git directory: the paths a commit or checkout changes (HEAD, packed-refs, refs/heads/**), and the folders
 * leading to them.
 */
function isRefPath(parts: string[]): boolean {
  const [top, second] = parts;
  return (
    top === "" ||
    top === "HEAD" ||
    top === "packed-refs" ||
    (top === "refs" && (second === undefined || second === "heads"))
  );
}

/** A URL (http, https, or git@-less ssh is not supported) is a remote; anything else is a local folder. */
export function isRemote(repo: string): boolean {
  return /^https?:\/\//i.test(repo);
}
