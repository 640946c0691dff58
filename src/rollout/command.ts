// What vc apply and vc diff take from a running rollout (I/O edge): the clusters it holds at an older base, and their snapshots' folders.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient, type OpenClientOptions } from "../target/kube/client.js";
import { recordsNamespace } from "../records/record.js";
import { loadRollout } from "./file.js";
import { heldBy } from "./pins.js";
import { materialise } from "./snapshot.js";
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
 * The pins of a command against a live host: with fleet/rollout.yaml and a running rollout, each cluster of it that
 * has not been moved (or was sent back) is rendered at the base it is at; the others at the repository's newest base.
 * Never advances the rollout. No fleet/rollout.yaml, or a dir: target: nothing read, nothing held.
 */
export async function commandPins(root: string, target: string, owner: string, client: OpenClientOptions): Promise<CommandPins> {
  if (target !== "kube" || !loadRollout(root).present) return NONE;
  const kube = KubeClient.open(client);
  try {
    const store = new RolloutStore(kube, recordsNamespace());
    const { record } = await store.read(owner);
    if (!record || isFinal(record)) return NONE;
    const out: CommandPins = { bases: {}, held: new Map(), record, notes: [] };
    const dirs = new Map<string, string | undefined>();
    let basesDir: string | undefined;
    for (const w of record.waves) {
      for (const c of w.clusters) {
        const why = heldBy(record, c);
        if (!why) continue;
        const at = record.moved[c]?.from ?? record.from[c]!;
        if (!dirs.has(at)) {
          const snap = await store.readSnapshot(at);
          basesDir ??= mkdtempSync(join(tmpdir(), "vc-bases-"));
          dirs.set(at, snap ? materialise(basesDir, snap) : undefined);
          if (!snap) out.notes.push(`rollout ${record.id}: the base snapshot ${at.slice(0, 12)} is gone from ${store.namespace}: its clusters are shown at the newest base`);
        }
        const dir = dirs.get(at);
        if (!dir) continue;
        out.bases[c] = dir;
        out.held.set(c, why);
      }
    }
    return out;
  } finally {
    kube.close();
  }
}

/** The lines vc apply and vc diff print about a running rollout: one summary, then each held cluster selected. */
export function heldLines(pins: CommandPins, selected: readonly string[]): string[] {
  if (!pins.record || pins.held.size === 0) return pins.notes;
  const r = pins.record;
  const names = [...pins.held.keys()].filter((c) => selected.length === 0 || selected.includes(c)).sort();
  const lines = [...pins.notes, `rollout ${r.id} is ${r.phase} (wave ${r.wave + 1}/${r.waves.length}, ${r.waves[r.wave]?.name}): ${names.length} cluster(s) shown at the base they are pinned to; the reconciler moves them wave by wave`];
  for (const c of names) lines.push(`cluster ${c}: ${pins.held.get(c)}`);
  return lines;
}
