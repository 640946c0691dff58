// The checks that block a cluster's plan before anything is written: kinds the target does not serve, public hosts an
// older claim holds, and objects on the target that the cluster's record does not hold (one chain for every caller).
import type { Plan } from "../plan/types.js";
import { blockForeignObjects } from "./conflicts.js";
import { blockLostClaims, type PeerTies } from "./host-claims.js";
import { blockUnservedKinds } from "./kinds.js";
import type { Target } from "./types.js";

/** `plan`, blocked with the reason when one of the checks refuses it; `peers` are the run's other new host claims. */
export async function blockPlan(target: Target, plan: Plan, peers?: ReadonlyMap<string, readonly string[]>, ties?: PeerTies): Promise<Plan> {
  return blockForeignObjects(target, await blockLostClaims(target, await blockUnservedKinds(target, plan), peers, ties));
}
