// What vc apply and vc diff take from a running rollout (I/O edge): the clusters it holds at an older base, and their
// snapshots' folders.
import { KubeClient, type OpenClientOptions } from "../host/client.js";
import { recordsNamespace } from "../translate/keys.js";
import { loadRollout } from "../validate/rollout-file.js";
import { RecordStore } from "../records/store.js";
import { LABELS } from "../translate/keys.js";
import { heldBy, pinOf, startingPin } from "./pins.js";
import { materialise, privateBasesDir, readBase } from "./snapshot.js";
import { isFinal } from "./step.js";
import { RolloutStore } from "./store.js";
import type { RolloutRecord } from "./types.js";

export interface CommandPins {
  /** The `bases` load option: the snapshot folder of each held cluster. */
  bases: Record<string, string>;
  /** Why each held cluster is rendered at its pinned base (`held by rollout <id>: wave 2/3 (early)`), by cluster. */
  held: Map<string, string>;
  record?: RolloutRecord;
  /** Problems worth a line on stderr (a snapshot that is gone). */
  notes: string[];
}

const NONE: CommandPins = { bases: {}, held: new Map(), notes: [] };

/**
 * The pins of a command against a live host, as the reconciler would render: with fleet/rollout.yaml, a cluster a
 * running rollout has not reached (or sent back) stays at its base; while the newest base is not rolled out yet (no
 * rollout to it on the host), every cluster stays at the base it was last applied with (its record's `base`), so vc
 * apply never bypasses, nor vc diff hides, a rollout. Never advances one. No fleet/rollout.yaml, or a dir: target:
 * nothing read, nothing held.
 */
export async function commandPins(
  root: string,
  target: string,
  owner: string,
  client: OpenClientOptions | KubeClient,
): Promise<CommandPins> {
  if (target !== "kube" || !loadRollout(root).present) return NONE;
  const current = readBase(root);
  if ("error" in current) return NONE;
  // A client given is the caller's (not closed here); options open one for the pins alone.
  const own = !(client instanceof KubeClient);
  const kube = client instanceof KubeClient ? client : KubeClient.open(client);
  try {
    const store = new RolloutStore(kube, recordsNamespace());
    const { record } = await store.read(owner);
    const running = !!record && !isFinal(record) && record.to.digest === current.digest;
    const out: CommandPins = { bases: {}, held: new Map(), ...(record ? { record } : {}), notes: [] };
    const pins = new Map<string, string>();
    if (running) {
      for (const w of record.waves)
        for (const c of w.clusters) if (heldBy(record, c)) pins.set(c, pinOf(record, c, current.digest));
    } else {
      // One LIST of the records: the base each cluster was last applied with.
      for (const r of await new RecordStore(kube, store.namespace).list(`${LABELS.owner}=${owner}`)) {
        if (r.source !== owner) continue;
        const at = startingPin(record, r.cluster, current.digest, r.status?.base);
        if (at !== current.digest) pins.set(r.cluster, at);
      }
    }
    const dirs = new Map<string, string | undefined>();
    let basesDir: string | undefined;
    for (const [c, at] of [...pins].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (!dirs.has(at)) {
        const snap = await store.readSnapshot(at);
        basesDir ??= privateBasesDir();
        dirs.set(at, snap ? materialise(basesDir, snap) : undefined);
        if (!snap)
          out.notes.push(
            `the base snapshot ${at.slice(0, 12)} is gone from ${store.namespace}: its clusters are shown at the ` +
              `newest base`,
          );
      }
      const dir = dirs.get(at);
      if (!dir) continue;
      out.bases[c] = dir;
      out.held.set(
        c,
        running
          ? heldBy(record, c)!
          : record && record.to.digest === current.digest
            ? `rollout ${record.id} was ${record.phase}: it stays at base ${at.slice(0, 12)} until the next base change`
            : `base ${current.digest.slice(0, 12)} is not rolled out yet: it stays at base ${at.slice(0, 12)} ` +
              `until the reconciler's rollout reaches it`,
      );
    }
    return out;
  } finally {
    if (own) kube.close();
  }
}

/** The lines vc apply and vc diff print about held clusters: one summary, then each held cluster selected. */
export function heldLines(pins: CommandPins, selected: readonly string[]): string[] {
  if (pins.held.size === 0) return pins.notes;
  const names = [...pins.held.keys()].filter((c) => selected.length === 0 || selected.includes(c)).sort();
  const r = pins.record;
  const where =
    r && !isFinal(r) && [...pins.held.values()].some((m) => m.startsWith("held by"))
      ? `rollout ${r.id} is ${r.phase} (wave ${r.wave + 1}/${r.waves.length}, ${r.waves[r.wave]?.name})`
      : "fleet/rollout.yaml";
  return [
    ...pins.notes,
    `${where}: ${names.length} cluster(s) shown at the base they are pinned to; the reconciler moves them wave by wave`,
    ...names.map((c) => `cluster ${c}: ${pins.held.get(c)}`),
  ];
}
