// A local copy of a remote repository: clone once, then fetch; the work tree is checked out at the fetched commit.
import fs from "node:fs";
import { join } from "node:path";
import git from "isomorphic-git";
import { DEFAULT_GIT_IDLE_MS, GitStalledError, progressTimedHttp, type ProgressTimedHttp } from "./http.js";
import type { GitCredential } from "./auth.js";
import { redactUrl, splitUrlCredential } from "./auth.js";
import { changedPaths } from "./changes.js";
import { materializeAll, materializePaths } from "./worktree.js";

export interface MirrorOptions {
  url: string;
  /** Local folder: work tree with `.git` inside; created on first sync. */
  dir: string;
  /** Branch or tag to follow; default `main`. */
  ref?: string;
  credential?: GitCredential;
  /** How long a request may go without a byte from the server (default DEFAULT_GIT_IDLE_MS); no total limit. */
  idleTimeoutMs?: number;
}

export interface SyncResult {
  /** The commit now checked out. */
  commit: string;
  /** The commit checked out before this sync (undefined on the first clone). */
  previous?: string;
  /** True when the checked-out commit changed. */
  changed: boolean;
  /** True when this sync cloned (first run). */
  cloned: boolean;
}

/** Raised when the remote cannot be reached or refuses us; the message never carries credentials. */
export class GitRemoteError extends Error {
  constructor(
    message: string,
    readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** File in `.git` naming the commit whose files are in the work tree (absent while they are being written). */
const CHECKOUT_MARKER = "vc-checkout";

export class GitMirror {
  readonly url: string;
  readonly dir: string;
  readonly ref: string;
  readonly #credential?: GitCredential;
  readonly cache: object = {};
  #current?: string;
  readonly #http: ProgressTimedHttp;

  constructor(opts: MirrorOptions) {
    const { url, credential } = splitUrlCredential(opts.url);
    this.url = url;
    this.dir = opts.dir;
    this.ref = opts.ref ?? "main";
    this.#credential = opts.credential ?? credential;
    this.#http = progressTimedHttp(opts.idleTimeoutMs ?? DEFAULT_GIT_IDLE_MS);
  }

  /** The commit currently checked out, if any. */
  get commit(): string | undefined {
    return this.#current;
  }

  /** Clones on first use, fetches afterwards, and checks out the remote's commit (force-pushes included). */
  async sync(): Promise<SyncResult> {
    const headers = this.#credential?.headers() ?? {};
    const previous = this.#current ?? (await this.#localHead());
    const cloned = !fs.existsSync(join(this.dir, ".git"));
    let fetched: string | null | undefined;
    const cannot = (why: unknown) =>
      new GitRemoteError(`cannot fetch ${this.ref} from ${redactUrl(this.url)}: ${describeGitError(why)}`, why);
    this.#http.stalled = undefined;
    try {
      if (cloned) {
        fs.mkdirSync(this.dir, { recursive: true });
        await git.init({ fs, dir: this.dir, defaultBranch: "vc-work" });
      }
      // Also over a copy an older vc made with the credentials in the URL: only the URL without them is stored.
      if (cloned || (await git.getConfig({ fs, dir: this.dir, path: "remote.origin.url" })) !== this.url) {
        await git.addRemote({ fs, dir: this.dir, remote: "origin", url: this.url, force: true });
      }
      const res = await git.fetch({
        fs,
        http: this.#http,
        dir: this.dir,
        remote: "origin",
        ref: this.ref,
        singleBranch: true,
        tags: false,
        headers,
        cache: this.cache,
      });
      fetched = res.fetchHead;
    } catch (err) {
      throw cannot(this.#http.stalled ?? err);
    }
    // isomorphic-git reads a body that failed as one that ended (no refs, a short pack): a stall is the true cause.
    if (this.#http.stalled) throw cannot(this.#http.stalled);
    if (!fetched) throw new GitRemoteError(`${redactUrl(this.url)} has no branch or tag "${this.ref}"`);
    const commit = await this.#peel(fetched);
    if (commit !== previous) await this.#checkout(previous, commit);
    this.#current = commit;
    return { commit, previous, changed: commit !== previous, cloned };
  }

  /**
   * Writes only the files that changed since `previous` (a full rewrite when it is unknown); isomorphic-git's own
   * checkout scans and indexes the whole tree, seconds for a fleet of 20,000 files. The checked-out commit is
   * recorded in `.git/vc-checkout` once the files are in place, so a restart resumes from it.
   */
  async #checkout(previous: string | undefined, commit: string): Promise<void> {
    let paths: string[] | undefined;
    if (previous) {
      try {
        paths = await changedPaths({ dir: this.dir, from: previous, to: commit, cache: this.cache });
      } catch {
        paths = undefined;
      }
    }
    const marker = join(this.dir, ".git", CHECKOUT_MARKER);
    fs.rmSync(marker, { force: true });
    if (paths) await materializePaths({ dir: this.dir, commit, paths, cache: this.cache });
    else await materializeAll({ dir: this.dir, commit, cache: this.cache });
    fs.writeFileSync(marker, `${commit}\n`);
  }

  async #localHead(): Promise<string | undefined> {
    try {
      const text = fs.readFileSync(join(this.dir, ".git", CHECKOUT_MARKER), "utf8").trim();
      return /^[0-9a-f]{40}$/.test(text) ? text : undefined;
    } catch {
      return undefined;
    }
  }

  /** An annotated tag points to a tag object: follow it to the commit. */
  async #peel(oid: string): Promise<string> {
    for (let i = 0; i < 10; i++) {
      const { type, object } = await git.readObject({ fs, dir: this.dir, oid, format: "parsed", cache: this.cache });
      if (type !== "tag") return oid;
      oid = (object as { object: string }).object;
    }
    return oid;
  }
}

/** A short reason for a failed git request, without URLs that could carry credentials. */
function describeGitError(err: unknown): string {
  if (err instanceof GitStalledError) return err.message;
  const e = err as { code?: string; message?: string; data?: { statusCode?: number; statusMessage?: string } };
  if (e?.data?.statusCode) return `HTTP ${e.data.statusCode}${e.data.statusMessage ? ` ${e.data.statusMessage}` : ""}`;
  const message = redactUrl(String(e?.message ?? err)).split("\n")[0]!;
  // A system error's code with what Node says of it: "ECONNRESET: socket hang up" (a close before any answer) and a
  // reset by the peer read apart.
  if (e?.code && /^E[A-Z]+$/.test(e.code)) return message && message !== e.code ? `${e.code} (${message})` : e.code;
  return message;
}
