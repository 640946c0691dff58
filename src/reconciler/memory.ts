// The reconciler's memory bound: its JS heap as a formula of the folder budget, the bytes of its shard's folders and
// its concurrency.
import type { FolderBudget } from "../repo/budget.js";

/**
 * Coefficients measured with `--max-old-space-size=192 --max-semi-space-size=2` on folders that fill the default
 * budget (test/support/budget-folder.ts: 200 files, 2 MiB, 2,000 VirtualServices), `vc reconcile --once` into a
 * `dir:` target, peak heap before a full collection, medians of 3 (docs/yaml-loading.md, "Folder budgets"):
 * 36 MiB with one small cluster, 63 MiB with one full folder, 124 MiB with four, 163-191 MiB (and a crash)
 * with eight.
 */
const HEAP_COEFFICIENTS = Object.freeze({
  /** vc itself, its schemas and a small fleet. */
  baseMiB: 40,
  /** Per byte of YAML of every valid folder of the shard: its spec is held from validation to its chunk's end. */
  heldPerByte: 2.5,
  /**
   * Per byte of the folder budget, for each folder in flight (parsed, rendered, planned and applied): `--concurrency`
   * of them.
   */
  inFlightPerByte: 12,
});
/** The heap limit to give beyond the bound: a full old space collects too late to stay within it. */
const HEAP_HEADROOM = 1.25;

export interface MemoryInputs {
  budget: Pick<FolderBudget, "bytes">;
  /** `--concurrency`: clusters reconciled at once. */
  concurrency: number;
  /** Bytes of the YAML of the shard's cluster folders together (each at most `budget.bytes`). */
  shardBytes: number;
  /** Clusters in the shard (in flight are at most this many). */
  clusters: number;
}

const MiB = 1024 * 1024;

/**
 * Peak JS heap of a full pass, in MiB:
 * `base + heldPerByte × shardBytes + inFlightPerByte × min(concurrency, clusters) × budget.bytes`.
 * Validation worker threads (only for runs of 6,000 files or more) each have a heap of their own holding one folder
 * at a time: they add to resident memory, not to this heap.
 */
function heapBoundMiB(m: MemoryInputs): number {
  const c = HEAP_COEFFICIENTS;
  return (
    c.baseMiB +
    (c.heldPerByte * m.shardBytes) / MiB +
    (c.inFlightPerByte * Math.min(m.concurrency, m.clusters) * m.budget.bytes) / MiB
  );
}

/** The `--max-old-space-size` (MiB) for these inputs: the bound with its headroom, rounded up to 16 MiB. */
export function heapLimitMiB(m: MemoryInputs): number {
  return Math.ceil((heapBoundMiB(m) * HEAP_HEADROOM) / 16) * 16;
}

/** The largest shard (bytes of its folders' YAML) a heap limit admits at a budget and concurrency. */
export function shardBytesWithin(limitMiB: number, budget: Pick<FolderBudget, "bytes">, concurrency: number): number {
  const c = HEAP_COEFFICIENTS;
  const left = limitMiB / HEAP_HEADROOM - c.baseMiB - (c.inFlightPerByte * concurrency * budget.bytes) / MiB;
  return Math.max(0, Math.floor((left * MiB) / c.heldPerByte));
}

/**
 * What deploy/reconciler/deployment.yaml is sized for: a shard whose cluster folders hold 24 MiB of YAML together
 * (a fleet of 1,000 clusters of 5 KiB is 5 MiB), at the default budget and `--concurrency` 4: `heapLimitMiB` gives
 * `--max-old-space-size=256`; resident memory is the heap plus about 100 MiB (code, buffers, young generation).
 */
export const DEPLOYED_SHARD_BYTES = 24 * MiB;
/**
 * Resident memory beyond the old space, measured: 70-100 MiB (RSS minus peak heap); the deployment's limit keeps 128
 * MiB.
 */
export const NON_HEAP_MIB = 128;
