// The reconciler's side of rollouts (I/O edge): each pass reads the rollout record, starts or steps the rollout, writes
// it, and pins every cluster it loads.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../model/log.js";
import { peekLabels, readFleetBase, type FleetBase } from "../repo/fleet-base.js";
import type { LoadedCluster } from "../pipeline/engine.js";
import type { ClusterStatus } from "../records/status.js";
import { KubeApiError } from "../host/client.js";
import { KubeTarget } from "../sinks/kube/target.js";
import type { Target } from "../sinks/types.js";
import { loadRollout } from "../validate/rollout-file.js";
import { inFlight, observedHealth, pinOf, previousOf, returnedClusters, startingPin, waitingMessage } from "./pins.js";
import { planWaves, type Member } from "./plan.js";
import { effectiveLayers, materialise, privateBasesDir, readBase, type BaseSnapshot } from "./snapshot.js";
import { begin, isFinal, step } from "./step.js";
import { RolloutStore } from "./store.js";
import type { RolloutRecord } from "./types.js";
import type { RolloutSettings } from "../model/rollout-file.js";

/** What the reconciler keeps of rollouts between passes (in its pass state). */
export interface RolloutMemory {
  /** Base snapshots by digest: content, materialised folder, groups. */
  snapshots: Map<string, { snap: BaseSnapshot; root: string; fleet: FleetBase }>;
  /** Digests known to be stored in the records namespace. */
  stored: Set<string>;
  /** Whether a rollout is running (neither Completed nor Aborted): the loop then ticks. */
  active: boolean;
  /** Said once: rollouts are not driven on a dir: target. */
  notedDir?: boolean;
  /** Said once per digest: a base too large to pin. */
  notedLarge?: string;
  basesDir?: string;
  /** The record as the last pass left it (null: none); undefined until a pass read it. */
  last?: RolloutRecord | null;
  /** The digest of the newest base the last pass saw. */
  current?: string;
}

export function newRolloutMemory(): RolloutMemory {
  return { snapshots: new Map(), stored: new Set(), active: false };
}

export interface DriverDeps {
  target: Target;
  owner?: string;
  logger: Logger;
  mayWrite: () => boolean;
  /** Where base snapshots are materialised (default: a private folder of this process). */
  basesDir?: string;
  now?: () => Date;
  /** Only the first shard's replica drives a rollout; the others render by its record. */
  drives?: boolean;
  /**
   * The fleet is sharded: the driving replica holds only its own shard's statuses, so it reads every cluster's from
   * the records (one LIST per pass that steps a rollout) to know where each cluster is and how the wave is doing.
   */
  sharded?: boolean;
}

/** A pass's view of the rollout. */
export interface PassRollout {
  /** Clusters to reconcile in this pass for the rollout (moved, in flight, sent back). */
  extra: string[];
  /** The `bases` load option for these clusters: the snapshot folder of each cluster pinned to an older base. */
  basesFor(names: readonly string[]): Promise<Record<string, string>>;
  /**
   * Sets each loaded cluster's pin; a cluster invalid over its pinned base and valid over the newest waits for its
   * wave.
   */
  annotate(loaded: LoadedCluster[], reload: (names: string[]) => Promise<LoadedCluster[]>): Promise<void>;
  record?: RolloutRecord;
}

/** No rollout: every cluster is at the newest base and unpinned. */
const UNPINNED: PassRollout = {
  extra: [],
  basesFor: async () => ({}),
  annotate: async (loaded) => {
    for (const c of loaded) c.rollout = {};
  },
};

/**
 * The rollout of a pass: undefined on a target without records (dir:), where the base moves at once. `statuses`: the
 * clusters' last statuses (their `base`); `folders`: every cluster folder of the revision.
 */
export async function rolloutForPass(
  deps: DriverDeps,
  mem: RolloutMemory,
  root: string,
  revision: string,
  statuses: ReadonlyMap<string, ClusterStatus>,
  folders: () => string[],
  kind: "full" | "incremental" = "full",
): Promise<PassRollout | undefined> {
  const file = loadRollout(root);
  if (!(deps.target instanceof KubeTarget)) {
    if (file.present && !mem.notedDir)
      deps.logger.info(
        "fleet/rollout.yaml is not driven on this target: rollouts need a kube target (the base applies to every " +
          "cluster at once)",
      );
    mem.notedDir = true;
    return undefined;
  }
  const source = deps.owner ?? "";
  const { records } = deps.target;
  const store = new RolloutStore(records.client, records.namespace, records.guard);
  const now = (deps.now ?? (() => new Date()))().getTime();
  // An incremental pass with nothing to drive reads nothing: no fleet/rollout.yaml and no running rollout (nothing but
  // a pass writes a record, and a request to a final rollout changes nothing). A full pass always reads the record.
  const settled = mem.last === null || (mem.last !== undefined && isFinal(mem.last));
  if (kind === "incremental" && settled && !file.present) return UNPINNED;
  const stored = await store.read(source);
  mem.last = stored.record ?? null;
  if (stored.damaged) deps.logger.warn("ignoring a rollout record vc did not write", { reason: stored.damaged });
  const drives = (deps.drives ?? true) && deps.mayWrite();
  const current = readBase(root, revision);
  if (!file.present || "error" in current) {
    await endWithoutRollout(deps, mem, store, stored, current, file.present, revision, now, drives);
    return UNPINNED;
  }
  mem.basesDir ??= deps.basesDir ?? privateBasesDir();
  const snapshotOf = snapshots(mem, store, mem.basesDir);
  const currentFleet = readFleetBase(root).base;
  // Pinned clusters read a snapshot's own folder, never a checkout (the next revision's files replace the checkout's).
  if (!mem.snapshots.has(current.digest))
    mem.snapshots.set(current.digest, { snap: current, root: materialise(mem.basesDir, current), fleet: currentFleet });
  if (drives && !mem.stored.has(current.digest)) {
    if (!(await store.readSnapshot(current.digest))) await store.writeSnapshot(source, current);
    mem.stored.add(current.digest);
  }
  let rec = stored.record;
  let moves: string[] = [];
  if (drives && file.settings) {
    const seen = deps.sharded ? await fleetStatuses(deps.target, source, statuses) : statuses;
    const driven = await drive(
      deps,
      rec,
      file.settings,
      { root, revision, current, currentFleet, now, source, folders, snapshotOf },
      seen,
    );
    if (driven.changed) {
      try {
        await store.write(driven.record!, stored.resourceVersion);
        rec = driven.record;
        moves = driven.moves;
      } catch (err) {
        // A request arrived since the read (409), or the write failed: this pass renders by the record as stored.
        deps.logger[err instanceof KubeApiError && err.status === 409 ? "info" : "warn"](
          "rollout record changed since it was read: next tick",
          { error: (err as Error).message },
        );
      }
    } else moves = driven.moves;
  } else if (file.present && !file.settings && drives) {
    deps.logger.warn("fleet/rollout.yaml is invalid: the rollout holds where it is (vc validate shows why)", {});
  }
  mem.active = !!rec && !isFinal(rec);
  mem.last = rec ?? null;
  mem.current = current.digest;
  return passView(deps, mem, current.digest, rec, moves, snapshotOf);
}

type SnapshotOf = (digest: string) => Promise<{ snap: BaseSnapshot; root: string; fleet: FleetBase } | undefined>;

/** A base snapshot by digest: from memory, else read from the records namespace and materialised once. */
function snapshots(mem: RolloutMemory, store: RolloutStore, basesDir: string): SnapshotOf {
  return async (digest) => {
    let s = mem.snapshots.get(digest);
    if (!s) {
      const snap = await store.readSnapshot(digest);
      if (!snap) return undefined;
      const dir = materialise(basesDir, snap);
      s = { snap, root: dir, fleet: readFleetBase(dir).base };
      mem.snapshots.set(digest, s);
    }
    return s;
  };
}

/**
 * Without fleet/rollout.yaml (or with a base that cannot be rolled out) the newest base applies to every cluster: a
 * running rollout ends there, its record says why.
 */
async function endWithoutRollout(
  deps: DriverDeps,
  mem: RolloutMemory,
  store: RolloutStore,
  stored: Awaited<ReturnType<RolloutStore["read"]>>,
  current: ReturnType<typeof readBase>,
  present: boolean,
  revision: string,
  now: number,
  drives: boolean,
): Promise<void> {
  if ("error" in current && present && mem.notedLarge !== revision)
    deps.logger.warn("cannot roll out this base", { error: current.error });
  if ("error" in current) mem.notedLarge = revision;
  const rec = stored.record;
  if (rec && !isFinal(rec) && drives) {
    const ended: RolloutRecord = {
      ...rec,
      phase: "Completed",
      since: new Date(now).toISOString(),
      message:
        `rollout ${rec.id} ended: ` +
        `${present ? "the base cannot be rolled out" : "fleet/rollout.yaml was removed"}; the newest base applies ` +
        `to every cluster`,
    };
    await store
      .write(ended, stored.resourceVersion)
      .catch((err: unknown) => deps.logger.warn("cannot write the rollout record", { error: (err as Error).message }));
  }
  mem.active = false;
}

interface DriveContext {
  root: string;
  revision: string;
  current: BaseSnapshot;
  currentFleet: FleetBase;
  now: number;
  source: string;
  folders: () => string[];
  snapshotOf: SnapshotOf;
}

/** Begins a rollout on a base change, then steps it: the record as it should be stored, and the clusters it moves. */
async function drive(
  deps: DriverDeps,
  stored: RolloutRecord | undefined,
  settings: RolloutSettings,
  ctx: DriveContext,
  statuses: ReadonlyMap<string, ClusterStatus>,
): Promise<{ record?: RolloutRecord; changed: boolean; moves: string[] }> {
  let rec = stored;
  let changed = false;
  if (!rec || rec.to.digest !== ctx.current.digest) {
    rec = await begun(deps, rec, settings, ctx, statuses);
    changed = true;
    deps.logger.info("rollout", { id: rec.id, phase: rec.phase, message: rec.message });
  }
  if (isFinal(rec)) return { record: rec, changed, moves: [] };
  const out = step(rec, settings, {
    health: observedHealth(rec, statuses),
    returned: returnedClusters(rec, statuses),
    now: ctx.now,
  });
  if (out.changed) {
    if (out.record.phase !== rec.phase || out.record.wave !== rec.wave)
      deps.logger.info("rollout", {
        id: out.record.id,
        phase: out.record.phase,
        wave: out.record.waves[out.record.wave]?.name,
        message: out.record.message,
      });
    rec = out.record;
    changed = true;
  }
  return { record: rec, changed, moves: out.moves.map((m) => m.cluster) };
}

/** A new rollout (a base change, or the first pass that sees fleet/rollout.yaml): who is where, whose layers change. */
async function begun(
  deps: DriverDeps,
  rec: RolloutRecord | undefined,
  settings: RolloutSettings,
  ctx: DriveContext,
  statuses: ReadonlyMap<string, ClusterStatus>,
): Promise<RolloutRecord> {
  const members: Member[] = [];
  const from: Record<string, string> = {};
  for (const c of ctx.folders()) {
    const at = startingPin(rec, c, ctx.current.digest, statuses.get(c)?.base);
    if (at === ctx.current.digest) continue;
    const old = await ctx.snapshotOf(at);
    if (!old) {
      deps.logger.warn("the base snapshot a cluster is pinned to is gone: it moves to the newest base at once", {
        cluster: c,
        base: at.slice(0, 12),
      });
      continue;
    }
    const labels = labelsOf(ctx.root, c);
    if (effectiveLayers(old.fleet, old.snap, labels) === effectiveLayers(ctx.currentFleet, ctx.current, labels))
      continue;
    members.push({ name: c, labels });
    from[c] = at;
  }
  return begin({
    source: ctx.source,
    to: { digest: ctx.current.digest, revision: ctx.revision },
    waves: planWaves(settings, members),
    from,
    now: ctx.now,
    ...(rec ? { replaces: rec } : {}),
  });
}

/**
 * The pass's view of the rollout. Pins follow the newest record this process knows: an incremental pass run between
 * the chunks of a full pass may step the rollout, and the full pass's later chunks must not render a cluster it moved
 * at its old base.
 */
function passView(
  deps: DriverDeps,
  mem: RolloutMemory,
  digest: string,
  rec: RolloutRecord | undefined,
  moves: string[],
  snapshotOf: SnapshotOf,
): PassRollout {
  const latest = () => ({ record: mem.last ?? undefined, digest: mem.current ?? digest });
  const pinned = (c: string) => pinOf(latest().record, c, latest().digest);
  return {
    extra: [...new Set([...moves, ...inFlight(rec)])].sort(),
    ...(rec ? { record: rec } : {}),
    async basesFor(names) {
      const out: Record<string, string> = {};
      for (const n of names) {
        const at = pinned(n);
        if (at === latest().digest) continue;
        const s = await snapshotOf(at);
        if (s) out[n] = s.root;
        else
          deps.logger.warn("the base snapshot a cluster is pinned to is gone: rendering it at the newest base", {
            cluster: n,
            base: at.slice(0, 12),
          });
      }
      return out;
    },
    async annotate(loaded, reload) {
      const { record, digest: newest } = latest();
      for (const c of loaded) {
        const previousBase = previousOf(record, c.name);
        c.rollout = { base: pinned(c.name), ...(previousBase ? { previousBase } : {}) };
      }
      // The decision for a cluster's own change during a rollout: valid over its pinned base: applied now (as loaded);
      // invalid over it but valid over the newest base: it depends on the base being rolled out and waits for its wave;
      // invalid over both: invalid as always.
      if (!record || isFinal(record)) return;
      const held = loaded.filter((c) => !c.spec && !c.contested && pinned(c.name) !== newest);
      if (held.length === 0) return;
      const over = new Map((await reload(held.map((c) => c.name))).map((c) => [c.name, c]));
      for (const c of held)
        if (over.get(c.name)?.spec) c.rollout = { ...c.rollout, waiting: waitingMessage(record, c.name) };
    },
  };
}

function labelsOf(root: string, cluster: string): Record<string, string> {
  const file = `clusters/${cluster}/cluster.yaml`;
  return peekLabels(
    root,
    lstatSync(join(root, ...file.split("/")), { throwIfNoEntry: false })?.isFile() ? file : undefined,
  );
}

/**
 * Every cluster's last status as its record holds it (one LIST of the records), with this replica's own statuses over
 * them (newer: written by this process). What a sharded fleet's driving replica steps with.
 */
async function fleetStatuses(
  target: KubeTarget,
  source: string,
  own: ReadonlyMap<string, ClusterStatus>,
): Promise<ReadonlyMap<string, ClusterStatus>> {
  const out = new Map<string, ClusterStatus>();
  for (const rec of await target.records.list())
    if (rec.source === source && rec.status) out.set(rec.cluster, rec.status);
  for (const [cluster, status] of own) out.set(cluster, status);
  return out;
}
