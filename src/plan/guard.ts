// The prune guard: a run that would delete more than half of a cluster's objects, or all of them, stops.

/** The message when the deletes are too many, or undefined when they may go ahead. */
export function pruneGuard(
  cluster: string,
  deletes: number,
  liveCount: number,
  allowMassPrune: boolean,
): string | undefined {
  if (allowMassPrune || deletes === 0) return undefined;
  const all = deletes >= liveCount;
  if (!all && deletes * 2 <= liveCount) return undefined;
  const what = all ? `all ${liveCount}` : `${deletes} of ${liveCount}`;
  return (
    `prune guard: cluster ${cluster} would delete ${what} of the objects vc applied for it; nothing was changed. ` +
    `If this is intended (a cluster removed from the repository), run again with --allow-mass-prune`
  );
}
