// What `vc init` writes, as a pure function: the fleet templates filled in, vc's reconciler manifests and the CI
// identity.
import { ciReaderManifests } from "./ci-reader.js";

export interface FleetFile {
  /** Path relative to the fleet repository's root, with `/` separators. */
  path: string;
  content: string;
}

export interface ScaffoldParams {
  /**
   * npm package name and version of the vc that writes the fleet: the workflows, schema lines and package.json pin it.
   */
  packageName: string;
  version: string;
  /** The GitHub Action the workflows use, `owner/repo@ref`. */
  actionRef: string;
  /** Name of the example cluster (a valid cluster name). */
  cluster: string;
  /** The fleet repository as the reconciler fetches it (http(s) URL) and its branch. */
  repoUrl: string;
  branch: string;
  /** CODEOWNERS owners of the platform-owned files (`@org/team` or `@user`, space-separated). */
  owners: string;
}

export interface ScaffoldInputs {
  /** The template tree (templates/fleet/ of the package): relative path -> text. */
  templates: ReadonlyMap<string, string>;
  /** vc's reconciler manifests (deploy/reconciler/ of the package): file name -> text. */
  reconciler: ReadonlyMap<string, string>;
}

/** Namespace the reconciler and the CI identity live in (the reconciler manifests' own). */
const SYSTEM_NAMESPACE = "vc-system";

/** `dot-github/x` -> `.github/x`: npm leaves some dotfiles out of packages, so templates spell them `dot-`. */
function templateTarget(templatePath: string): string {
  return templatePath
    .split("/")
    .map((seg) => (seg.startsWith("dot-") ? `.${seg.slice(4)}` : seg))
    .join("/");
}

/** Replaces every `@@NAME@@`; a placeholder without a value is a bug in the templates, not a user error. */
function fillPlaceholders(text: string, values: Readonly<Record<string, string>>, where: string): string {
  return text.replace(/@@([A-Z_]+)@@/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`template ${where}: no value for @@${key}@@`);
    return value;
  });
}

/** Every file of a new fleet repository, sorted by path. */
export function scaffoldFleet(params: ScaffoldParams, inputs: ScaffoldInputs): FleetFile[] {
  const values: Record<string, string> = {
    VC_VERSION: params.version,
    PACKAGE: params.packageName,
    ACTION_REF: params.actionRef,
    CLUSTER: params.cluster,
    NAMESPACE: `vc-${params.cluster}`,
    REPO_URL: params.repoUrl,
    BRANCH: params.branch,
    OWNERS: params.owners,
  };
  const files: FleetFile[] = [];
  for (const [path, text] of inputs.templates) {
    files.push({
      path: fillPlaceholders(templateTarget(path), values, path),
      content: fillPlaceholders(text, values, path),
    });
  }
  const origin =
    `# Copied from vc ${params.version} (deploy/reconciler/) by vc init; deploy/kustomization.yaml ` +
    `points it at this repository.\n`;
  for (const [name, text] of inputs.reconciler)
    files.push({ path: `deploy/vc-reconciler/${name}`, content: origin + text });
  const rbac = inputs.reconciler.get("rbac.yaml");
  if (rbac === undefined) throw new Error("vc's deploy/reconciler/ has no rbac.yaml");
  files.push({ path: "deploy/ci-reader.yaml", content: ciReaderManifests(rbac, SYSTEM_NAMESPACE) });
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
