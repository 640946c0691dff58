// What a tenant wrote in its host namespace, as vc doctor saw it: reads stopped at their bound.
import { finding } from "./coverage.js";
import type { Check } from "./types.js";

/** The LISTs of the namespace that stopped at their bound: what was read is checked, the rest is not. */
export const hostReadsBounded: Check = (s) =>
  (s.boundedReads ?? []).map((b) =>
    finding(
      "tenant-writes",
      {
        check: "host-reads-bounded",
        severity: "warning",
        object: `Namespace ${s.namespace}`,
        message: `the read of GET ${b.path} stopped after ${b.read} objects (${b.why}): the checks saw only those`,
      },
      "whoever may write the namespace (the syncer) made more than vc reads at once",
    ),
  );
