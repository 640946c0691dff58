// `vc init`: scaffolds a fleet repository from the templates and manifests shipped in the vc package; never overwrites.
import fs, { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import git from "isomorphic-git";
import { UserError, EXIT } from "../model/errors.js";
import { PACKAGE_ROOT, packageInfo } from "../model/package.js";
import { clusterNameProblem } from "../validate/names.js";
import { scaffoldFleet, type FleetFile } from "./scaffold.js";

/** The repository that publishes vc's GitHub Action (action.yml at its root), tagged `v<version>` per release. */
export const ACTION_REPOSITORY = "vc-project/vc";
export const DEFAULT_OWNERS = "@your-org/platform-team";
const PLACEHOLDER_REPO_URL = "https://github.com/your-org/fleet.git";

export interface InitOptions {
  /** Folder of the fleet repository (created when missing). */
  dir: string;
  cluster?: string;
  repoUrl?: string;
  branch?: string;
  owners?: string;
  actionRef?: string;
  dryRun?: boolean;
}

export interface InitResult {
  root: string;
  /** Paths written (or, with dryRun, that would be written), relative to root. */
  files: string[];
  written: boolean;
  /** Things the user should edit, e.g. placeholders used for lack of a value. */
  notes: string[];
  /** The git repository holding the fleet: made by vc init (`created`, with no commit) or the one it was given. */
  git: { root: string; created: boolean };
  /** The branch the reconciler follows (the new repository's first branch). */
  branch: string;
  /** The repository URL written into deploy/ (undefined when a placeholder was written). */
  repoUrl?: string;
}

/** Every file under `dir`, relative, with `/` separators. */
function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    out.set(relative(dir, full).split(sep).join("/"), readFileSync(full, "utf8"));
  }
  return out;
}

/**
 * An http(s) URL the reconciler can fetch, from a git remote URL (`git@host:org/repo.git` and `ssh://` become https).
 */
export function httpsRemote(url: string): string | undefined {
  const scp = /^[\w.-]+@([\w.-]+):(.+)$/.exec(url);
  if (scp) return `https://${scp[1]}/${scp[2]}`;
  const ssh = /^ssh:\/\/(?:[^@/]+@)?([\w.-]+)(?::\d+)?\/(.+)$/.exec(url);
  if (ssh) return `https://${ssh[1]}/${ssh[2]}`;
  if (/^https?:\/\//.test(url)) return url.replace(/^(https?:\/\/)[^@/]+@/, "$1");
  return undefined;
}

/** The root of the git repository holding `dir`, or undefined when there is none. */
async function gitRoot(dir: string): Promise<string | undefined> {
  try {
    return await git.findRoot({ fs, filepath: dir });
  } catch {
    return undefined;
  }
}

/** The `origin` remote of the git repository holding `dir`, as an https URL, if there is one. */
async function originUrl(dir: string): Promise<string | undefined> {
  try {
    const root = await git.findRoot({ fs, filepath: dir });
    const url = (await git.getConfig({ fs, dir: root, path: "remote.origin.url" })) as string | undefined;
    return url ? httpsRemote(url) : undefined;
  } catch {
    return undefined;
  }
}

function checkOptions(o: {
  cluster: string;
  repoUrl: string;
  branch: string;
  owners: string;
  actionRef: string;
}): void {
  const problem = clusterNameProblem(o.cluster);
  if (problem) throw new UserError(`invalid --cluster "${o.cluster}": ${problem}`, EXIT.invalid);
  if (!/^https?:\/\/[^\s"'\\@]+$/.test(o.repoUrl)) {
    throw new UserError(
      `invalid --repo-url "${o.repoUrl}": an http(s) URL of the fleet repository without credentials (the ` +
        `reconciler reads the token from a Secret)`,
      EXIT.invalid,
    );
  }
  if (!/^[A-Za-z0-9._/-]+$/.test(o.branch) || o.branch.startsWith("-"))
    throw new UserError(`invalid --branch "${o.branch}": a git branch name`, EXIT.invalid);
  if (!/^@[A-Za-z0-9_.\-/]+( @[A-Za-z0-9_.\-/]+)*$/.test(o.owners)) {
    throw new UserError(
      `invalid --owners "${o.owners}": GitHub owners such as @org/platform-team or @user, space-separated`,
      EXIT.invalid,
    );
  }
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+(\/[A-Za-z0-9_./-]+)?@[A-Za-z0-9_./-]+$/.test(o.actionRef)) {
    throw new UserError(
      `invalid --action-ref "${o.actionRef}": owner/repo@ref, e.g. ${ACTION_REPOSITORY}@v${packageInfo().version} ` +
        `or a commit SHA`,
      EXIT.invalid,
    );
  }
}

/** The files of a new fleet repository under `opts.dir`; writes them unless `dryRun`. Refuses when any exists. */
export async function initFleet(opts: InitOptions): Promise<InitResult> {
  const root = resolve(opts.dir);
  if (existsSync(root) && !statSync(root).isDirectory())
    throw new UserError(`${opts.dir} exists and is not a folder`, EXIT.invalid);
  const { name: packageName, version } = packageInfo();
  const notes: string[] = [];
  let repoUrl = opts.repoUrl ?? (existsSync(root) ? await originUrl(root) : undefined);
  if (!repoUrl) {
    repoUrl = PLACEHOLDER_REPO_URL;
    notes.push(
      `no --repo-url and no git remote "origin": set this repository's URL in deploy/kustomization.yaml (now ` +
        `${PLACEHOLDER_REPO_URL})`,
    );
  }
  const owners = opts.owners ?? DEFAULT_OWNERS;
  if (!opts.owners) notes.push(`no --owners: replace ${DEFAULT_OWNERS} in .github/CODEOWNERS with the platform team`);
  const params = {
    packageName,
    version,
    actionRef: opts.actionRef ?? `${ACTION_REPOSITORY}@v${version}`,
    cluster: opts.cluster ?? "example",
    repoUrl,
    branch: opts.branch ?? "main",
    owners,
  };
  checkOptions(params);
  const files = scaffoldFleet(params, {
    templates: readTree(join(PACKAGE_ROOT, "templates", "fleet")),
    reconciler: readTree(join(PACKAGE_ROOT, "deploy", "reconciler")),
  });
  const existing = files.filter((f) => pathTaken(join(root, f.path)));
  if (existing.length > 0) {
    throw new UserError(
      `refusing to overwrite ${existing.length} existing file${existing.length === 1 ? "" : "s"} in ${opts.dir}: ` +
        `${existing.map((f) => f.path).join(", ")}` +
        " (vc init only creates files; move them away or init another folder)",
      EXIT.invalid,
    );
  }
  // "Commit and push" needs a repository: the one holding the folder, else a new one on the followed branch. The first
  // commit is the user's (who commits, and what, is theirs to decide).
  let nearest = root;
  while (!existsSync(nearest) && dirname(nearest) !== nearest) nearest = dirname(nearest);
  const existingRepo = await gitRoot(nearest);
  if (!opts.dryRun) {
    writeFiles(root, files);
    if (!existingRepo) await git.init({ fs, dir: root, defaultBranch: params.branch });
  }
  return {
    root,
    files: files.map((f) => f.path),
    written: !opts.dryRun,
    notes,
    git: { root: existingRepo ?? root, created: !existingRepo },
    branch: params.branch,
    repoUrl: repoUrl === PLACEHOLDER_REPO_URL ? undefined : repoUrl,
  };
}

/** Anything at the path, a dangling symlink included. */
function pathTaken(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function writeFiles(root: string, files: readonly FleetFile[]): void {
  for (const f of files) {
    const target = join(root, f.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.content, { flag: "wx" });
  }
}
