// The gates of a cluster's plan, asked of the target: kinds it does not serve, public hosts an older claim holds, and
// objects on it that the cluster's record does not hold (plan/gates.ts decides; one chain for every caller).
import { ClaimIndex } from "../claims/claim-index.js";
import { lostClaims, type PeerTies } from "../claims/host-claims.js";
import { blockContests, blockForeign, blockUnserved, claimingObjects, writtenKinds } from "../plan/gates.js";
import type { Plan } from "../plan/types.js";
import type { Target } from "../sinks/types.js";

/** `plan`, blocked with the reason when one of the gates refuses it; `peers` are the run's other new host claims. */
export async function blockPlan(
  target: Target,
  plan: Plan,
  peers?: ReadonlyMap<string, readonly string[]>,
  ties?: PeerTies,
): Promise<Plan> {
  return foreignObjects(target, await lostHosts(target, await unservedKinds(target, plan), peers, ties));
}

/** Asks the target's discovery for the kinds the plan writes (a plan that writes nothing costs no request). */
async function unservedKinds(target: Target, plan: Plan): Promise<Plan> {
  if (plan.blocked) return plan;
  const kinds = writtenKinds(plan);
  return kinds.length === 0 ? plan : blockUnserved(plan, await target.missingKinds(kinds));
}

/**
 * Reads the target's claims only when the plan claims a public host; a target without claims of its own still has the
 * run's (`peers`): every target enforces one cluster per public host.
 */
async function lostHosts(
  target: Target,
  plan: Plan,
  peers?: ReadonlyMap<string, readonly string[]>,
  ties?: PeerTies,
): Promise<Plan> {
  if (plan.blocked) return plan;
  const claiming = claimingObjects(plan);
  if (claiming.length === 0) return plan;
  const index = target.hostClaimIndex ? await target.hostClaimIndex() : new ClaimIndex();
  return blockContests(plan, lostClaims(plan.cluster, claiming, index, peers, ties));
}

/**
 * Asks a target that keeps records which of the plan's creates already exist outside the record (no creates: no
 * request).
 */
async function foreignObjects(target: Target, plan: Plan): Promise<Plan> {
  if (plan.blocked || !target.existingUnrecorded) return plan;
  const creates = plan.changes.filter((c) => c.action === "create");
  if (creates.length === 0) return plan;
  return blockForeign(
    plan,
    await target.existingUnrecorded(
      plan.cluster,
      creates.map((c) => c.ref),
    ),
  );
}
