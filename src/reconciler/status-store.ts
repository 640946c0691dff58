// Where cluster status lives: a ConfigMap `vc-status` in the host namespace (kube target) or a JSON file (dir target).
import { mkdir, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { KubeObject } from "../kube/object.js";
import { resourceFor } from "../kube/resources.js";
import { ANNOTATIONS, LABELS } from "../translate/keys.js";
import { KubeApiError, type KubeClient } from "../target/kube/client.js";
import { fromData, toData, type ClusterStatus } from "./status.js";

/** Annotation on the `vc-status` ConfigMap: while present, the reconciler skips the cluster; its value says who and why (suspend.ts). */
export const SUSPENDED_BY_ANNOTATION = ANNOTATIONS.suspendedBy;

/** Name of the status ConfigMap in each cluster's host namespace. */
export const STATUS_CONFIGMAP = "vc-status";
/** Label marking the status ConfigMap (value "true"); see LABELS.status. */
export const STATUS_LABEL = LABELS.status;
/** Folder of the status files inside a dir: target. */
export const STATUS_DIR = ".vc-status";

export interface StatusStore {
  read(cluster: string, hostNamespace: string): Promise<ClusterStatus | undefined>;
  /** Every cluster's status, sorted by cluster name. */
  list(): Promise<ClusterStatus[]>;
  /** Writes the status; `suspendedBy` is never written (it belongs to whoever suspended the cluster). */
  write(status: ClusterStatus): Promise<void>;
  /** Forgets a cluster whose folder was removed and whose objects were pruned. */
  remove(cluster: string, hostNamespace: string): Promise<void>;
}

function fromConfigMap(cm: KubeObject, cluster: string, hostNamespace: string): ClusterStatus | undefined {
  const s = fromData((cm.data as Record<string, string> | undefined) ?? {}, cluster, hostNamespace);
  if (s) {
    s.cluster = cluster;
    s.hostNamespace = hostNamespace;
  }
  const by = cm.metadata.annotations?.[SUSPENDED_BY_ANNOTATION];
  if (s && by) s.suspendedBy = by;
  // Whose it is: the ConfigMap's own label, as for the cluster.
  const owner = cm.metadata.labels?.[LABELS.owner];
  if (s) {
    if (owner) s.owner = owner;
    else delete s.owner;
  }
  return s;
}

/** The status ConfigMap of a cluster as vc writes it. */
export function statusConfigMap(status: ClusterStatus): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: STATUS_CONFIGMAP,
      namespace: status.hostNamespace,
      labels: { [LABELS.managedBy]: status.cluster, [STATUS_LABEL]: "true", ...(status.owner ? { [LABELS.owner]: status.owner } : {}) },
    },
    data: toData(status),
  };
}

export class KubeStatusStore implements StatusStore {
  constructor(private readonly client: KubeClient) {}

  async read(cluster: string, hostNamespace: string): Promise<ClusterStatus | undefined> {
    const cm = await this.client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: hostNamespace, name: STATUS_CONFIGMAP });
    if (!cm || cm.metadata.labels?.[LABELS.managedBy] !== cluster) return undefined;
    return fromConfigMap(cm, cluster, hostNamespace);
  }

  async list(): Promise<ClusterStatus[]> {
    const items = await this.client.list(resourceFor("v1", "ConfigMap")!, { labelSelector: `${STATUS_LABEL}=true` });
    return items
      .filter((cm) => cm.metadata.name === STATUS_CONFIGMAP)
      .map((cm) => fromConfigMap(cm, cm.metadata.labels?.[LABELS.managedBy] ?? "", cm.metadata.namespace ?? ""))
      // Whose status and where are the ConfigMap's own label and namespace, never what its data claims.
      .filter((s): s is ClusterStatus => s !== undefined && s.cluster !== "")
      .sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  }

  /** One server-side apply; when the host namespace does not exist yet (a cluster never applied), it is created first. */
  async write(status: ClusterStatus): Promise<void> {
    const cm = statusConfigMap(status);
    try {
      await this.client.apply(cm);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      await this.client.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: status.hostNamespace, labels: { [LABELS.managedBy]: status.cluster } },
      });
      await this.client.apply(cm);
    }
  }

  async remove(_cluster: string, hostNamespace: string): Promise<void> {
    await this.client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: hostNamespace, name: STATUS_CONFIGMAP });
  }
}

export class DirStatusStore implements StatusStore {
  readonly dir: string;
  constructor(targetDir: string) {
    this.dir = join(targetDir, STATUS_DIR);
  }

  async read(cluster: string): Promise<ClusterStatus | undefined> {
    try {
      const parsed = JSON.parse(await readFile(join(this.dir, `${cluster}.json`), "utf8")) as ClusterStatus;
      return { ...parsed, cluster: parsed.cluster ?? cluster, history: Array.isArray(parsed.history) ? parsed.history : [] };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  async list(): Promise<ClusterStatus[]> {
    let files: string[];
    try {
      files = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const out: ClusterStatus[] = [];
    for (const f of files.filter((f) => f.endsWith(".json")).sort()) {
      const s = await this.read(f.slice(0, -".json".length));
      if (s) out.push(s);
    }
    return out;
  }

  /** Written to a temporary file and renamed, so a reader never sees half a status. */
  async write(status: ClusterStatus): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = join(this.dir, `${status.cluster}.json`);
    const { suspendedBy: _s, ...stored } = status;
    await writeFile(`${file}.tmp`, `${JSON.stringify(stored, null, 2)}\n`);
    await rename(`${file}.tmp`, file);
  }

  async remove(cluster: string): Promise<void> {
    await rm(join(this.dir, `${cluster}.json`), { force: true });
  }
}
