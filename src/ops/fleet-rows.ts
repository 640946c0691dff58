// The fleet's rows on any target, as `vc list -o json`, `vc ui` and the fleet page's API show them: a host's through
// listClusters, a folder target's from its status files and a plan; then the repository's facts and the rollout's
// waves.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fleetLocation } from "../git/origin.js";
import { commitsOf } from "../git/log.js";
import { chooseOwner } from "../model/owner.js";
import { escapeControls } from "../model/escape.js";
import { peekLabels } from "../repo/fleet-base.js";
import { CLUSTERS_DIR } from "../repo/layout.js";
import { appliedBy, type ClusterStatus } from "../records/status.js";
import { hasChanges } from "../plan/build.js";
import { loadDesiredIndex } from "../pipeline/load.js";
import { planFleet } from "../pipeline/fleet.js";
import { RolloutStore } from "../rollout/store.js";
import { rolloutView, wavesByCluster, type RolloutView } from "../rollout/view.js";
import type { Target } from "../sinks/types.js";
import type { KubeClient } from "../host/client.js";
import { recordsNamespace } from "../translate/keys.js";
import { differing, listClusters, type ListRow } from "./list.js";
import type { KubeHost } from "./host.js";

/** The repository a listing joins: its root and the revision read. */
export interface RepoAt {
  root: string;
  revision: string;
}

/**
 * Rows of a target that is not a live host (dir:): the clusters of its status files and of the repository, each with
 * its recorded result and health, and its drift from a plan of the repository against the target.
 */
export async function listTargetClusters(target: Target, repo?: RepoAt): Promise<{ rows: ListRow[]; notes: string[] }> {
  const statuses = new Map((await target.statusStore().list()).map((s) => [s.cluster, s]));
  const index = repo ? await loadDesiredIndex(repo.root, repo.revision) : undefined;
  const report = index ? await planFleet(target, index, { prune: true, allowMassPrune: true }) : undefined;
  const plans = new Map(report?.plans.map((p) => [p.cluster, p]) ?? []);
  const errors = new Map(report?.errors.map((e) => [e.cluster, e.message]) ?? []);
  const names = new Set([...statuses.keys(), ...(index?.state.known.keys() ?? [])]);
  const rows = [...names].sort().map((name): ListRow => {
    const s = statuses.get(name);
    const inRepo = index?.state.known.has(name) ?? false;
    const plan = plans.get(name);
    const drift: ListRow["drift"] = !inRepo
      ? "-"
      : errors.has(name) && !plan
        ? "invalid"
        : plan
          ? hasChanges(plan)
            ? "yes"
            : "no"
          : "unknown";
    const row: ListRow = {
      name,
      namespace: index?.state.known.get(name) ?? s?.hostNamespace ?? "",
      controlPlane: "unknown",
      ready: "-",
      drift,
      ...(drift === "yes" && plan ? { driftObjects: differing(plan) } : {}),
      source: inRepo ? (s ? "both" : "repository") : "host",
      health: s?.health ?? "Unknown",
      labels: {},
    };
    if (s?.healthReason && s.health !== "Healthy") row.healthReason = s.healthReason;
    applied(row, s);
    const error = errors.get(name);
    if (error) row.note = error;
    else if (inRepo && !s) row.note = `in the repository, not on ${target.description}`;
    else if (index && !inRepo) row.note = "on the target, not in this repository";
    return row;
  });
  return { rows, notes: [] };
}

function applied(row: ListRow, s: ClusterStatus | undefined): void {
  if (s?.lastAppliedRevision) {
    row.lastAppliedRevision = s.lastAppliedRevision;
    row.lastAppliedBy = appliedBy(s);
    if (s.lastAppliedTime) row.lastAppliedTime = s.lastAppliedTime;
  }
  if (s?.result) row.result = s.result;
}

/**
 * Adds what the repository at `root` knows to each row: the cluster's labels (its cluster.yaml), the subject and author
 * of the applied commit; and with a rollout, the wave that holds the cluster.
 */
export async function withRepositoryFacts(
  rows: ListRow[],
  root: string | undefined,
  rollout?: RolloutView,
): Promise<void> {
  const waves = rollout ? wavesByCluster(rollout) : undefined;
  const commits = root
    ? await commitsOf(
        root,
        rows.flatMap((r) => (r.lastAppliedRevision ? [r.lastAppliedRevision] : [])),
      )
    : new Map();
  for (const row of rows) {
    if (root) row.labels = labelsOf(root, row.name);
    const c = row.lastAppliedRevision ? commits.get(row.lastAppliedRevision) : undefined;
    if (c) row.commit = { subject: c.subject, author: c.author, time: c.time };
    const w = waves?.get(row.name);
    if (w) row.wave = w;
  }
}

/** A cluster's labels as its cluster.yaml in the repository at `root` says (none without the file). */
export function labelsOf(root: string, cluster: string): Record<string, string> {
  const file = `${CLUSTERS_DIR}/${cluster}/cluster.yaml`;
  return existsSync(join(root, file)) ? peekLabels(root, file) : {};
}

/** The rollout of the repository's source on a host, as `vc rollout status -o json` shows it; none: undefined. */
async function readRolloutView(client: KubeClient, root: string): Promise<RolloutView | undefined> {
  const owner = chooseOwner(undefined, await fleetLocation(root));
  const { record, damaged } = await new RolloutStore(client, recordsNamespace()).read(owner);
  if (damaged) throw new Error(`the rollout record of ${escapeControls(owner)} is not one vc wrote: ${damaged}`);
  return record ? rolloutView(record) : undefined;
}

/**
 * `vc list`'s rows of a host (with `repo`, joined with the repository's clusters), with the repository's facts and the
 * rollout's waves: what `vc list -o json`, `vc ui --target kube` and the fleet page's API show.
 */
export async function listHostFleet(
  host: KubeHost,
  repo?: RepoAt,
): Promise<{ rows: ListRow[]; notes: string[]; rollout?: RolloutView }> {
  const { rows, notes } = await listClusters(host, repo);
  const rollout = repo
    ? await readRolloutView(host.client, repo.root).catch((err: unknown) => {
        notes.push(`the rollout could not be read: ${(err as Error).message}`);
        return undefined;
      })
    : undefined;
  await withRepositoryFacts(rows, repo?.root, rollout);
  return { rows, notes, ...(rollout ? { rollout } : {}) };
}
