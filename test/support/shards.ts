// Sharded reconciler replicas against a real API server and the checks of the sharding proof (test/e2e/shards.test.ts,
// bench/shards.ts): every cluster applied and recorded once, by its own shard, no object created twice, no conflicts.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { RESOURCES, apiVersionOf } from "../../src/kube/resources.js";
import { shardOf } from "../../src/reconciler/shard.js";
import type { AuditedWrite, RealKube } from "./real-kube.js";

export interface ReplicaOptions {
  /** Node arguments before `reconcile` (e.g. `--import tsx src/cli/main.ts`, or V8 flags and a bundle). */
  cli: string[];
  repo: string;
  kubeconfig: string;
  identity: string;
  /** `i/n`. */
  shard: string;
  cacheDir: string;
  concurrency?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** More `vc reconcile` flags (e.g. `--listen 127.0.0.1:0`). */
  extraArgs?: string[];
}

export interface Replica {
  identity: string;
  shard: string;
  child: ChildProcess;
  /** The last 200 lines of its log. */
  log(): string;
  /** The URL of its HTTP server once it logged `listening` (with `--listen`). */
  url(): string | undefined;
  /** Clusters it logged as reconciled. */
  reconciled(): number;
  /** Peak resident memory so far in MiB (VmHWM, sampled: still known after a SIGKILL). */
  peakRssMiB(): number;
  alive(): boolean;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

export function startReplica(o: ReplicaOptions): Replica {
  const child = spawn(
    process.execPath,
    [
      ...o.cli,
      "reconcile",
      "--repo",
      o.repo,
      "--target",
      "kube",
      "--kubeconfig",
      o.kubeconfig,
      "--leader-elect",
      "--lease-namespace",
      "vc-system",
      "--identity",
      o.identity,
      "--shard",
      o.shard,
      "--resync",
      "1h",
      "--cache-dir",
      o.cacheDir,
      "--concurrency",
      String(o.concurrency ?? 4),
      ...(o.extraArgs ?? []),
    ],
    { cwd: o.cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...o.env } },
  );
  const lines: string[] = [];
  let partial = "";
  let reconciled = 0;
  let url: string | undefined;
  const take = (d: Buffer) => {
    const parts = (partial + d.toString("utf8")).split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      if (line.includes('"msg":"reconciled"')) reconciled++;
      else if (!url && line.includes('"msg":"listening"')) url = /"url":"([^"]+)"/.exec(line)?.[1];
      lines.push(line);
    }
    if (lines.length > 400) lines.splice(0, 200);
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  let peak = 0;
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      peak = Math.max(peak, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024);
    } catch {
      // gone
    }
  };
  const timer = setInterval(sample, 250);
  const exited = new Promise<void>((resolve) => child.once("exit", () => (clearInterval(timer), resolve())));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const end = async (signal: NodeJS.Signals) => {
    if (!alive()) return;
    sample();
    child.kill(signal);
    await exited;
  };
  return {
    identity: o.identity,
    shard: o.shard,
    child,
    log: () => lines.slice(-200).join("\n"),
    reconciled: () => reconciled,
    url: () => url,
    peakRssMiB: () => (sample(), peak),
    alive,
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
  };
}

function leaseName(index: number, count: number): string {
  return `vc-reconciler-shard-${index}-of-${count}`;
}

export async function leaseHolder(kube: RealKube, index: number, count: number): Promise<string | undefined> {
  const res = await kube.request<{ spec?: { holderIdentity?: string } }>(
    "GET",
    `/apis/coordination.k8s.io/v1/namespaces/vc-system/leases/${leaseName(index, count)}`,
  );
  return res.status === 200 ? res.body.spec?.holderIdentity || undefined : undefined;
}

interface RecordMap {
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

/** vc's records (not their history) in vc-system, by one LIST. */
export async function listRecords(kube: RealKube): Promise<RecordMap[]> {
  const res = await kube.request<{ items?: RecordMap[] }>(
    "GET",
    "/api/v1/namespaces/vc-system/configmaps?labelSelector=vc.orch.io%2Frecord%3Drecord",
  );
  if (res.status !== 200) throw new Error(`cannot list records: ${res.status}`);
  return res.body.items ?? [];
}

/** Clusters whose record says `applied` at `revision`. */
export async function appliedClusters(kube: RealKube, revision: string): Promise<Set<string>> {
  const done = new Set<string>();
  for (const r of await listRecords(kube))
    if (r.data?.result === "applied" && r.data.lastAppliedRevision === revision && r.data.cluster)
      done.add(r.data.cluster);
  return done;
}

export interface ProofFindings {
  clusters: number;
  /** Objects vc's records list (the fleet's host objects). */
  objects: number;
  /** Clusters with no record, or a record not `applied` at the revision. */
  notApplied: string[];
  /** Clusters with more than one record. */
  twoRecords: string[];
  /** Distinct owners on the records. */
  owners: string[];
  /** Objects a record lists that the server does not hold. */
  missing: string[];
  /** Objects the audit log shows created (201) more than once. */
  createdTwice: string[];
  /** Every audited write to the objects in createdTwice, in order: what the failure message shows. */
  createdTwiceTrail: string[];
  /**
   * Objects a record lists whose creation the audit log does not show: no 201, and no write of the killed replica that
   * its death cut (the server audits such a write 500, "context canceled", even when it stored the object).
   */
  neverCreated: string[];
  /** Objects whose only creating write the kill cut: stored by the server, audited 500. */
  cutByKill: string[];
  /** Every audited write to the objects in neverCreated, in order. */
  neverCreatedTrail: string[];
  /**
   * Writes to host objects answered 409 (leases apart: losing a lease race is how election works; records apart: a
   * record write is a compare-and-swap retried on 409, which is how concurrent writers of one record keep every entry).
   */
  conflicts: number;
  /** Each write answered 409: who, what, where. */
  conflictTrail: string[];
  /** Writes into a cluster's objects or record by a replica of another shard. */
  crossShard: string[];
  /** Writes (leases apart) per replica user. */
  writesBy: Record<string, number>;
}

/**
 * The cluster an audited write belongs to: its host namespace `vc-<cluster>`, or its record's name; undefined
 * otherwise.
 */
function clusterOfWrite(
  w: { resource?: string; namespace?: string; name?: string },
  known: Set<string>,
): string | undefined {
  if (w.namespace === "vc-system" && w.name?.startsWith("vc-record-")) {
    const m = /^vc-record-(.+)-[0-9a-f]{12}(-history)?$/.exec(w.name);
    return m && known.has(m[1]!) ? m[1] : undefined;
  }
  const ns = w.resource === "namespaces" ? w.name : w.namespace;
  return ns?.startsWith("vc-") && known.has(ns.slice(3)) ? ns.slice(3) : undefined;
}

const PLURALS = new Map(RESOURCES.map((r) => [`${r.group}/${r.kind}`, r]));

/**
 * The proof's checks after every shard finished: records (one per cluster, applied at `revision`, one owner), every
 * recorded object on the server, and from the audit log: each object created once, no 409, no write across shards.
 * `shardOfUser` maps each replica's user to its shard index.
 */
export async function checkShards(
  kube: RealKube,
  o: {
    clusters: string[];
    shardCount: number;
    revision: string;
    shardOfUser: Map<string, number>;
    killed?: { user: string; at: Date };
  },
): Promise<ProofFindings> {
  const known = new Set(o.clusters);
  const records = await listRecords(kube);
  const byCluster = new Map<string, RecordMap[]>();
  for (const r of records) {
    const c = r.data?.cluster ?? "";
    byCluster.set(c, [...(byCluster.get(c) ?? []), r]);
  }
  const notApplied = o.clusters.filter((c) => {
    const rs = byCluster.get(c) ?? [];
    return !rs.some((r) => r.data?.result === "applied" && r.data.lastAppliedRevision === o.revision);
  });
  const twoRecords = [...byCluster].filter(([, rs]) => rs.length > 1).map(([c]) => c);
  const owners = [...new Set(records.map((r) => r.data?.source ?? ""))].sort();

  // Every object a record lists, by resource path: one LIST per kind of what is live.
  const listed = new Set<string>();
  for (const r of records) for (const key of JSON.parse(r.data?.inventory ?? "[]") as string[]) listed.add(key);
  const kinds = new Set([...listed].map((k) => k.split("/").slice(0, -2).join("/")));
  const live = new Set<string>();
  for (const gk of kinds) {
    const [group, kind] = gk.includes("/") ? gk.split("/") : ["", gk];
    const type = PLURALS.get(`${group}/${kind}`);
    if (!type) throw new Error(`unknown kind ${gk} in an inventory`);
    const base = type.group === "" ? `/api/${type.version}` : `/apis/${apiVersionOf(type)}`;
    let cont = "";
    do {
      const res = await kube.request<{
        items?: Array<{ metadata: { name: string; namespace?: string } }>;
        metadata?: { continue?: string };
      }>(
        "GET",
        `${base}/${type.plural}?labelSelector=vc.orch.io%2Finventory&limit=5000${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
      );
      if (res.status !== 200) throw new Error(`cannot list ${type.plural}: ${res.status}`);
      for (const item of res.body.items ?? []) live.add(`${gk}/${item.metadata.namespace ?? ""}/${item.metadata.name}`);
      cont = res.body.metadata?.continue ?? "";
    } while (cont);
  }
  const missing = [...listed].filter((k) => !live.has(k)).sort();

  // The audit log: creations per object, conflicts, and who wrote into which cluster.
  const writes = kube.writes().filter((w) => o.shardOfUser.has(w.user) && w.resource !== "leases");
  const created = new Map<string, number>();
  const cut = new Set<string>();
  const writesBy: Record<string, number> = {};
  const crossShard = new Set<string>();
  let conflicts = 0;
  const conflictTrail: string[] = [];
  for (const w of writes) {
    writesBy[w.user] = (writesBy[w.user] ?? 0) + 1;
    if (w.code === 409 && !(w.namespace === "vc-system" && w.name?.startsWith("vc-record-"))) {
      conflicts++;
      conflictTrail.push(`${w.time ?? ""} ${w.user} ${w.verb} ${w.resource} ${w.namespace ?? ""}/${w.name}`);
    }
    if (w.code === 201) {
      const key = writtenObject(w);
      created.set(key, (created.get(key) ?? 0) + 1);
    } else if (o.killed && w.user === o.killed.user && w.code >= 500 && w.time && new Date(w.time) >= o.killed.at) {
      // The server answered after the replica died: the client's cancel reached it while it stored the object, or
      // before.
      cut.add(writtenObject(w));
    }
    const cluster = clusterOfWrite(w, known);
    if (cluster !== undefined && shardOf(cluster, o.shardCount) !== o.shardOfUser.get(w.user))
      crossShard.add(`${w.user} ${w.verb} ${w.resource} ${w.namespace ?? ""}/${w.name}`);
  }
  const createdTwice = [...created]
    .filter(([, n]) => n > 1)
    .map(([k]) => k)
    .sort();
  const neverCreated = [...listed]
    .map((k) => {
      const parts = k.split("/");
      const [name, namespace] = [parts.pop()!, parts.pop()!];
      const kind = parts.pop()!;
      const type = PLURALS.get(`${parts.join("/")}/${kind}`);
      return `${type?.plural}/${namespace}/${name}`;
    })
    .filter((k) => !created.has(k))
    .sort();
  const uncreated = neverCreated.filter((k) => !cut.has(k));
  return {
    clusters: o.clusters.length,
    objects: listed.size,
    notApplied,
    twoRecords,
    owners,
    missing,
    createdTwice,
    createdTwiceTrail: trailOf(kube, createdTwice),
    neverCreated: uncreated,
    neverCreatedTrail: trailOf(kube, uncreated),
    cutByKill: neverCreated.filter((k) => cut.has(k)),
    conflicts,
    conflictTrail,
    crossShard: [...crossShard].sort(),
    writesBy,
  };
}

/**
 * `resource/namespace/name` of an audited write; a Namespace's namespace is empty (the audit log names the Namespace
 * itself).
 */
function writtenObject(w: AuditedWrite): string {
  return `${w.resource}/${w.resource === "namespaces" ? "" : (w.namespace ?? "")}/${w.name}`;
}

/** Every audited write (every stage logged) to the objects `keys` (writtenObject), in order. */
function trailOf(kube: RealKube, keys: string[]): string[] {
  const wanted = new Set(keys);
  return kube
    .writes()
    .filter((w) => wanted.has(writtenObject(w)))
    .map(
      (w) =>
        `${w.time ?? ""} ${w.auditId ?? ""} ${w.stage ?? ""} ${w.user} ${w.verb} ${w.code} ${w.resource} ` +
        `${w.namespace ?? ""}/${w.name ?? ""}`,
    );
}
