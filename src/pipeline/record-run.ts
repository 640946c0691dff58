// Puts a `vc apply` (or `vc adopt`) on the record: per cluster, the status and history entry the reconciler writes,
// with who ran it and from which commit.
import { defaultHostNamespace } from "../model/cluster.js";
import type { DesiredState } from "./load.js";
import { shortRevision } from "../git/dirty.js";
import { recordedName, type Identity } from "../host/identity.js";
import { mapLimit } from "../util/pool.js";
import type { SyncResult } from "../plan/types.js";
import type { Target } from "../sinks/types.js";
import { interrupted, removedOutcome, syncOutcome, worthWriting } from "../records/outcome.js";
import {
  record,
  ZERO_COUNTS,
  type ClusterStatus,
  type Counts,
  type Reconciliation,
  type RecordedVia,
  type Result,
} from "../records/status.js";
import { readStatuses, type StatusStore, type StatusStoreOptions } from "../records/status-store.js";

/** The part of a run to record: the clusters it synced and those it left alone as cluster.yaml asks. */
export interface RunPart {
  results: readonly SyncResult[];
  suspended: readonly string[];
}

export interface ApplyRecordOptions {
  store: StatusStore;
  /** The revision applied: a commit SHA, `<sha>-dirty` (git/dirty.ts), or `local`. */
  revision: string;
  /** Who ran it (host/identity.ts): asked once, and only when there is something to record. */
  actor: () => Promise<Identity>;
  via: RecordedVia;
  /** This source's owner name: a status another owner wrote is never rewritten. */
  owner?: string;
  /** Owners this run takes over (`vc adopt --from`): their statuses become this source's. */
  adoptFrom?: string[];
  /** When the run started (the time of every entry it records). */
  started: Date;
  /** The clusters the run was limited to: their statuses are read one by one, instead of every status in one LIST. */
  selected?: string[];
  /** Statuses this run already read before planning (run-suspension.ts): not read again. */
  statuses?: ReadonlyMap<string, ClusterStatus | undefined>;
  /** `--ignore-suspension`: a cluster suspended at run time was applied all the same, and is recorded as usual. */
  ignoreSuspension?: boolean;
  /** Read the statuses not given one by one even without a selection (a streamed run records a chunk at a time). */
  oneByOne?: boolean;
}

type RecordOutcome =
  /** The status (and history) now hold this run. */
  | "recorded"
  /** Nothing new: nothing of the cluster written or failed, and the same result (and message) as the last record. */
  | "unchanged"
  /** The cluster's folder is gone and its objects were pruned: its status is removed, as the reconciler does. */
  | "forgotten"
  /** Another source owns the cluster or its status: left as it is. */
  | "not-owned"
  /**
   * Nothing of the cluster is on the host (no host namespace) and this run created nothing: reported by the command
   * only.
   */
  | "nothing-live"
  /**
   * Suspended at run time (`vc restore`): its status belongs to the operation that suspended it, nothing is recorded.
   */
  | "suspended"
  /** The status could not be written (`message` says why). */
  | "failed";

export interface ClusterRecord {
  cluster: string;
  outcome: RecordOutcome;
  message?: string;
}

interface Unit {
  cluster: string;
  hostNamespace: string;
  result: Result;
  counts: Counts;
  message: string;
  durationMs: number;
  sync?: SyncResult;
}

/** What a run put on the record: at which revision, by whom, and per cluster. */
export interface RunRecord {
  revision: string;
  /** Undefined when nothing needed recording (the identity was not asked for). */
  actor?: Identity;
  clusters: ClusterRecord[];
}

/**
 * Records a run on the target's own status store (ConfigMaps on a host, files in a dir: folder), as the identity
 * Target.actor finds.
 */
export async function recordOnTarget(
  target: Target,
  report: RunPart,
  desired: DesiredState,
  opts: Omit<ApplyRecordOptions, "store" | "actor"> & StatusStoreOptions,
): Promise<RunRecord> {
  const recorder = runRecorder(target, opts);
  await recorder.record(report, desired);
  return recorder.run();
}

/**
 * Records a run in parts (a streamed `vc apply` records each cluster as it ends): who ran it is asked once, and the
 * run's record lists every part's clusters by name.
 */
export function runRecorder(target: Target, opts: Omit<ApplyRecordOptions, "store" | "actor"> & StatusStoreOptions) {
  let asked: Promise<Identity> | undefined;
  let actor: Identity | undefined;
  const ask = (): Promise<Identity> => (asked ??= target.actor().then((a) => (actor = a)));
  const store = target.statusStore({ historyLimit: opts.historyLimit });
  const clusters: ClusterRecord[] = [];
  return {
    async record(
      report: RunPart,
      desired: DesiredState,
      extra: Pick<ApplyRecordOptions, "oneByOne"> = {},
    ): Promise<void> {
      clusters.push(...(await recordApply(report, desired, { ...opts, ...extra, store, actor: ask })));
    },
    /** The run's record; its clusters by name (they are recorded as each ends, in any order). */
    run(): RunRecord {
      const byName = [...clusters].sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
      return { revision: opts.revision, actor, clusters: byName };
    },
  };
}

/**
 * Records every cluster the run planned, left suspended, or found invalid; clusters outside the repository and dry runs
 * are the caller's to leave out.
 */
async function recordApply(report: RunPart, desired: DesiredState, opts: ApplyRecordOptions): Promise<ClusterRecord[]> {
  const namespaceOf = (cluster: string, sync?: SyncResult): string =>
    desired.known.get(cluster) ??
    sync?.plan.changes.find((c) => c.ref.namespace)?.ref.namespace ??
    defaultHostNamespace(cluster);
  const units: Unit[] = [];
  for (const sync of report.results) {
    const present = desired.known.has(sync.cluster);
    units.push({
      cluster: sync.cluster,
      hostNamespace: namespaceOf(sync.cluster, sync),
      ...(present ? syncOutcome(sync) : removedOutcome(sync, opts.revision)),
      durationMs: sync.durationMs,
      sync,
    });
  }
  for (const cluster of report.suspended) {
    units.push({
      cluster,
      hostNamespace: namespaceOf(cluster),
      result: "suspended",
      counts: { ...ZERO_COUNTS },
      message: "suspended in cluster.yaml",
      durationMs: 0,
    });
  }
  const planned = new Set(units.map((u) => u.cluster));
  for (const e of desired.errors) {
    if (!desired.known.has(e.cluster) || planned.has(e.cluster)) continue;
    planned.add(e.cluster);
    units.push({
      cluster: e.cluster,
      hostNamespace: namespaceOf(e.cluster),
      result: "invalid",
      counts: { ...ZERO_COUNTS },
      message: `invalid: ${e.message}`,
      durationMs: 0,
    });
  }
  // The statuses read before planning (run-suspension.ts) are not read again: only the others (removed clusters).
  const known = opts.statuses ?? new Map<string, ClusterStatus | undefined>();
  const read = await readStatuses(
    opts.store,
    units.filter((u) => !known.has(u.cluster)),
    { oneByOne: !!opts.selected?.length || !!opts.oneByOne },
  );
  const statuses = new Map([...known, ...read]);
  return mapLimit(units, 4, (u) => recordOne(u, statuses.get(u.cluster), opts));
}

async function recordOne(u: Unit, prev: ClusterStatus | undefined, opts: ApplyRecordOptions): Promise<ClusterRecord> {
  const cluster = u.cluster;
  if (prev?.suspendedBy && !opts.ignoreSuspension)
    return {
      cluster,
      outcome: "suspended",
      message: `suspended by ${prev.suspendedBy} (run-time): its status is left to that operation`,
    };
  const others =
    u.sync?.plan.ownerConflict ??
    (prev?.owner !== undefined &&
    opts.owner !== undefined &&
    prev.owner !== opts.owner &&
    !opts.adoptFrom?.includes(prev.owner)
      ? [prev.owner]
      : undefined);
  if (others)
    return {
      cluster,
      outcome: "not-owned",
      message: `owned by ${others.join(", ")}: its status is that source's, not rewritten`,
    };
  try {
    if (u.result === "deleted") {
      if (!prev) return { cluster, outcome: "unchanged" };
      await opts.store.remove(cluster, u.hostNamespace);
      return { cluster, outcome: "forgotten" };
    }
    const entry: Reconciliation = {
      revision: opts.revision,
      time: opts.started.toISOString(),
      durationMs: u.durationMs,
      result: u.result,
      counts: u.counts,
      message: u.message,
      via: opts.via,
    };
    if (u.result === "invalid")
      entry.message += `; ${prev?.lastAppliedRevision ? `revision ${shortRevision(prev.lastAppliedRevision)} stays live` : "nothing applied"}`;
    // As a full resync: a newer commit that changed nothing of the cluster is no new record (CI applying every merge
    // would otherwise push every meaningful entry out of the history), unless a run that held the cluster never ended:
    // its writes may have landed, and the host is now verified at this revision. Who ran it is asked only when the
    // status read before the run says something may be written (the write itself decides on the status as stored).
    if (!prev?.applying && !worthWriting(prev, entry, false)) return { cluster, outcome: "unchanged" };
    const actor = await opts.actor();
    const by = { by: recordedName(actor), byFrom: actor.from };
    let folded = false;
    const written = await opts.store.update(
      cluster,
      u.hostNamespace,
      (stored, seen) => {
        folded = true;
        // A hand-over (vc adopt --from) writes this source's first status over the other source's, read before the run.
        const current = stored ?? (opts.adoptFrom?.length ? prev : undefined);
        if (!seen.gone && !worthWriting(current, entry, false)) return undefined;
        const e = seen.gone ? { ...entry, message: `${entry.message}; ${interrupted(seen.gone)}` } : entry;
        const status = record(current, cluster, u.hostNamespace, { ...e, ...by });
        if (opts.owner !== undefined) status.owner = opts.owner;
        return status;
      },
      // vc apply never creates a host namespace only to hold the record of a run that applied nothing there.
      { createNamespace: false },
    );
    if (written) return { cluster, outcome: "recorded" };
    return { cluster, outcome: folded ? "unchanged" : "nothing-live" };
  } catch (err) {
    return { cluster, outcome: "failed", message: (err as Error).message };
  }
}
