// Stands in for the controllers and the kubelet a real API server (or the in-memory one) lacks: sets status through the
// status subresource as the StatefulSet and Deployment controllers would, creates the pods and volume claims they would
// create (with controller-revision-hash labels), and reports those pods Running/Ready or stuck, so a cluster is Healthy
// or Degraded on demand.
//
//   await setStatus(kube, path, (live) => ({ ... }))      one object's status, written as its controller would
//   const hosts = new StandInControllers(kube);           the control planes of a fleet, by host namespace
//   hosts.degrade("vc-c00", "CrashLoopBackOff")           the pods of c00's update revision will not start
// await hosts.settle() one pass over every StatefulSet and Deployment; start()/stop() loop
import { createHash } from "node:crypto";
import type { KubeObject } from "../../src/kube/object.js";
import type { RealKube } from "./real-kube.js";

/** What these helpers need of a server: JSON requests with rights to write pods, claims and workloads' status. */
export type StatusWriter = Pick<RealKube, "request">;

/**
 * Reads the object at `path`, sets `status` and writes it back through `<path>/status` (the way a controller reports).
 */
export async function setStatus(
  kube: StatusWriter,
  path: string,
  status: (live: KubeObject) => unknown,
): Promise<KubeObject> {
  const live = await kube.request<KubeObject>("GET", path);
  if (live.status !== 200) throw new Error(`GET ${path}: ${live.status} ${JSON.stringify(live.body)}`);
  const res = await kube.request<KubeObject>("PUT", `${path}/status`, { ...live.body, status: status(live.body) });
  if (res.status !== 200) throw new Error(`PUT ${path}/status: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** POSTs `body` to the collection at `path`; throws unless the server created it. */
export async function createObject(kube: StatusWriter, path: string, body: unknown): Promise<KubeObject> {
  const res = await kube.request<KubeObject>("POST", path, body);
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * A pod's status as the kubelet reports it: Running and Ready, or its container waiting for `waiting` (e.g.
 * `CrashLoopBackOff`).
 */
export function runningPodStatus(waiting?: string, container = "syncer"): Record<string, unknown> {
  return {
    phase: "Running",
    conditions: [{ type: "Ready", status: waiting ? "False" : "True" }],
    containerStatuses: [
      {
        name: container,
        ready: !waiting,
        restartCount: waiting ? 4 : 0,
        image: "x",
        imageID: "",
        state: waiting ? { waiting: { reason: waiting } } : { running: { startedAt: "2026-01-01T00:00:00Z" } },
      },
    ],
  };
}

/** The revision name the StatefulSet controller gives a pod template: `<set>-<hash of the template>`. */
export function templateRevision(o: KubeObject): string {
  const template = (o.spec as { template?: unknown } | undefined)?.template ?? {};
  return `${o.metadata.name}-${createHash("sha256").update(stableJson(template)).digest("hex").slice(0, 10)}`;
}

/** JSON with object keys sorted (the revision of a template must not depend on the server's key order). */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

interface WorkloadSpec {
  replicas?: number;
  selector?: { matchLabels?: Record<string, string> };
  template?: {
    metadata?: { labels?: Record<string, string> };
    spec?: { containers?: Array<{ name: string; image?: string }> };
  };
  volumeClaimTemplates?: Array<{ metadata?: { name?: string }; spec?: Record<string, unknown> }>;
}

const specOf = (o: KubeObject) => (o.spec ?? {}) as WorkloadSpec;
const podPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ""}`;

/** What `settle()` found and wrote, for a test's assertions and its failure messages. */
export interface SettleReport {
  /** Host namespaces whose workloads were (re)reported in this pass. */
  reported: string[];
}

/**
 * The StatefulSet controller, the Deployment controller and the kubelet, for every StatefulSet and Deployment on the
 * server. A pass LISTs both kinds (two requests) and acts only on those whose generation or template changed since
 * it last reported them, or whose namespace's fault was set or cleared: it replaces pods of an old revision, creates
 * missing volume claims (Bound), reports pods Running/Ready (or the namespace's fault on the update revision), and
 * writes the workload's status. It writes only pods, claims and status subresources, never a spec vc applied.
 */
export class StandInControllers {
  private readonly faults = new Map<string, string>();
  private readonly seen = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private lastError: Error | undefined;

  constructor(private readonly kube: StatusWriter) {}

  /** The pods of `hostNamespace`'s update revision will be stuck in `reason` (a broken image: CrashLoopBackOff). */
  degrade(hostNamespace: string, reason = "CrashLoopBackOff"): void {
    this.faults.set(hostNamespace, reason);
    this.forget(hostNamespace);
  }

  /** The fault is fixed: the pods of `hostNamespace` start. */
  heal(hostNamespace: string): void {
    this.faults.delete(hostNamespace);
    this.forget(hostNamespace);
  }

  private forget(hostNamespace: string): void {
    for (const key of [...this.seen.keys()]) if (key.startsWith(`${hostNamespace}/`)) this.seen.delete(key);
  }

  /** One pass over every StatefulSet and Deployment. */
  async settle(): Promise<SettleReport> {
    const reported = new Set<string>();
    for (const kind of ["statefulsets", "deployments"] as const) {
      const list = await this.kube.request<{ items: KubeObject[] }>("GET", `/apis/apps/v1/${kind}`);
      if (list.status !== 200) throw new Error(`LIST ${kind}: ${list.status}`);
      for (const item of list.body.items) {
        const o = {
          ...item,
          apiVersion: "apps/v1",
          kind: kind === "statefulsets" ? "StatefulSet" : "Deployment",
        } as KubeObject;
        const ns = o.metadata.namespace!;
        const key = `${ns}/${o.kind}/${o.metadata.name}`;
        const state = `${o.metadata.generation}/${templateRevision(o)}/${this.faults.get(ns) ?? ""}`;
        if (this.seen.get(key) === state) continue;
        if (o.kind === "StatefulSet") await this.reportStatefulSet(o, this.faults.get(ns));
        else await this.reportDeployment(o);
        this.seen.set(key, state);
        reported.add(ns);
      }
    }
    return { reported: [...reported].sort() };
  }

  /** Settles every `intervalMs` until stop(); a failed pass is kept and thrown by stop(). */
  start(intervalMs = 500): void {
    const tick = () => {
      this.running = this.settle()
        .catch((err: Error) => void (this.lastError ??= err))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    const timer = this.timer;
    this.timer = undefined;
    if (timer) clearTimeout(timer);
    await this.running;
    const err = this.lastError;
    this.lastError = undefined;
    if (err) throw err;
  }

  /** Pods of the template's revision (old ones replaced), claims Bound, then the set's status. */
  private async reportStatefulSet(o: KubeObject, fault: string | undefined): Promise<void> {
    const ns = o.metadata.namespace!;
    const name = o.metadata.name;
    const spec = specOf(o);
    const replicas = spec.replicas ?? 1;
    const revision = templateRevision(o);
    const container = spec.template?.spec?.containers?.[0]?.name ?? "syncer";
    for (let i = 0; i < replicas; i++) {
      const podName = `${name}-${i}`;
      await this.ensurePod(
        ns,
        podName,
        {
          ...spec.template?.metadata?.labels,
          "controller-revision-hash": revision,
          "statefulset.kubernetes.io/pod-name": podName,
        },
        spec,
        "controller-revision-hash",
        revision,
        undefined,
        controllerRef("apps/v1", "StatefulSet", o),
      );
      await setStatus(this.kube, podPath(ns, podName), () => runningPodStatus(fault, container));
      for (const t of spec.volumeClaimTemplates ?? [])
        await this.ensureBoundClaim(ns, `${t.metadata?.name}-${name}-${i}`, t.spec ?? {});
    }
    const previous = (o.status as { currentRevision?: string } | undefined)?.currentRevision;
    await setStatus(this.kube, `/apis/apps/v1/namespaces/${ns}/statefulsets/${name}`, (live) => ({
      observedGeneration: live.metadata.generation,
      replicas,
      readyReplicas: fault ? 0 : replicas,
      currentReplicas: fault ? 0 : replicas,
      updatedReplicas: replicas,
      // A rollout whose new pods never get ready leaves the current revision where it was.
      currentRevision: fault && previous ? previous : revision,
      updateRevision: revision,
      collisionCount: 0,
    }));
  }

  /** One pod of the template (a ReplicaSet's), Running and Ready, then the Deployment's status: available. */
  private async reportDeployment(o: KubeObject): Promise<void> {
    const ns = o.metadata.namespace!;
    const spec = specOf(o);
    const replicas = spec.replicas ?? 1;
    const hash = templateRevision(o).slice(-10);
    const container = spec.template?.spec?.containers?.[0]?.name ?? "proxy";
    const replicaSet = await this.ensureReplicaSet(o, hash);
    for (let i = 0; i < replicas; i++) {
      const podName = `${o.metadata.name}-${hash}-${i}`;
      await this.ensurePod(
        ns,
        podName,
        { ...spec.template?.metadata?.labels, "pod-template-hash": hash },
        spec,
        "pod-template-hash",
        hash,
        `${o.metadata.name}-`,
        controllerRef("apps/v1", "ReplicaSet", replicaSet),
      );
      await setStatus(this.kube, podPath(ns, podName), () => runningPodStatus(undefined, container));
    }
    await setStatus(this.kube, `/apis/apps/v1/namespaces/${ns}/deployments/${o.metadata.name}`, (live) => ({
      observedGeneration: live.metadata.generation,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        {
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
        },
        {
          type: "Progressing",
          status: "True",
          reason: "NewReplicaSetAvailable",
          message: "ReplicaSet has successfully progressed.",
        },
      ],
    }));
  }

  /**
   * Creates the pod unless it exists with `revisionLabel` at `revision`; pods of the workload (by `prefix`, default the
   * pod's own name) at another revision are deleted first, as the controller replaces them.
   */
  private async ensurePod(
    ns: string,
    podName: string,
    labels: Record<string, string>,
    spec: WorkloadSpec,
    revisionLabel: string,
    revision: string,
    prefix?: string,
    owner?: Record<string, unknown>,
  ): Promise<void> {
    const selector = Object.entries(spec.selector?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const pods = await this.kube.request<{ items: KubeObject[] }>(
      "GET",
      `${podPath(ns)}?labelSelector=${encodeURIComponent(selector)}`,
    );
    let current = false;
    for (const p of pods.body.items ?? []) {
      const mine = prefix ? p.metadata.name.startsWith(prefix) : p.metadata.name === podName;
      if (!mine) continue;
      if (p.metadata.name === podName && p.metadata.labels?.[revisionLabel] === revision) current = true;
      else if (!prefix || p.metadata.labels?.[revisionLabel] !== revision) {
        // With DeleteOptions as the controller sends them (real-kube.ts gives a DELETE's body its length).
        const del = await this.kube.request("DELETE", podPath(ns, p.metadata.name), {
          apiVersion: "v1",
          kind: "DeleteOptions",
          gracePeriodSeconds: 0,
        });
        if (del.status !== 200 && del.status !== 404)
          throw new Error(`DELETE pod ${ns}/${p.metadata.name}: ${del.status}`);
      }
    }
    if (current) return;
    const containers = podContainers(spec);
    await createObject(this.kube, podPath(ns), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: podName, namespace: ns, labels, ...(owner ? { ownerReferences: [owner] } : {}) },
      spec: { containers },
    });
  }

  /**
   * The Deployment's ReplicaSet of a template (`<name>-<hash>`), controlled by it, as the Deployment controller makes
   * it.
   */
  private async ensureReplicaSet(o: KubeObject, hash: string): Promise<KubeObject> {
    const ns = o.metadata.namespace!;
    const path = `/apis/apps/v1/namespaces/${ns}/replicasets`;
    const name = `${o.metadata.name}-${hash}`;
    const live = await this.kube.request<KubeObject>("GET", `${path}/${name}`);
    if (live.status === 200) return live.body;
    const spec = specOf(o);
    const labels = { ...spec.template?.metadata?.labels, "pod-template-hash": hash };
    await createObject(this.kube, path, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name, namespace: ns, labels, ownerReferences: [controllerRef("apps/v1", "Deployment", o)] },
      spec: {
        replicas: spec.replicas ?? 1,
        selector: { matchLabels: labels },
        // Name and image only, as the pods below: the template's mounts would need its volumes too.
        template: { metadata: { labels }, spec: { containers: podContainers(spec) } },
      },
    });
    return (await this.kube.request<KubeObject>("GET", `${path}/${name}`)).body;
  }

  /** The claim the StatefulSet controller creates from a volumeClaimTemplate, reported Bound as a provisioner would. */
  private async ensureBoundClaim(ns: string, name: string, templateSpec: Record<string, unknown>): Promise<void> {
    const path = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
    const live = await this.kube.request<KubeObject>("GET", `${path}/${name}`);
    if (live.status === 404)
      await createObject(this.kube, path, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name, namespace: ns },
        spec: templateSpec,
      });
    else if ((live.body.status as { phase?: string } | undefined)?.phase === "Bound") return;
    const requests = (templateSpec.resources as { requests?: { storage?: string } } | undefined)?.requests;
    await setStatus(this.kube, `${path}/${name}`, () => ({
      phase: "Bound",
      accessModes: templateSpec.accessModes ?? ["ReadWriteOnce"],
      capacity: { storage: requests?.storage ?? "1Gi" },
    }));
  }
}

/** The controller reference a controller puts on what it creates (its kind, name and UID). */
function controllerRef(apiVersion: string, kind: string, o: KubeObject): Record<string, unknown> {
  return { apiVersion, kind, name: o.metadata.name, uid: o.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** The template's containers by name and image, enough for a pod the server accepts. */
function podContainers(spec: WorkloadSpec): { name: string; image: string }[] {
  return (spec.template?.spec?.containers ?? [{ name: "syncer", image: "registry.invalid/syncer:1" }]).map((c) => ({
    name: c.name,
    image: c.image ?? "registry.invalid/x:1",
  }));
}
