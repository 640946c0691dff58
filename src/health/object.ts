// Health of one live object from its status (pure), after kstatus' rules: generation observed, rollout complete,
// conditions.
import type { KubeObject } from "../kube/object.js";
import type { Health } from "../model/health.js";

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const num = (v: unknown, fallback: number): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const statusOf = (o: KubeObject) => (o.status ?? {}) as Record<string, unknown>;
const specOf = (o: KubeObject) => (o.spec ?? {}) as Record<string, unknown>;
const conditionsOf = (o: KubeObject): Condition[] => {
  const c = statusOf(o).conditions;
  return Array.isArray(c) ? (c as Condition[]).filter((x) => x && typeof x.type === "string") : [];
};
const condition = (o: KubeObject, type: string) => conditionsOf(o).find((c) => c.type === type);
const said = (c: Condition) => c.message || c.reason || `${c.type} is ${c.status}`;

const progressing = (reason: string): Health => ({ status: "Progressing", reason });
const degraded = (reason: string): Health => ({ status: "Degraded", reason });
const HEALTHY: Health = { status: "Healthy" };

/**
 * What every kind shares (kstatus' generic rules): an object being deleted is progressing, so is one whose controller
 * has not observed its latest generation; `Stalled=True` is a failure and `Reconciling=True` a rollout under way.
 * Undefined when these say nothing.
 */
function generic(o: KubeObject): Health | undefined {
  if (o.metadata.deletionTimestamp) return progressing("being deleted");
  const observed = statusOf(o).observedGeneration;
  const generation = o.metadata.generation;
  if (typeof observed === "number" && typeof generation === "number" && observed < generation) {
    return progressing(`generation ${generation} not yet observed (observed ${observed})`);
  }
  const stalled = condition(o, "Stalled");
  if (stalled?.status === "True") return degraded(said(stalled));
  const reconciling = condition(o, "Reconciling");
  if (reconciling?.status === "True") return progressing(said(reconciling));
  return undefined;
}

/** A StatefulSet: every replica created, ready and (unless partitioned) on the update revision. */
function statefulSet(o: KubeObject): Health {
  const spec = specOf(o);
  const st = statusOf(o);
  const strategy = (spec.updateStrategy ?? {}) as { type?: string; rollingUpdate?: { partition?: number } };
  // With OnDelete the user rolls pods: the controller promises nothing more.
  if (strategy.type === "OnDelete") return HEALTHY;
  // Without a status the controller has not looked at it yet.
  if (o.status === undefined) return progressing("not yet observed by its controller");
  const want = num(spec.replicas, 1);
  const replicas = num(st.replicas, 0);
  const ready = num(st.readyReplicas, 0);
  const updated = num(st.updatedReplicas, 0);
  const current = num(st.currentReplicas, 0);
  if (replicas < want) return progressing(`replicas ${replicas}/${want}`);
  if (ready < want) return progressing(`ready ${ready}/${want}`);
  if (replicas > want) return progressing(`${replicas - want} replica(s) pending termination`);
  const partition = strategy.rollingUpdate?.partition;
  if (typeof partition === "number") {
    return updated < want - partition ? progressing(`updated ${updated}/${want - partition}`) : HEALTHY;
  }
  if (current < want && updated < want) return progressing(`updated ${updated}/${want}`);
  if (st.currentRevision !== st.updateRevision)
    return progressing(`rolling out revision ${String(st.updateRevision ?? "")}`);
  return HEALTHY;
}

/** A Deployment: its rollout has not exceeded its deadline, every replica is updated, ready and available. */
function deployment(o: KubeObject): Health {
  const spec = specOf(o);
  const st = statusOf(o);
  const progress = condition(o, "Progressing");
  if (progress?.reason === "ProgressDeadlineExceeded") return degraded(`rollout stuck: ${said(progress)}`);
  if (o.status === undefined) return progressing("not yet observed by its controller");
  const want = num(spec.replicas, 1);
  const replicas = num(st.replicas, 0);
  const updated = num(st.updatedReplicas, 0);
  const ready = num(st.readyReplicas, 0);
  const available = num(st.availableReplicas, 0);
  if (replicas < want) return progressing(`replicas ${replicas}/${want}`);
  if (updated < want) return progressing(`updated ${updated}/${want}`);
  if (replicas > want) return progressing(`${replicas - want} replica(s) pending termination`);
  if (available < updated) return progressing(`available ${available}/${updated}`);
  if (ready < want) return progressing(`ready ${ready}/${want}`);
  if (condition(o, "Available")?.status === "False") return progressing(said(condition(o, "Available")!));
  return HEALTHY;
}

/** An APIService: `Available=True`; until then its backend is coming up (or missing: the reason says which). */
function apiService(o: KubeObject): Health {
  const available = condition(o, "Available");
  if (available?.status === "True") return HEALTHY;
  return progressing(available ? `not available: ${said(available)}` : "availability not yet reported");
}

/** A cert-manager Certificate: `Ready=True`; `Ready=False` while not issuing is a failure. */
function certificate(o: KubeObject): Health {
  const ready = condition(o, "Ready");
  const issuing = condition(o, "Issuing");
  if (ready?.status === "True") return HEALTHY;
  if (issuing?.status === "True") return progressing(`issuing: ${said(issuing)}`);
  if (ready?.status === "False") return degraded(`not ready: ${said(ready)}`);
  return progressing("readiness not yet reported");
}

function namespace(o: KubeObject): Health {
  const phase = statusOf(o).phase;
  if (phase === "Terminating") return progressing("terminating");
  return HEALTHY;
}

/** A PersistentVolumeClaim: Bound; Lost is a failure. */
function claim(o: KubeObject): Health {
  const phase = statusOf(o).phase;
  if (phase === "Bound") return HEALTHY;
  if (phase === "Lost") return degraded("volume lost");
  return progressing(`volume claim ${typeof phase === "string" ? phase : "not bound"}`);
}

const BY_KIND: Record<string, (o: KubeObject) => Health> = {
  "apps/StatefulSet": statefulSet,
  "apps/Deployment": deployment,
  "apiregistration.k8s.io/APIService": apiService,
  "cert-manager.io/Certificate": certificate,
  "/Namespace": namespace,
  "/PersistentVolumeClaim": claim,
};

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** The kinds whose status says more than existence (the others are Healthy once they exist). */
export function hasHealthRules(o: { apiVersion: string; kind: string }): boolean {
  return `${groupOf(o.apiVersion)}/${o.kind}` in BY_KIND;
}

/** Health of a live object: the generic rules, then its kind's; a kind without rules is Healthy once it exists. */
export function objectHealth(o: KubeObject): Health {
  const g = generic(o);
  if (g) return g;
  const rule = BY_KIND[`${groupOf(o.apiVersion)}/${o.kind}`];
  if (rule) return rule(o);
  const ready = condition(o, "Ready");
  if (ready?.status === "False") return progressing(`not ready: ${said(ready)}`);
  return HEALTHY;
}
