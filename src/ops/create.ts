// `vc create`: a new cluster folder (values.yaml, cluster.yaml) committed on its own branch, ready for a pull request,
// without checking that branch out (the user's branch, index and work tree are left as they were).
import fs, { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import git from "isomorphic-git";
import type { Diagnostic } from "../model/diagnostic.js";
import { hasErrors } from "../model/diagnostic.js";
import { CLUSTERS_DIR, CLUSTER_FILE, VALUES_FILE } from "../repo/layout.js";
import { validateValuesDocument } from "../validate/values.js";
import { defaultHostNamespace } from "../model/cluster.js";
import { loadAndValidate } from "../validate/index.js";
import { reservedNamespaceRule } from "../validate/cluster.js";
import { checkClusterName } from "./cluster-ref.js";

export class CreateError extends Error {
  constructor(
    message: string,
    readonly diagnostics: Diagnostic[] = [],
  ) {
    super(message);
  }
}

export interface CreateOptions {
  /** Repository root (a git work tree holding, or to hold, clusters/). */
  repo: string;
  name: string;
  namespace: string;
  /** The values file to copy into the folder. */
  valuesFile: string;
  /** Default `create/<name>`. */
  branch?: string;
}

export interface CreateResult {
  branch: string;
  commit: string;
  files: string[];
  /** Warnings of the values check (errors stop the command). */
  diagnostics: Diagnostic[];
  /** The repository had no commit: the branch starts from nothing. */
  unborn?: boolean;
}

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A commit author: git config user.name / user.email, else vc. */
async function author(dir: string): Promise<{ name: string; email: string }> {
  const name = (await git.getConfig({ fs, dir, path: "user.name" }).catch(() => undefined)) as string | undefined;
  const email = (await git.getConfig({ fs, dir, path: "user.email" }).catch(() => undefined)) as string | undefined;
  return { name: name ?? "vc", email: email ?? "vc@localhost" };
}

/**
 * Other clusters of the repository already living in that host namespace (as the validator reads their cluster.yaml).
 */
async function namespaceUsers(root: string, namespace: string): Promise<string[]> {
  if (!existsSync(join(root, CLUSTERS_DIR))) return [];
  const { clusters } = await loadAndValidate(root);
  return clusters
    .filter((c) => (c.settings?.namespace ?? defaultHostNamespace(c.name)) === namespace)
    .map((c) => c.name);
}

export async function createCluster(o: CreateOptions): Promise<CreateResult> {
  checkClusterName(o.name);
  if (!LABEL.test(o.namespace))
    throw new CreateError(
      `invalid namespace "${o.namespace}": a DNS-1123 label (lower-case letters, digits, "-", at most 63 characters)`,
    );
  const reserved = reservedNamespaceRule(o.namespace);
  if (reserved?.severity === "error") throw new CreateError(reserved.message);
  let root: string;
  try {
    root = await git.findRoot({ fs, filepath: resolve(o.repo) });
  } catch {
    throw new CreateError(
      `${resolve(o.repo)} is not inside a git repository: vc create commits the new folder on a branch`,
    );
  }
  let text: string;
  try {
    text = readFileSync(o.valuesFile, "utf8");
  } catch (err) {
    throw new CreateError(
      `cannot read the values file ${o.valuesFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const diagnostics = validateValuesDocument(text, o.valuesFile);
  if (hasErrors(diagnostics))
    throw new CreateError(`${o.valuesFile} is not a valid values file; nothing was written`, diagnostics);

  const dir = `${CLUSTERS_DIR}/${o.name}`;
  if (existsSync(join(root, dir)))
    throw new CreateError(`${dir} already exists: choose another name (vc list shows the clusters)`);
  const sharing = await namespaceUsers(root, o.namespace);
  if (sharing.length)
    throw new CreateError(
      `namespace ${o.namespace} is already the host namespace of ${sharing.join(", ")}: choose another (-n)`,
    );
  const branch = o.branch ?? `create/${o.name}`;
  if ((await git.listBranches({ fs, dir: root })).includes(branch))
    throw new CreateError(`branch ${branch} already exists: delete it or pass --branch`);
  // The branch is made and committed to without checking it out: the user's branch, index and work tree stay as they
  // were.
  const head = await git.resolveRef({ fs, dir: root, ref: "HEAD" }).catch(() => undefined);
  const files = [`${dir}/${VALUES_FILE}`, `${dir}/${CLUSTER_FILE}`];
  const contents = [
    text.endsWith("\n") ? text : `${text}\n`,
    `# Where the virtual cluster ${o.name} lives on the host and how vc reconciles it.\nnamespace: ${o.namespace}\n`,
  ];
  const blobs = await Promise.all(contents.map((c) => git.writeBlob({ fs, dir: root, blob: Buffer.from(c, "utf8") })));
  const folder = await git.writeTree({
    fs,
    dir: root,
    tree: [VALUES_FILE, CLUSTER_FILE]
      .map((path, i) => ({ mode: "100644", path, oid: blobs[i]!, type: "blob" as const }))
      .sort(byPath),
  });
  const baseTree = head ? (await git.readCommit({ fs, dir: root, oid: head })).commit.tree : undefined;
  const tree = await withEntry(root, baseTree, [CLUSTERS_DIR, o.name], folder);
  const commit = await git.commit({
    fs,
    dir: root,
    ref: `refs/heads/${branch}`,
    parent: head ? [head] : [],
    tree,
    message:
      `Add virtual cluster ${o.name} (namespace ${o.namespace})\n\nCreated with vc create from ` + `${o.valuesFile}.\n`,
    author: await author(root),
  });
  if (reserved)
    diagnostics.push({
      file: files[1]!,
      line: 2,
      col: 1,
      severity: reserved.severity,
      code: "reserved-namespace",
      message: reserved.message,
    });
  return { branch, commit, files, diagnostics, ...(head ? {} : { unborn: true }) };
}

type TreeEntry = { mode: string; path: string; oid: string; type: "blob" | "tree" | "commit" };
const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** The tree `base` with the tree `oid` placed at `path` (folders created as needed); returns the new tree's oid. */
async function withEntry(
  root: string,
  base: string | undefined,
  path: readonly string[],
  oid: string,
): Promise<string> {
  const entries: TreeEntry[] = base ? ((await git.readTree({ fs, dir: root, oid: base })).tree as TreeEntry[]) : [];
  const [first, ...rest] = path as [string, ...string[]];
  const existing = entries.find((e) => e.path === first);
  const child = rest.length
    ? await withEntry(root, existing?.type === "tree" ? existing.oid : undefined, rest, oid)
    : oid;
  const next = [
    ...entries.filter((e) => e.path !== first),
    { mode: "040000", path: first, oid: child, type: "tree" as const },
  ];
  return git.writeTree({ fs, dir: root, tree: next.sort(byPath) });
}

/**
 * Writes the files of `commit` that `vc apply` reads for one cluster (the whole tree, as a checkout would) into `into`,
 * without touching the user's work tree: --apply applies what was committed.
 */
export async function exportCommit(repo: string, commit: string, into: string): Promise<void> {
  const root = await git.findRoot({ fs, filepath: resolve(repo) });
  await git.walk({
    fs,
    dir: root,
    trees: [git.TREE({ ref: commit })],
    map: async (filepath, [entry]) => {
      if (!entry || filepath === ".") return true;
      const type = await entry.type();
      const target = join(into, filepath);
      if (type === "tree") mkdirSync(target, { recursive: true });
      else if (type === "blob") writeFileSync(target, (await entry.content()) ?? new Uint8Array());
      return true;
    },
  });
}
