// The plan module's public surface: build a plan from desired and live objects, print it, mask secrets.
export * from "./types.js";
export { buildPlan, hasChanges, inInventory, emptyCounts, PlanError, refusedMessage } from "./build.js";
export { immutableChanges } from "./immutable.js";
export { listKeysOf } from "./list-keys.js";
export { formatPlanReport, summaryLine, totalCounts, useColour, PLAN_FORMATS, type PlanFormat, type PlanReport, type ClusterError } from "./format.js";
export { maskSecret, maskSecretPair, MASK } from "./mask.js";
export { compareRefs, stageOf } from "../kube/order.js";
export { pruneGuard } from "./guard.js";
export { managedView, normalizeDesired, normalizeLive } from "./normalize.js";
export { objectDiff, deepEqual, toYaml } from "./diff.js";
