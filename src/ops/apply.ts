// `vc apply` as an operation: the repository's run through the pipeline, each chunk recorded as it ends, then what the
// run left alone recorded, and (with a wait) the applied clusters' health waited for.
import { healthRefs, waitForClusters, type HealthTarget } from "../health/fleet.js";
import { REAL_CLOCK, type WaitOutcome } from "../health/wait.js";
import { EXIT } from "../model/errors.js";
import { applyFleet, type ApplyFleetOptions, type FleetApplyReport } from "../pipeline/fleet.js";
import type { DesiredIndex } from "../pipeline/load.js";
import { runRecorder, type RunRecord } from "../pipeline/record-run.js";
import type { SyncResult } from "../plan/types.js";
import { KubeTarget } from "../sinks/kube/target.js";
import type { Target } from "../sinks/types.js";

export interface ApplyRunOptions {
  fleet: ApplyFleetOptions;
  /** What goes on each cluster's record (undefined: a dry run, nothing recorded). */
  record?: Omit<Parameters<typeof runRecorder>[1], "store" | "actor">;
  /** Wait this long for every applied cluster to become Healthy (a live host), when the run ended clean. */
  waitMs?: number;
  /** Each chunk's synced clusters, whole, as they end (the report printed as the run goes). */
  onResults?: (results: readonly SyncResult[]) => void;
  /** After each chunk: clusters done of the clusters to apply. */
  onChunkDone?: (done: number, total: number) => void;
}

export interface ApplyRun {
  report: FleetApplyReport;
  run?: RunRecord;
  waited?: WaitOutcome;
}

/** Applies the indexed clusters a chunk at a time, each chunk put on the record as it ends. */
export async function applyRepository(target: Target, index: DesiredIndex, opts: ApplyRunOptions): Promise<ApplyRun> {
  const desired = index.state;
  // With a wait, each applied cluster as its health is read: its host namespace and the references of its objects.
  const healthTargets: HealthTarget[] = [];
  const recorder = opts.record ? runRecorder(target, opts.record) : undefined;
  // A target that keeps no records has no statuses read ahead: each chunk's are read one by one, never the whole
  // fleet's.
  const oneByOne = !target.recorded;
  // Each cluster's apply lease names this run; each cluster is recorded as it ends, its lease given up by the write.
  const run =
    opts.fleet.run ?? (opts.record ? { via: `vc ${opts.record.via}`, revision: opts.record.revision } : undefined);
  const report = await applyFleet(
    target,
    index,
    { ...opts.fleet, ...(run ? { run } : {}) },
    {
      unitPerChunk: true,
      onOutcome: async (o) => {
        try {
          if (o.state === "synced")
            await recorder?.record({ results: [o.sync!], suspended: [] }, { ...desired, errors: [] }, { oneByOne });
        } finally {
          // A lease the record did not take back (nothing worth recording, a record that failed) is given up here.
          await target.release?.(o.cluster).catch(() => undefined);
        }
      },
      onChunk: async (outcomes) => {
        const results = outcomes.filter((o) => o.state === "synced").map((o) => o.sync!);
        opts.onResults?.(results);
        if (opts.waitMs !== undefined) for (const r of results) if (r.ok) healthTargets.push(healthTargetOf(r));
      },
      onChunkDone: (done, total) => opts.onChunkDone?.(done, total),
    },
  );
  // The clusters recorded with no sync: suspended in cluster.yaml, and invalid (the repository's errors).
  const synced = new Set(report.results.map((r) => r.cluster));
  await recorder?.record(
    { results: [], suspended: report.suspended },
    { ...desired, errors: (report.invalid ?? []).filter((e) => !synced.has(e.cluster)) },
    { oneByOne },
  );
  const recorded = recorder?.run();
  // Only a clean apply is waited for: a failed or blocked one already says what went wrong.
  const clean = applyExitCode(report, recorded) === EXIT.ok;
  const waited =
    opts.waitMs !== undefined && clean && target instanceof KubeTarget
      ? await waitForClusters(
          target.client,
          healthTargets,
          healthTargets.map((c) => c.name),
          REAL_CLOCK,
          { timeoutMs: opts.waitMs },
        )
      : undefined;
  return { report, ...(recorded ? { run: recorded } : {}), ...(waited ? { waited } : {}) };
}

/**
 * 2 when an object or a record failed, or another run was writing a cluster; 1 when a cluster is invalid or blocked,
 * or suspended at run time (the repository asks for it, but it was not applied); else 0 (a cluster suspended in
 * cluster.yaml included).
 */
export function applyExitCode(report: FleetApplyReport, run: RunRecord | undefined): number {
  if (
    report.results.some((r) => r.counts.failed > 0) ||
    run?.clusters.some((c) => c.outcome === "failed") ||
    (report.busy?.length ?? 0) > 0
  )
    return EXIT.failure;
  if (report.errors.length > 0 || report.results.some((r) => r.plan.blocked) || report.suspendedAtRunTime.length > 0)
    return EXIT.invalid;
  return EXIT.ok;
}

/**
 * A synced cluster as its health is read: the references of the objects it holds after the run (what was not deleted).
 */
function healthTargetOf(r: SyncResult): HealthTarget {
  return {
    name: r.cluster,
    hostNamespace: r.plan.hostNamespace ?? "",
    objects: healthRefs(r.plan.changes.filter((c) => c.action !== "delete").map((c) => c.ref)),
  };
}
