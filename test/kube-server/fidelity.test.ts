import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { fidelityCases, inMemoryTarget, UNSERVED_GROUP } from "../support/fidelity.js";
import { describeProfiles } from "../support/profiles.js";

// The same cases run against a real kube-apiserver in test/e2e/fidelity.test.ts.
describeProfiles(
  "kube-server answers as the real API server: immutable fields, escalation, impersonation, missing kinds, access " +
    "reviews, dangling bindings, OpenAPI v3",
  (profile) => {
    let server: KubeServer;
    before(async () => {
      server = await startKubeServer({ unservedGroups: [UNSERVED_GROUP], profile });
    });
    after(async () => server?.close());
    const target = inMemoryTarget(() => server);
    fidelityCases(() => target);
  },
);
