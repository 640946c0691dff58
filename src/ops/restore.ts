// `vc restore`: verify a backup in an OCI registry, then pause, scale to zero, run a restore pod, scale back, resume.
import type { KubeObject } from "../kube/object.js";
import { ANNOTATIONS, CHART_APP_LABEL, LABELS } from "../translate/keys.js";
import { formatMatchLabels } from "../kube/selector.js";
import type { Host } from "./host.js";
import { P } from "./paths.js";
import { resume, suspend, suspendedBy } from "./suspend.js";
import { RecordStore } from "../records/store.js";
import { recordsNamespace } from "../translate/keys.js";
import type { Credentials } from "./oci/auth.js";
import { verifyBackup, type VerifiedBackup } from "./oci/backup.js";
import { RegistryClient } from "./oci/client.js";
import { parseReference } from "./oci/reference.js";

export class RestoreError extends Error {}

export interface RestoreOptions {
  cluster: string;
  namespace: string;
  reference: string;
  credentials?: Credentials;
  plainHttp?: boolean;
  /** Image of the restore pod; default: the control plane's syncer image (it carries the `restore` command). */
  image?: string;
  /** How long the control plane may take to stop, and the restore pod to finish. */
  stopTimeoutMs?: number;
  restoreTimeoutMs?: number;
  pollMs?: number;
  log?: (line: string) => void;
  /**
   * Interrupts the waits (Ctrl-C): before the restore pod runs, undone; while it runs, left scaled down and suspended.
   */
  signal?: AbortSignal;
}

export interface RestoreReport {
  backup: VerifiedBackup;
  pod: string;
  logs: string;
  replicas: number;
}

const RESTORE_CONTAINER = "restore";
export const restorePodName = (cluster: string) => `${cluster}-restore`;
const registrySecretName = (cluster: string) => `${cluster}-restore-registry`;
const REGISTRY_DIR = "/etc/vc/registry";

/** Waits, waking early when the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

interface Container {
  name: string;
  image?: string;
  args?: string[];
  env?: Array<Record<string, unknown>>;
}

interface StsSpec {
  replicas?: number;
  volumeClaimTemplates?: Array<{ metadata?: { name?: string } }>;
  template?: { spec?: { containers?: Container[]; serviceAccountName?: string } };
}

function syncerOf(sts: KubeObject): Container | undefined {
  return ((sts.spec as StsSpec | undefined)?.template?.spec?.containers ?? []).find((c) => c.name === "syncer");
}

/** The restore pod: the data volume (or the database endpoint) of the control plane, the pinned reference. */
function restorePod(o: {
  cluster: string;
  namespace: string;
  image: string;
  backup: VerifiedBackup;
  sts: KubeObject;
  withRegistrySecret: boolean;
}): KubeObject {
  const spec = o.sts.spec as StsSpec;
  const syncer = syncerOf(o.sts);
  const args = ["restore", `--from=${o.backup.pinned}`, `--store=${o.backup.config.store}`];
  const volumes: Array<Record<string, unknown>> = [];
  const mounts: Array<Record<string, unknown>> = [];
  const env: Array<Record<string, unknown>> = [];
  if (o.backup.config.store === "kvstore") {
    volumes.push({ name: "data", persistentVolumeClaim: { claimName: `data-${o.cluster}-0` } });
    mounts.push({ name: "data", mountPath: "/data" });
    args.push("--data-dir=/data");
  } else {
    env.push(...(syncer?.env ?? []).filter((e) => e.name === "VC_DATABASE_ENDPOINT"));
  }
  if (o.withRegistrySecret) {
    volumes.push({
      name: "registry",
      secret: { secretName: registrySecretName(o.cluster), items: [{ key: ".dockerconfigjson", path: "config.json" }] },
    });
    mounts.push({ name: "registry", mountPath: REGISTRY_DIR, readOnly: true });
    env.push({ name: "DOCKER_CONFIG", value: REGISTRY_DIR });
  }
  const container: Record<string, unknown> = { name: RESTORE_CONTAINER, image: o.image, args, volumeMounts: mounts };
  if (env.length) container.env = env;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: restorePodName(o.cluster),
      namespace: o.namespace,
      labels: { [LABELS.managedBy]: o.cluster, app: "vc-restore" },
      annotations: { [ANNOTATIONS.restoreFrom]: o.backup.pinned },
    },
    spec: {
      restartPolicy: "Never",
      ...(spec.template?.spec?.serviceAccountName ? { serviceAccountName: spec.template.spec.serviceAccountName } : {}),
      containers: [container],
      volumes,
    },
  };
}

function phaseOf(pod: KubeObject | undefined): string | undefined {
  return (pod as { status?: { phase?: string } } | undefined)?.status?.phase;
}

export async function restore(host: Host, o: RestoreOptions): Promise<RestoreReport> {
  const log = o.log ?? (() => {});
  const checked = await checkFirst(host, o, log);
  const paused = await pauseAndStop(host, o, checked, log);
  const logs = await runRestorePod(host, o, checked, paused, log);
  await bringBack(host, o, checked, paused, log);
  return { backup: checked.backup, pod: checked.podName, logs, replicas: checked.replicas };
}

/** What the checks before any change found: the backup, the control plane's replicas and image, the pod's name. */
interface Checked {
  ref: ReturnType<typeof parseReference>;
  backup: VerifiedBackup;
  sts: KubeObject;
  replicas: number;
  image: string;
  podName: string;
}

/** Everything is checked before anything on the host changes: the backup, the control plane, an earlier restore pod. */
async function checkFirst(host: Host, o: RestoreOptions, log: (line: string) => void): Promise<Checked> {
  const ns = o.namespace;
  const ref = parseReference(o.reference);
  log(`verifying ${o.reference} (manifest, config and snapshot digests, media types)`);
  const backup = await verifyBackup(
    new RegistryClient(ref.registry, { credentials: o.credentials, plainHttp: o.plainHttp }),
    ref,
  );
  log(
    `backup ${backup.pinned}: cluster ${backup.config.cluster}, taken ${backup.config.createdAt}, ` +
      `${backup.config.store} snapshot of ${backup.snapshot.size} bytes`,
  );
  if (backup.config.cluster !== o.cluster)
    log(`note: the backup was taken from cluster ${backup.config.cluster}, restoring into ${o.cluster}`);

  const sts = await host.get(P.statefulSets(ns, o.cluster));
  if (!sts)
    throw new RestoreError(
      `StatefulSet ${ns}/${o.cluster} not found: nothing to restore into (is the cluster applied? pass --namespace?)`,
    );
  const spec = sts.spec as StsSpec;
  const replicas = spec.replicas ?? 1;
  const hasVolume = (spec.volumeClaimTemplates ?? []).some((t) => t.metadata?.name === "data");
  if (backup.config.store === "kvstore" && !hasVolume) {
    throw new RestoreError(
      `the control plane of ${o.cluster} has no persistent volume (persistence off): a restored kvstore would be ` +
        `lost at the next restart; enable controlPlane.backingStore.kvstore.persistence first. Nothing was changed.`,
    );
  }
  if (
    backup.config.store === "database" &&
    !(syncerOf(sts)?.env ?? []).some((e) => e.name === "VC_DATABASE_ENDPOINT")
  ) {
    throw new RestoreError(
      `the backup holds a database dump but ${o.cluster} does not use an external database. Nothing was changed.`,
    );
  }
  const image = o.image ?? syncerOf(sts)?.image;
  if (!image)
    throw new RestoreError("no restore image: the StatefulSet has no syncer image; pass --image. Nothing was changed.");
  const podName = restorePodName(o.cluster);
  const leftover = await host.get(P.pods(ns, podName));
  if (leftover) {
    const phase = phaseOf(leftover);
    if (phase !== "Succeeded" && phase !== "Failed")
      throw new RestoreError(
        `a restore pod ${ns}/${podName} is already ${phase ?? "present"}: wait for it or delete it. Nothing was ` +
          `changed.`,
      );
    log(`deleting the finished restore pod ${podName} of an earlier run (${phase})`);
    await host.remove(P.pods(ns, podName));
  }

  return { ref, backup, sts, replicas, image, podName };
}

/** How the pause is undone: the StatefulSet's scale path and the suspension to put back. */
interface Paused {
  scalePath: string;
  before: string | undefined;
  release: () => Promise<unknown>;
  undo: (why: string) => Promise<never>;
}

/** Pauses vc's reconciliation of the cluster and stops its control plane; a failure undoes what was done. */
async function pauseAndStop(host: Host, o: RestoreOptions, c: Checked, log: (line: string) => void): Promise<Paused> {
  const ns = o.namespace;
  const { backup, replicas } = c;
  const pollMs = o.pollMs ?? 1000;
  // A suspension that was there before (someone paused the cluster on purpose) is put back afterwards, not lifted.
  const before = suspendedBy((await new RecordStore(host.client).holderConfigMaps(o.cluster)).get(o.cluster));
  const release = () => (before ? suspend(host, o.cluster, ns, before) : resume(host, o.cluster, ns));
  try {
    await suspend(host, o.cluster, ns, `vc restore from ${backup.pinned} at ${new Date().toISOString()}`);
  } catch (err) {
    throw new RestoreError(`suspending reconciliation failed (${(err as Error).message}). Nothing was changed.`);
  }
  log("reconciliation of this cluster suspended");
  const scalePath = `${P.statefulSets(ns, o.cluster)}/scale`;
  const undo = async (why: string): Promise<never> => {
    const done: string[] = [];
    try {
      await host.mergePatch(scalePath, { spec: { replicas } });
      done.push(`scaled back to ${replicas}`);
      await release();
      done.push(before ? `reconciliation left suspended as before (${before})` : "reconciliation resumed");
    } catch (err) {
      throw new RestoreError(
        `${why}; then undoing failed (${(err as Error).message}) after: ${done.join(", ") || "nothing"}. Run: ` +
          `kubectl -n ${ns} scale statefulset ${o.cluster} --replicas=${replicas} and remove annotation ` +
          `${ANNOTATIONS.suspendedBy} from the cluster's record (kubectl -n ${recordsNamespace()} get configmap ` +
          `-l ${LABELS.managedBy}=${o.cluster})`,
      );
    }
    throw new RestoreError(`${why}; ${done.join(", ")}: the cluster runs on its previous data, nothing was restored`);
  };
  try {
    log(`scaling StatefulSet ${o.cluster} from ${replicas} to 0`);
    await host.mergePatch(scalePath, { spec: { replicas: 0 } });
  } catch (err) {
    return undo(`scaling to 0 failed: ${(err as Error).message}`);
  }
  const selector = formatMatchLabels({ release: o.cluster, app: CHART_APP_LABEL });
  const stopBy = Date.now() + (o.stopTimeoutMs ?? 300_000);
  for (;;) {
    let left: KubeObject[];
    try {
      left = await host.list(P.pods(ns), { labelSelector: selector });
    } catch (err) {
      return undo(`watching the control plane stop failed: ${(err as Error).message}`);
    }
    if (left.length === 0) break;
    if (o.signal?.aborted) return undo("interrupted while the control plane was stopping");
    if (Date.now() > stopBy)
      return undo(
        `the control plane did not stop in time (${left.map((p) => p.metadata.name).join(", ")} still present)`,
      );
    await sleep(pollMs, o.signal);
  }
  log("control plane stopped");

  return { scalePath, before, release, undo };
}

/** Runs the restore pod (with the registry's credentials when there are) and waits for it; its logs. */
async function runRestorePod(
  host: Host,
  o: RestoreOptions,
  c: Checked,
  p: Paused,
  log: (line: string) => void,
): Promise<string> {
  const ns = o.namespace;
  const { ref, backup, sts, image, podName, replicas } = c;
  const { undo } = p;
  const pollMs = o.pollMs ?? 1000;
  const withRegistrySecret = !!o.credentials;
  try {
    if (withRegistrySecret) {
      const auth = Buffer.from(`${o.credentials!.username}:${o.credentials!.password}`).toString("base64");
      const dockerConfig = JSON.stringify({ auths: { [ref.registry]: { auth } } });
      await host.remove(P.secrets(ns, registrySecretName(o.cluster)));
      await host.create(P.secrets(ns), {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/dockerconfigjson",
        metadata: { name: registrySecretName(o.cluster), namespace: ns, labels: { [LABELS.managedBy]: o.cluster } },
        data: { ".dockerconfigjson": Buffer.from(dockerConfig).toString("base64") },
      });
    }
    log(`starting restore pod ${podName} (image ${image})`);
    await host.create(
      P.pods(ns),
      restorePod({ cluster: o.cluster, namespace: ns, image, backup, sts, withRegistrySecret }),
    );
  } catch (err) {
    return undo(`starting the restore pod failed: ${(err as Error).message}`);
  }
  const doneBy = Date.now() + (o.restoreTimeoutMs ?? 1_800_000);
  let phase: string | undefined;
  for (;;) {
    const pod = await host.get(P.pods(ns, podName)).catch(() => undefined);
    phase = phaseOf(pod);
    if (!pod) return undo(`the restore pod ${podName} disappeared before finishing`);
    if (phase === "Succeeded" || phase === "Failed") break;
    if (Date.now() > doneBy || o.signal?.aborted) {
      throw new RestoreError(
        `${o.signal?.aborted ? "interrupted: " : ""}the restore pod ${ns}/${podName} has not finished (phase ` +
          `${phase ?? "unknown"}). The control plane stays at 0 replicas and reconciliation suspended so that the ` +
          `restore can finish safely. ` +
          `Watch it with kubectl -n ${ns} get pod ${podName}; when it has Succeeded run kubectl -n ${ns} scale ` +
          `statefulset ${o.cluster} --replicas=${replicas} and remove annotation ${ANNOTATIONS.suspendedBy} from ` +
          `the cluster's record (kubectl -n ${recordsNamespace()} get configmap -l ` +
          `${LABELS.managedBy}=${o.cluster}) (or run vc restore again).`,
      );
    }
    await sleep(pollMs, o.signal);
  }
  const logs = (await host.text(P.podLog(ns, podName), { container: RESTORE_CONTAINER }).catch(() => undefined)) ?? "";
  if (withRegistrySecret) await host.remove(P.secrets(ns, registrySecretName(o.cluster))).catch(() => false);
  if (phase === "Failed") {
    log(`restore pod failed; logs:\n${logs}`);
    return undo(
      `the restore pod ${ns}/${podName} failed (kept for inspection: kubectl -n ${ns} logs ${podName}; delete it ` +
        `before retrying). The restore program leaves the data untouched when it fails`,
    );
  }
  log(`restore pod succeeded; logs:\n${logs}`);
  await host.remove(P.pods(ns, podName));

  return logs;
}

/** Scales the control plane back and lifts (or puts back) the suspension. */
async function bringBack(
  host: Host,
  o: RestoreOptions,
  c: Checked,
  p: Paused,
  log: (line: string) => void,
): Promise<void> {
  const ns = o.namespace;
  const { replicas } = c;
  const { scalePath, before, release } = p;
  try {
    log(`scaling StatefulSet ${o.cluster} back to ${replicas}`);
    await host.mergePatch(scalePath, { spec: { replicas } });
    await release();
    log(before ? `reconciliation left suspended as before (${before})` : "reconciliation resumed");
  } catch (err) {
    throw new RestoreError(
      `the data was restored but bringing the control plane back failed (${(err as Error).message}): run kubectl ` +
        `-n ${ns} scale statefulset ${o.cluster} --replicas=${replicas} and remove annotation ` +
        `${ANNOTATIONS.suspendedBy} from the cluster's record (kubectl -n ${recordsNamespace()} get configmap -l ` +
        `${LABELS.managedBy}=${o.cluster})`,
    );
  }
}
