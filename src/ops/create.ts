// `vc create`: a new cluster folder (values.yaml, cluster.yaml) committed on its own branch, ready for a pull request.
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
}

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A commit author: git config user.name / user.email, else vc. */
async function author(dir: string): Promise<{ name: string; email: string }> {
  const name = (await git.getConfig({ fs, dir, path: "user.name" }).catch(() => undefined)) as string | undefined;
  const email = (await git.getConfig({ fs, dir, path: "user.email" }).catch(() => undefined)) as string | undefined;
  return { name: name ?? "vc", email: email ?? "vc@localhost" };
}

/** Other clusters of the repository already living in that host namespace (as the validator reads their cluster.yaml). */
async function namespaceUsers(root: string, namespace: string): Promise<string[]> {
  if (!existsSync(join(root, CLUSTERS_DIR))) return [];
  const { clusters } = await loadAndValidate(root);
  return clusters.filter((c) => (c.settings?.namespace ?? defaultHostNamespace(c.name)) === namespace).map((c) => c.name);
}

export async function createCluster(o: CreateOptions): Promise<CreateResult> {
  checkClusterName(o.name);
  if (!LABEL.test(o.namespace)) throw new CreateError(`invalid namespace "${o.namespace}": a DNS-1123 label (lower-case letters, digits, "-", at most 63 characters)`);
  const reserved = reservedNamespaceRule(o.namespace);
  if (reserved?.severity === "error") throw new CreateError(reserved.message);
  let root: string;
  try {
    root = await git.findRoot({ fs, filepath: resolve(o.repo) });
  } catch {
    throw new CreateError(`${resolve(o.repo)} is not inside a git repository: vc create commits the new folder on a branch`);
  }
  let text: string;
  try {
    text = readFileSync(o.valuesFile, "utf8");
  } catch (err) {
    throw new CreateError(`cannot read the values file ${o.valuesFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const diagnostics = validateValuesDocument(text, o.valuesFile);
  if (hasErrors(diagnostics)) throw new CreateError(`${o.valuesFile} is not a valid values file; nothing was written`, diagnostics);

  const dir = `${CLUSTERS_DIR}/${o.name}`;
  if (existsSync(join(root, dir))) throw new CreateError(`${dir} already exists: choose another name (vc list shows the clusters)`);
  const sharing = await namespaceUsers(root, o.namespace);
  if (sharing.length) throw new CreateError(`namespace ${o.namespace} is already the host namespace of ${sharing.join(", ")}: choose another (-n)`);
  const branch = o.branch ?? `create/${o.name}`;
  if ((await git.listBranches({ fs, dir: root })).includes(branch)) throw new CreateError(`branch ${branch} already exists: delete it or pass --branch`);
  const staged = (await git.statusMatrix({ fs, dir: root })).filter(([, head, , stage]) => !((head === 1 && stage === 1) || (head === 0 && stage === 0)));
  if (staged.length) {
    throw new CreateError(`the git index has staged changes (${staged.slice(0, 3).map((r) => r[0]).join(", ")}${staged.length > 3 ? ", ..." : ""}): commit or unstage them first, so the new branch holds only the new cluster`);
  }

  await git.branch({ fs, dir: root, ref: branch, checkout: true });
  mkdirSync(join(root, dir), { recursive: true });
  const files = [`${dir}/${VALUES_FILE}`, `${dir}/${CLUSTER_FILE}`];
  writeFileSync(join(root, files[0]!), text.endsWith("\n") ? text : `${text}\n`);
  writeFileSync(join(root, files[1]!), `# Where the virtual cluster ${o.name} lives on the host and how vc reconciles it.\nnamespace: ${o.namespace}\n`);
  for (const f of files) await git.add({ fs, dir: root, filepath: f });
  const commit = await git.commit({ fs, dir: root, message: `Add virtual cluster ${o.name} (namespace ${o.namespace})\n\nCreated with vc create from ${o.valuesFile}.\n`, author: await author(root) });
  if (reserved) diagnostics.push({ file: files[1]!, line: 2, col: 1, severity: reserved.severity, code: "reserved-namespace", message: reserved.message });
  return { branch, commit, files, diagnostics };
}
