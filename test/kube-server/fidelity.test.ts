import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { fidelityCases, inMemoryTarget, UNSERVED_GROUP } from "../support/fidelity.js";

// The same cases run against a real kube-apiserver in test/e2e/fidelity.test.ts.
describe("kube-server answers as the real API server: immutable fields, escalation, impersonation, missing kinds", () => {
  let server: KubeServer;
  before(async () => {
    server = await startKubeServer({ unservedGroups: [UNSERVED_GROUP] });
  });
  after(async () => server?.close());
  const target = inMemoryTarget(() => server);
  fidelityCases(() => target);
});
