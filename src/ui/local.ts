// `vc ui`'s fleet: the rows `vc list` reads of a target (a folder target's status files, or a host with the user's own
// kubeconfig), read again at an interval; each row that changed is an event of the page's stream.
import { describeChange } from "../plan/fleet-summary.js";
import { commitsOf } from "../git/log.js";
import { KubeClient } from "../host/client.js";
import { healthOfRepoCluster } from "../health/fleet.js";
import type { ListRow } from "../ops/list.js";
import { KubeHost } from "../ops/host.js";
import { findCluster } from "../ops/cluster-ref.js";
import { doctorReport, type DoctorReport } from "../ops/doctor/report.js";
import { listHostFleet, listTargetClusters, withRepositoryFacts } from "../ops/fleet-rows.js";
import { loadDesiredIndex } from "../pipeline/load.js";
import { planFleet } from "../pipeline/fleet.js";
import { resolveSource } from "../pipeline/source.js";
import type { RolloutView } from "../rollout/view.js";
import { openTarget } from "../sinks/index.js";
import { KubeTarget } from "../sinks/kube/target.js";
import type { Target } from "../sinks/types.js";
import { countRows, type ClusterDetail, type FleetEvent, type FleetProvider, type FleetSummary } from "./model.js";

export interface LocalFleetOptions {
  /** The repository folder (or a folder in it). */
  path: string;
  /** `kube` or `dir:PATH`. */
  target: string;
  kubeconfig?: string;
  context?: string;
  /** Milliseconds between the end of one read and the start of the next. */
  refreshMs: number;
}

/** The fleet of a repository and a target as `vc list` reads it, kept and read again every `refreshMs`. */
export class LocalFleet implements FleetProvider {
  #rows: ListRow[] = [];
  #byName = new Map<string, string>();
  #rollout?: RolloutView;
  #summary: FleetSummary;
  #listeners = new Set<(e: FleetEvent) => void>();
  #timer?: NodeJS.Timeout;
  #closed = false;
  #root = "";
  #revision = "";

  private constructor(
    readonly opts: LocalFleetOptions,
    readonly target: Target,
  ) {
    this.#summary = this.#summarise([]);
  }

  /** Opens the target and reads the fleet once; then again every `refreshMs` until close(). */
  static async open(opts: LocalFleetOptions): Promise<LocalFleet> {
    const target =
      opts.target === "kube"
        ? new KubeTarget(KubeClient.open({ kubeconfig: opts.kubeconfig, context: opts.context }))
        : await openTarget(opts.target);
    const fleet = new LocalFleet(opts, target);
    try {
      await fleet.refresh();
    } catch (err) {
      await target.close();
      throw err;
    }
    fleet.#schedule();
    return fleet;
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.refresh()
        .catch((err: unknown) => {
          this.#summary = { ...this.#summary, notes: [`the last read failed: ${(err as Error).message}`] };
          this.#emit({ type: "fleet", summary: this.#summary });
        })
        .finally(() => this.#schedule());
    }, this.opts.refreshMs);
    this.#timer.unref();
  }

  /** Reads the fleet again; each row that changed (or went) is told to the subscribers, then the summary. */
  async refresh(): Promise<void> {
    const source = await resolveSource({ path: this.opts.path });
    this.#root = source.root;
    this.#revision = source.revision;
    const repo = { root: source.root, revision: source.revision };
    const notes: string[] = [];
    let listed: { rows: ListRow[]; notes: string[] };
    let rollout: RolloutView | undefined;
    if (this.target instanceof KubeTarget) {
      const fleet = await listHostFleet(new KubeHost(this.target.client), repo);
      listed = fleet;
      rollout = fleet.rollout;
    } else {
      listed = await listTargetClusters(this.target, repo);
      await withRepositoryFacts(listed.rows, source.root);
    }
    if (this.#closed) return;
    const next = new Map(listed.rows.map((r) => [r.name, JSON.stringify(r)]));
    const changed = listed.rows.filter((r) => this.#byName.get(r.name) !== next.get(r.name));
    const gone = [...this.#byName.keys()].filter((n) => !next.has(n));
    this.#rows = listed.rows;
    this.#byName = next;
    this.#rollout = rollout;
    const summary = this.#summarise([...listed.notes, ...notes]);
    for (const row of changed) this.#emit({ type: "cluster", row });
    for (const name of gone) this.#emit({ type: "removed", name });
    const { updated: _a, ...before } = this.#summary;
    const { updated: _b, ...after } = summary;
    this.#summary = summary;
    if (changed.length || gone.length || JSON.stringify(before) !== JSON.stringify(after))
      this.#emit({ type: "fleet", summary });
  }

  #summarise(notes: string[]): FleetSummary {
    const r = this.#rollout;
    return {
      served: { by: "vc ui", target: this.target.description, repository: this.#root },
      ...countRows(this.#rows),
      progress: {
        revision: this.#revision,
        fetchedAt: new Date().toISOString(),
        queue: { full: false, changes: [], retry: [] },
      },
      ...(r ? { rollout: { id: r.id, phase: r.phase, wave: r.wave, message: r.message } } : {}),
      updated: new Date().toISOString(),
      notes,
    };
  }

  #emit(e: FleetEvent): void {
    for (const l of this.#listeners) l(e);
  }

  rows(): readonly ListRow[] {
    return this.#rows;
  }

  summary(): FleetSummary {
    return this.#summary;
  }

  rollout(): RolloutView | undefined {
    return this.#rollout;
  }

  subscribe(listener: (e: FleetEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One cluster: its row, status and history on the target, its objects' health (a host), a fresh plan in summary. */
  async cluster(name: string): Promise<ClusterDetail | undefined> {
    const row = this.#rows.find((r) => r.name === name);
    if (!row) return undefined;
    const store = this.target.statusStore();
    const status = (await store.list()).find((s) => s.cluster === name);
    if (status) status.history = await store.history(status);
    const detail: ClusterDetail = { cluster: row, commits: {}, ...(status ? { status } : {}) };
    if (this.target instanceof KubeTarget && row.source !== "host") {
      const h = await healthOfRepoCluster(this.target.client, this.#root, this.#revision, name).catch(
        (err: unknown) => ({ objects: undefined, error: (err as Error).message }),
      );
      if (h.objects) detail.objects = h.objects;
      else detail.objectsNote = `the objects' health could not be read: ${"error" in h ? h.error : ""}`;
    } else if (!(this.target instanceof KubeTarget))
      detail.objectsNote = `${this.target.description} is a folder of manifests: no live objects to read health from`;
    if (row.source !== "host") {
      const index = await loadDesiredIndex(this.#root, this.#revision, { clusters: [name] });
      const report = await planFleet(this.target, index, { prune: true, allowMassPrune: true, selected: [name] });
      const plan = report.plans.find((p) => p.cluster === name);
      if (plan)
        detail.diff = {
          at: new Date().toISOString(),
          changes: plan.changes
            .filter((c) => c.action !== "unchanged")
            .map((c) => ({
              action: c.action,
              kind: c.ref.kind,
              ...(c.ref.namespace ? { namespace: c.ref.namespace } : {}),
              name: c.ref.name,
              change: describeChange(c),
            })),
          ...(plan.blocked ? { blocked: plan.blocked } : {}),
        };
    }
    const commits = await commitsOf(this.#root, status?.history.map((h) => h.revision) ?? []);
    for (const [rev, c] of commits) detail.commits[rev] = { subject: c.subject, author: c.author, time: c.time };
    return detail;
  }

  /** vc doctor's report of one cluster, on a host (read with the user's kubeconfig); undefined on a folder target. */
  async doctor(name: string): Promise<DoctorReport | undefined> {
    if (!(this.target instanceof KubeTarget)) return undefined;
    return doctorReport(new KubeHost(this.target.client), await findCluster(name, { repo: this.#root }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#listeners.clear();
    await this.target.close();
  }
}
