// A virtual cluster as the operations find it: its name checked, its repository folder validated, its host namespace.
import type { KubeObject } from "../kube/object.js";
import { defaultHostNamespace } from "../model/cluster.js";
import { renderCluster } from "../render/index.js";
import { formatDiagnostic, type Diagnostic } from "../model/diagnostic.js";
import type { Values } from "../model/values.js";
import { safeRealpath } from "../repo/read.js";
import { loadAndValidate } from "../validate/index.js";
import { clusterNameProblem } from "../validate/names.js";

/** Checks a virtual cluster name (the rule of `vc validate` for folder names) and returns it. */
export function checkClusterName(name: string): string {
  const problem = clusterNameProblem(name);
  if (problem) throw new Error(`invalid virtual cluster name "${name}": ${problem}`);
  return name;
}

export interface ClusterRef {
  name: string;
  /** `--namespace`, else the `namespace` of a valid cluster.yaml, else `vc-<name>`. */
  namespace: string;
  /** Whether the repository has the folder `clusters/<name>`. */
  found: boolean;
  /** The effective values, when every values file of the folder is valid. */
  values?: Values;
  /**
   * The host objects the folder renders, when the whole folder is valid (revision "doctor": only names and specs are
   * compared).
   */
  rendered?: KubeObject[];
  /** Why there are no values: no folder, or the first error of its values files. */
  valuesNote?: string;
  /** The errors of its values files, when they do not validate (vc doctor reports those it diagnoses). */
  valuesErrors?: Diagnostic[];
}

/**
 * Finds a cluster in the repository at `repo` through the validator (safe reads, layering, defaults), keeping
 * what a broken folder still tells: the operations diagnose clusters whose folder does not validate too.
 */
export async function findCluster(name: string, opts: { repo: string; namespace?: string }): Promise<ClusterRef> {
  checkClusterName(name);
  const missing = {
    name,
    namespace: opts.namespace ?? defaultHostNamespace(name),
    found: false,
    valuesNote: `no folder clusters/${name} under ${opts.repo}`,
  };
  if (safeRealpath(opts.repo) === undefined) return missing;
  const result = (await loadAndValidate(opts.repo, { clusters: [name] })).clusters[0];
  if (!result) return missing;
  const ref: ClusterRef = {
    name,
    namespace: opts.namespace ?? result.settings?.namespace ?? defaultHostNamespace(name),
    found: true,
  };
  if (result.values) ref.values = result.values;
  if (result.spec) {
    try {
      ref.rendered = renderCluster(result.spec, "doctor");
    } catch {
      // A folder that does not render (name collisions) has nothing to compare: vc validate says why.
    }
  } else {
    const errors = result.diagnostics.filter(
      (d) => d.severity === "error" && /(^|\/)values(\.[^/]*)?\.yaml$/.test(d.file),
    );
    const error = errors[0];
    if (errors.length > 0) ref.valuesErrors = errors;
    ref.valuesNote = error
      ? `${formatDiagnostic(error)} (run vc validate)`
      : "its values could not be read (run vc validate)";
  }
  return ref;
}

/** The host secret holding the virtual cluster's kubeconfig (key `config`). */
export function kubeconfigSecretName(name: string): string {
  return `vc-${name}`;
}
