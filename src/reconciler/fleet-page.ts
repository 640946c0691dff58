// The fleet page on the reconciler: rows from the statuses the loop keeps, drift as of each cluster's last
// reconciliation, progress from the loop, the rollout from its memory; each settled cluster that changed is an event.
import { commitsOf } from "../git/log.js";
import { readClusterHealth } from "../health/read.js";
import type { KubeClient } from "../host/client.js";
import { labelsOf, type RepoAt } from "../ops/fleet-rows.js";
import type { ListRow } from "../ops/list.js";
import { loadDesired } from "../pipeline/load.js";
import { describeChange } from "../plan/fleet-summary.js";
import { appliedBy, type ClusterStatus } from "../records/status.js";
import { rolloutView, wavesByCluster, type RolloutView } from "../rollout/view.js";
import {
  countRows,
  type ClusterDetail,
  type FleetEvent,
  type FleetProgress,
  type FleetProvider,
  type FleetSummary,
} from "../ui/model.js";
import type { ClusterRun } from "./cluster.js";
import type { PassDeps, PassRequest, PassResult } from "./pass.js";
import type { ReconcileLoop } from "./loop.js";
import type { Snapshot, Source } from "./source.js";

/** What the last reconciliation of a cluster found: its drift then, and its changes in summary. */
interface LastRun {
  drift: ListRow["drift"];
  driftObjects?: number;
  diff: NonNullable<ClusterDetail["diff"]>;
}

/** Changes kept of a cluster's last plan for its page (the rest are counted). */
const KEPT_CHANGES = 50;

/** The drift a run leaves: in sync after a clean apply, the objects that failed or a blocked plan's changes. */
function lastRunOf(run: ClusterRun, at: string): LastRun | undefined {
  if (run.result === "skipped") return undefined;
  const plan = run.sync?.plan;
  const changes = plan?.changes.filter((c) => c.action !== "unchanged") ?? [];
  const diff: LastRun["diff"] = {
    at,
    changes: changes.slice(0, KEPT_CHANGES).map((c) => ({
      action: c.action,
      kind: c.ref.kind,
      ...(c.ref.namespace ? { namespace: c.ref.namespace } : {}),
      name: c.ref.name,
      change: describeChange(c),
    })),
    ...(plan?.blocked ? { blocked: plan.blocked } : {}),
  };
  if (run.result === "invalid") return { drift: "invalid", diff };
  const failed = run.sync?.results.filter((r) => r.outcome === "failed").length ?? 0;
  if (plan?.blocked && changes.length) return { drift: "yes", driftObjects: changes.length, diff };
  if (failed) return { drift: "yes", driftObjects: failed, diff };
  if (run.result === "applied" || run.result === "deleted") return { drift: "no", diff };
  return { drift: "unknown", diff };
}

/** A source whose syncs are told to `onSync` (the revision followed, and when it was fetched). */
export function observedSource(source: Source, onSync: (s: Snapshot) => void): Source {
  return new Proxy(source, {
    get(target, prop) {
      if (prop === "sync")
        return async () => {
          const snap = await target.sync();
          onSync(snap);
          return snap;
        };
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export interface ReconcilerFleetOptions {
  /** The target's description (`kube context x`, `dir:out`). */
  target: string;
  /** The host's client, when the target is a host: objects' health is read with it on a cluster's page. */
  client?: KubeClient;
  /** Milliseconds between two fleet events at most (default 1 s). */
  summaryEveryMs?: number;
}

/** The reconciler's fleet for its page. Call the on* methods from the loop's hooks. */
export class ReconcilerFleet implements FleetProvider {
  #loop?: ReconcileLoop;
  #deps?: PassDeps;
  #snap?: Snapshot;
  #fetchedAt?: string;
  #pass?: FleetProgress["pass"];
  #lastPass?: FleetProgress["lastPass"];
  #error?: string;
  #runs = new Map<string, LastRun>();
  #labels = new Map<string, Record<string, string>>();
  #commits = new Map<string, { subject: string; author: string; time: string } | null>();
  #rows = new Map<string, { status: ClusterStatus; run?: LastRun; row: ListRow; json: string }>();
  #listeners = new Set<(e: FleetEvent) => void>();
  /** The rows sorted by name, as last handed out (by name, and as an array). */
  #sorted?: Map<string, ListRow>;
  #sortedRows: ListRow[] = [];
  #summaryTimer?: NodeJS.Timeout;
  #rolloutFor?: { record: unknown; view?: RolloutView; waves?: ReturnType<typeof wavesByCluster> };

  constructor(readonly opts: ReconcilerFleetOptions) {}

  /** The loop whose state the page shows. */
  attach(loop: ReconcileLoop): void {
    this.#loop = loop;
    this.#deps = loop.deps;
  }

  onSync(snap: Snapshot): void {
    if (this.#snap?.revision !== snap.revision) this.#labels.clear();
    this.#snap = snap;
    this.#fetchedAt = new Date().toISOString();
    this.#summarySoon();
  }

  onPassStart(req: PassRequest): void {
    this.#pass = { kind: req.kind, since: new Date().toISOString(), settled: 0 };
    this.#summarySoon();
  }

  onCluster(run: ClusterRun): void {
    const last = lastRunOf(run, new Date().toISOString());
    if (last) this.#runs.set(run.cluster, last);
    else this.#runs.delete(run.cluster);
    this.#labels.delete(run.cluster);
    if (this.#pass) this.#pass.settled++;
    if (run.result === "deleted") {
      this.#runs.delete(run.cluster);
      if (this.#rows.delete(run.cluster)) this.#emit({ type: "removed", name: run.cluster });
    } else if (run.status) {
      const before = this.#rows.get(run.cluster)?.json;
      const entry = this.#row(run.cluster, run.status);
      if (entry.json !== before) this.#emit({ type: "cluster", row: entry.row });
    }
    this.#summarySoon();
  }

  onPass(r: PassResult | { error: Error; retryInMs: number }): void {
    this.#pass = undefined;
    if ("error" in r) this.#error = `the last pass failed: ${r.error.message}; retrying in ${r.retryInMs} ms`;
    else {
      this.#error = undefined;
      this.#lastPass = {
        kind: r.kind,
        revision: r.revision,
        ended: new Date().toISOString(),
        clusters: r.clusters.length,
        problems: r.problems,
      };
    }
    void this.#resolveCommits();
    this.#summarySoon();
  }

  /** The subjects of the applied revisions not read yet (a few per pass): rows that gain one are told. */
  async #resolveCommits(): Promise<void> {
    const root = this.#snap?.root;
    if (!root) return;
    const wanted = new Set<string>();
    for (const s of this.#statuses().values())
      if (s.lastAppliedRevision && !this.#commits.has(s.lastAppliedRevision)) wanted.add(s.lastAppliedRevision);
    if (wanted.size === 0) return;
    const found = await commitsOf(root, wanted);
    for (const rev of wanted) {
      const c = found.get(rev);
      this.#commits.set(rev, c ? { subject: c.subject, author: c.author, time: c.time } : null);
    }
    for (const [name, s] of this.#statuses()) {
      if (!s.lastAppliedRevision || !wanted.has(s.lastAppliedRevision)) continue;
      const before = this.#rows.get(name)?.json;
      const entry = this.#row(name, s);
      if (entry.json !== before) this.#emit({ type: "cluster", row: entry.row });
    }
  }

  #statuses(): ReadonlyMap<string, ClusterStatus> {
    return this.#loop?.state.statuses ?? new Map();
  }

  #waves(): ReturnType<typeof wavesByCluster> | undefined {
    const record = this.#loop?.state.rollout?.last ?? undefined;
    if (this.#rolloutFor?.record !== record) {
      const view = record ? rolloutView(record) : undefined;
      this.#rolloutFor = { record, ...(view ? { view, waves: wavesByCluster(view) } : {}) };
    }
    return this.#rolloutFor?.waves;
  }

  /** The row of a cluster from its status, rebuilt when its status, last run or labels changed. */
  #row(name: string, status: ClusterStatus): { status: ClusterStatus; run?: LastRun; row: ListRow; json: string } {
    const run = this.#runs.get(name);
    const kept = this.#rows.get(name);
    const labels = this.#labelsOf(name);
    const wave = this.#waves()?.get(name);
    if (kept && kept.status === status && kept.run === run && kept.row.labels === labels && kept.row.wave === wave)
      return kept;
    const drift: ListRow["drift"] =
      run?.drift ?? (status.result === "applied" ? "no" : status.result === "invalid" ? "invalid" : "unknown");
    const row: ListRow = {
      name,
      namespace: status.hostNamespace,
      controlPlane: "unknown",
      ready: "-",
      drift,
      ...(run?.driftObjects !== undefined ? { driftObjects: run.driftObjects } : {}),
      source: "both",
      health: status.health ?? "Unknown",
      labels,
    };
    if (status.healthReason && status.health !== "Healthy") row.healthReason = status.healthReason;
    if (status.lastAppliedRevision) {
      row.lastAppliedRevision = status.lastAppliedRevision;
      row.lastAppliedBy = appliedBy(status);
      if (status.lastAppliedTime) row.lastAppliedTime = status.lastAppliedTime;
      const c = this.#commits.get(status.lastAppliedRevision);
      if (c) row.commit = c;
    }
    if (status.result) row.result = status.result;
    if (status.suspendedBy) row.note = `suspended by ${status.suspendedBy}`;
    else if (status.result && status.result !== "applied" && status.message) row.note = status.message;
    if (wave) row.wave = wave;
    const entry = { status, ...(run ? { run } : {}), row, json: JSON.stringify(row) };
    this.#rows.set(name, entry);
    return entry;
  }

  #labelsOf(name: string): Record<string, string> {
    let labels = this.#labels.get(name);
    if (!labels) {
      labels = this.#snap ? labelsOf(this.#snap.root, name) : {};
      this.#labels.set(name, labels);
    }
    return labels;
  }

  rows(): readonly ListRow[] {
    const statuses = this.#statuses();
    let changed = this.#sorted === undefined || this.#sorted.size !== statuses.size;
    for (const [name, s] of statuses) if (this.#sorted?.get(name) !== this.#row(name, s).row) changed = true;
    if (changed) {
      for (const name of this.#rows.keys()) if (!statuses.has(name)) this.#rows.delete(name);
      const names = [...statuses.keys()].sort();
      this.#sorted = new Map(names.map((name) => [name, this.#rows.get(name)!.row]));
      this.#sortedRows = [...this.#sorted.values()];
    }
    return this.#sortedRows;
  }

  summary(): FleetSummary {
    const loop = this.#loop;
    const pending = loop?.pending;
    const r = this.#waves() ? this.#rolloutFor?.view : undefined;
    return {
      served: {
        by: "reconciler",
        target: this.opts.target,
        ...(this.#deps ? { repository: this.#deps.source.description } : {}),
      },
      ...countRows(this.rows()),
      progress: {
        ...(this.#snap ? { revision: this.#snap.revision } : {}),
        ...(this.#fetchedAt ? { fetchedAt: this.#fetchedAt } : {}),
        ...(this.#pass ? { pass: { ...this.#pass } } : {}),
        queue: {
          full: pending?.full ?? false,
          changes: [...new Set(pending?.paths ?? [])].sort().slice(0, 50),
          retry: [...(loop?.state.retry ?? [])].sort().slice(0, 50),
        },
        ...(this.#lastPass ? { lastPass: this.#lastPass } : {}),
        ...(this.#error ? { error: this.#error } : {}),
      },
      ...(r ? { rollout: { id: r.id, phase: r.phase, wave: r.wave, message: r.message } } : {}),
      updated: new Date().toISOString(),
      notes: [],
    };
  }

  rollout(): RolloutView | undefined {
    this.#waves();
    return this.#rolloutFor?.view;
  }

  subscribe(listener: (e: FleetEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One cluster: its status with history (one read of the records), its objects' health (a host), its last run. */
  async cluster(name: string): Promise<ClusterDetail | undefined> {
    const status = this.#statuses().get(name);
    if (!status) return undefined;
    const entry = this.#row(name, status);
    const detail: ClusterDetail = { cluster: entry.row, commits: {} };
    const full = { ...status };
    if (this.#deps) full.history = await this.#deps.store.history(status).catch(() => status.history);
    detail.status = full;
    if (entry.run) detail.diff = entry.run.diff;
    if (this.opts.client && this.#snap) {
      const repo: RepoAt = this.#snap;
      try {
        const desired = await loadDesired(repo.root, repo.revision, {
          clusters: [name],
          ...(this.#deps ? { engine: this.#deps.engine } : {}),
        });
        const c = desired.clusters.find((x) => x.name === name);
        if (c) detail.objects = (await readClusterHealth(this.opts.client, c.hostNamespace, c.objects)).objects;
        else detail.objectsNote = "its folder is not valid at the revision followed: its objects are not known";
      } catch (err) {
        detail.objectsNote = `the objects' health could not be read: ${(err as Error).message}`;
      }
    } else
      detail.objectsNote = `${this.opts.target} is a folder of manifests: it has no live objects to read health from`;
    if (this.#snap) {
      const commits = await commitsOf(
        this.#snap.root,
        full.history.map((h) => h.revision),
      );
      for (const [rev, c] of commits) detail.commits[rev] = { subject: c.subject, author: c.author, time: c.time };
    }
    return detail;
  }

  #emit(e: FleetEvent): void {
    for (const l of this.#listeners) l(e);
  }

  /** A fleet event soon, at most one a `summaryEveryMs`. */
  #summarySoon(): void {
    if (this.#summaryTimer || this.#listeners.size === 0) return;
    this.#summaryTimer = setTimeout(() => {
      this.#summaryTimer = undefined;
      this.#emit({ type: "fleet", summary: this.summary() });
    }, this.opts.summaryEveryMs ?? 1000);
    this.#summaryTimer.unref();
  }

  close(): void {
    clearTimeout(this.#summaryTimer);
    this.#listeners.clear();
  }
}
