// Sharding clusters across reconciler replicas by a stable hash of the cluster name (pure).
import { createHash } from "node:crypto";

export interface Shard {
  /** 0-based index of this replica's shard. */
  index: number;
  count: number;
}

/** Parses `i/n` (0 <= i < n). */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count) throw new Error(`invalid shard "${text}": use i/n with 0 <= i < n, e.g. 0/3`);
  return { index, count };
}

/** The shard a cluster belongs to: the first 4 bytes of SHA-256 of its name, modulo the shard count. */
export function shardOf(cluster: string, count: number): number {
  return createHash("sha256").update(cluster).digest().readUInt32BE(0) % count;
}

export function inShard(cluster: string, shard: Shard | undefined): boolean {
  return !shard || shard.count === 1 || shardOf(cluster, shard.count) === shard.index;
}
