import { FIDELITY_USER, fidelityCases, realTarget } from "../support/fidelity.js";
import { useRealKube } from "../support/real-kube.js";

// The same cases run against the in-memory server in test/kube-server/fidelity.test.ts: where they disagree, this one
// (the real server) is right.
describe("e2e: the real API server on the cases the in-memory server imitates", function () {
  this.timeout(60_000);
  const kube = useRealKube({ users: [{ name: FIDELITY_USER }] });
  const target = realTarget(kube);
  fidelityCases(() => target);
});
