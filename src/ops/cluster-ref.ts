// Which host namespace a virtual cluster lives in: --namespace, else its cluster.yaml, else vc-<name>.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { defaultHostNamespace } from "../model/cluster.js";

const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Checks a virtual cluster name (a DNS-1123 label) and returns it. */
export function checkClusterName(name: string): string {
  if (!NAME.test(name)) throw new Error(`invalid virtual cluster name "${name}": use lower-case letters, digits and "-", at most 63 characters`);
  return name;
}

/** The host namespace of a cluster: explicit, else `namespace` from `<repo>/clusters/<name>/cluster.yaml`, else `vc-<name>`. */
export function hostNamespaceOf(name: string, explicit?: string, repo = process.cwd()): string {
  if (explicit) return explicit;
  const file = join(repo, "clusters", name, "cluster.yaml");
  if (existsSync(file)) {
    try {
      const doc = load(readFileSync(file, "utf8"), { maxAliases: 100 }) as { namespace?: unknown } | null;
      if (doc && typeof doc.namespace === "string" && doc.namespace !== "") return doc.namespace;
    } catch {
      // an invalid cluster.yaml is `vc validate`'s business; fall back to the default
    }
  }
  return defaultHostNamespace(name);
}

/** The host secret holding the virtual cluster's kubeconfig (key `config`). */
export function kubeconfigSecretName(name: string): string {
  return `vc-${name}`;
}
