// The rollout proof's fleet on a real API server: a generated fleet repository (git) of N clusters with a shared base
// (fleet/values.yaml, groups by label, one `canary: "true"` cluster), and a snapshot of every live object vc applied
// for a set of clusters (spec and data, not status or metadata churn) to compare byte for byte before and after.
//
//   const fleet = generateRolloutFleet({ clusters: 30, rollout: THREE_WAVES });
//   fleet.setBaseTag("0.2.0"); const sha = fleet.commit("base: 0.2.0");
//   const before = await snapshotClusters(kube(), fleet.clusters.slice(3)); ... expect(after).to.deep.equal(before)
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { LABELS } from "../../src/translate/keys.js";
import type { RealKube } from "../support/real-kube.js";
import { stableJson } from "../support/kube-status.js";

export interface FleetCluster {
  name: string;
  hostNamespace: string;
  labels: Record<string, string>;
}

export interface RolloutFleet {
  /** The repository's work tree (a git repository on branch main). */
  dir: string;
  clusters: FleetCluster[];
  /** Writes a file of the repository (relative path). */
  write(path: string, text: string): void;
  /** Sets the control-plane image tag of fleet/values.yaml (the base change the proof rolls out). */
  setBaseTag(tag: string): void;
  /** Commits every change; returns the new commit. */
  commit(message: string): string;
  head(): string;
  dispose(): void;
}

/**
 * The three waves of issue #22: the canary label first, then up to 10 % of the fleet (then wait for resume), then the
 * rest.
 */
export const THREE_WAVES = `# canary first, then 10 % of the fleet, then (after vc rollout resume) the rest
waves:
  - name: canary
    selector:
      matchLabels:
        canary: "true"
  - name: early
    percent: 10
    pause: manual
  - name: rest
maxUnavailable: 5
healthGate:
  timeout: 10m
onFailure: halt
`;

const baseValues = (tag: string) => `# every cluster's base
controlPlane:
  statefulSet:
    image:
      tag: "${tag}"
`;

/** prod clusters run the metrics proxy and keep their store on a volume claim: a Deployment and a PVC to report on. */
const PROD_VALUES = `controlPlane:
  backingStore:
    kvstore:
      persistence:
        enabled: true
        size: 1Gi
integrations:
  metricsServer:
    enabled: true
`;

const GROUPS = `groups:
  prod:
    matchLabels:
      tier: prod
`;

const git = (cwd: string, ...args: string[]) =>
  execFileSync(
    "git",
    ["-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "-c", "commit.gpgsign=false", ...args],
    { cwd, encoding: "utf8" },
  ).trim();

/** The i-th cluster: `c00` is the canary; every third cluster is `tier: prod`, the others `tier: dev`. */
function fleetCluster(i: number): FleetCluster {
  const name = `c${String(i).padStart(2, "0")}`;
  const labels: Record<string, string> = { tier: i % 3 === 0 ? "prod" : "dev" };
  if (i === 0) labels.canary = "true";
  return { name, hostNamespace: `vc-${name}`, labels };
}

/** Writes and commits the fleet; `rollout` (the text of fleet/rollout.yaml) is left out when undefined. */
export function generateRolloutFleet(opts: { clusters?: number; rollout?: string; tag?: string } = {}): RolloutFleet {
  const parent = mkdtempSync(join(tmpdir(), "vc-e2e-rollout-"));
  const dir = join(parent, "fleet");
  const clusters = Array.from({ length: opts.clusters ?? 30 }, (_, i) => fleetCluster(i));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write("fleet/values.yaml", baseValues(opts.tag ?? "0.1.0"));
  write("fleet/groups.yaml", GROUPS);
  write("fleet/values.prod.yaml", PROD_VALUES);
  if (opts.rollout !== undefined) write("fleet/rollout.yaml", opts.rollout);
  for (const c of clusters) {
    const labels = Object.entries(c.labels)
      .map(([k, v]) => `  ${k}: "${v}"\n`)
      .join("");
    write(`clusters/${c.name}/cluster.yaml`, `labels:\n${labels}`);
    write(
      `clusters/${c.name}/values.yaml`,
      "controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: 100m\n",
    );
  }
  git(dir, "init", "-q", "-b", "main");
  const commit = (message: string) => {
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "--allow-empty", "-m", message);
    return git(dir, "rev-parse", "HEAD");
  };
  commit("fleet: 30 clusters on a shared base");
  return {
    dir,
    clusters,
    write,
    setBaseTag: (tag) => write("fleet/values.yaml", baseValues(tag)),
    commit,
    head: () => git(dir, "rev-parse", "HEAD"),
    dispose: () => rmSync(parent, { recursive: true, force: true }),
  };
}

/** The namespaced kinds vc renders for a cluster (pods, claims and events are the controllers', not vc's). */
const NAMESPACED = [
  "/api/v1/serviceaccounts",
  "/api/v1/secrets",
  "/api/v1/configmaps",
  "/api/v1/services",
  "/api/v1/resourcequotas",
  "/api/v1/limitranges",
  "/apis/apps/v1/statefulsets",
  "/apis/apps/v1/deployments",
  "/apis/rbac.authorization.k8s.io/v1/roles",
  "/apis/rbac.authorization.k8s.io/v1/rolebindings",
];
const CLUSTER_SCOPED = [
  "/apis/rbac.authorization.k8s.io/v1/clusterroles",
  "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
];

/**
 * A live object as vc wrote it: without status and the server's metadata (resourceVersion, managedFields, uid, times),
 * and without the annotations named in `ignore` (e.g. the commit an object was last written at).
 */
function kept(o: KubeObject, kind: string, ignore: readonly string[]): string {
  const { status: _status, metadata, ...rest } = o as KubeObject & { status?: unknown };
  const { name, namespace, labels } = metadata;
  const annotations = { ...(metadata as { annotations?: Record<string, string> }).annotations };
  for (const key of ignore) delete annotations[key];
  return stableJson({ ...rest, kind, metadata: { name, namespace, labels, annotations } });
}

export interface ClusterSnapshot {
  /** `Kind namespace/name` to the object's spec/data and labels/annotations as stable JSON. */
  objects: Map<string, string>;
  /** `Kind namespace/name` to its resourceVersion: any write, even one that changes nothing visible, moves it. */
  versions: Map<string, string>;
}

/**
 * Every live object vc applied for `clusters`: the Namespace, the namespaced kinds vc renders in each host namespace,
 * and the cluster-scoped RBAC labelled `managed-by` the cluster. One LIST per kind for the whole set.
 */
export async function snapshotClusters(
  kube: RealKube,
  clusters: readonly FleetCluster[],
  opts: { ignoreAnnotations?: readonly string[] } = {},
): Promise<ClusterSnapshot> {
  const namespaces = new Set(clusters.map((c) => c.hostNamespace));
  const names = new Set(clusters.map((c) => c.name));
  const objects = new Map<string, string>();
  const versions = new Map<string, string>();
  const add = (o: KubeObject, kind: string) => {
    const key = `${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
    objects.set(key, kept(o, kind, opts.ignoreAnnotations ?? []));
    versions.set(key, o.metadata.resourceVersion ?? "");
  };
  const list = async (path: string) => {
    const res = await kube.request<{ kind: string; items: KubeObject[] }>("GET", path);
    if (res.status !== 200) throw new Error(`LIST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return { kind: res.body.kind.replace(/List$/, ""), items: res.body.items };
  };
  const nsList = await list("/api/v1/namespaces");
  for (const o of nsList.items) if (namespaces.has(o.metadata.name)) add(o, nsList.kind);
  for (const path of NAMESPACED) {
    const { kind, items } = await list(path);
    for (const o of items) if (namespaces.has(o.metadata.namespace ?? "")) add(o, kind);
  }
  for (const path of CLUSTER_SCOPED) {
    const { kind, items } = await list(`${path}?labelSelector=${encodeURIComponent(LABELS.managedBy)}`);
    for (const o of items) if (names.has(o.metadata.labels?.[LABELS.managedBy] ?? "")) add(o, kind);
  }
  return { objects, versions };
}

/**
 * The keys whose content differs between two snapshots (added, removed or changed), sorted; empty when equal byte for
 * byte.
 */
export function snapshotDifferences(before: ClusterSnapshot, after: ClusterSnapshot): string[] {
  const keys = new Set([...before.objects.keys(), ...after.objects.keys()]);
  return [...keys].filter((k) => before.objects.get(k) !== after.objects.get(k)).sort();
}

/** The keys whose resourceVersion moved (a write happened, whatever it changed). */
export function rewrittenObjects(before: ClusterSnapshot, after: ClusterSnapshot): string[] {
  return [...before.versions.keys()]
    .filter((k) => after.versions.has(k) && before.versions.get(k) !== after.versions.get(k))
    .sort();
}

/** The control-plane image of cluster `name` as live: `<repository>:<tag>` of its StatefulSet's first container. */
export async function liveImage(kube: RealKube, c: FleetCluster): Promise<string | undefined> {
  const res = await kube.request<KubeObject>(
    "GET",
    `/apis/apps/v1/namespaces/${c.hostNamespace}/statefulsets/${c.name}`,
  );
  if (res.status !== 200) return undefined;
  return (res.body.spec as { template: { spec: { containers: Array<{ image: string }> } } }).template.spec.containers[0]
    ?.image;
}

/** A `vc reconcile` process (the real binary's code path, in a process of its own) following the fleet's repository. */
export interface ReconcilerProcess {
  child: ChildProcess;
  /** Everything it printed so far. */
  log(): string;
  /** SIGKILL: no shutdown, no last write; resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM, as a rolling update stops a pod; resolves once it is gone. */
  stop(): Promise<void>;
}

const ROOT = join(import.meta.dirname, "..", "..");

export function startReconciler(repo: string, kubeconfig: string, extra: string[] = []): ReconcilerProcess {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "src/cli/main.ts"),
      "reconcile",
      "--repo",
      repo,
      "--target",
      "kube",
      "--kubeconfig",
      kubeconfig,
      "--resync",
      "1h",
      "--cache-dir",
      join(repo, "..", "cache"),
      ...extra,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await gone;
  };
  return { child, log: () => out, kill: () => end("SIGKILL"), stop: () => end("SIGTERM") };
}
