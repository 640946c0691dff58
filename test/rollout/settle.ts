// A controller's view of a cluster on the API test server, written through the status subresource: its StatefulSet
// caught up, its pod Ready (or crashing), its Deployments available. Shared by the rollout tests.
import { controlledBy } from "../support/owner.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { KubeClient } from "../../src/host/client.js";
import type { Bed } from "../reconciler/harness.js";

export async function settle(
  bed: Bed,
  admin: KubeClient,
  c: string,
  pod: "ready" | "crashing" = "ready",
): Promise<void> {
  const ns = `vc-${c}`;
  const putStatus = async (path: string, status: (live: KubeObject) => unknown) => {
    const live = await admin.request<KubeObject>("GET", path);
    await admin.request("PUT", `${path}/status`, { body: { ...live, status: status(live) } });
  };
  await putStatus(`/apis/apps/v1/namespaces/${ns}/statefulsets/${c}`, (live) => ({
    observedGeneration: live.metadata.generation,
    replicas: 1,
    readyReplicas: pod === "ready" ? 1 : 0,
    currentReplicas: 1,
    updatedReplicas: 1,
    currentRevision: "r1",
    updateRevision: "r1",
  }));
  if (!(await admin.get({ apiVersion: "v1", kind: "Pod", namespace: ns, name: `${c}-0` }))) {
    await admin.request("POST", `/api/v1/namespaces/${ns}/pods`, {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: `${c}-0`,
          labels: { app: "vc", release: c, "controller-revision-hash": "r1" },
          ownerReferences: [await controlledBy(admin, ns, c)],
        },
        spec: { containers: [{ name: "syncer", image: "x" }] },
      },
    });
  }
  await putStatus(`/api/v1/namespaces/${ns}/pods/${c}-0`, () =>
    pod === "ready"
      ? { phase: "Running", conditions: [{ type: "Ready", status: "True" }] }
      : {
          phase: "Running",
          containerStatuses: [{ name: "syncer", restartCount: 3, state: { waiting: { reason: "CrashLoopBackOff" } } }],
        },
  );
  for (const d of bed.kube.list("apps/v1", "Deployment", ns)) {
    await putStatus(`/apis/apps/v1/namespaces/${ns}/deployments/${d.metadata.name}`, (live) => ({
      observedGeneration: live.metadata.generation,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [
        { type: "Available", status: "True" },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
      ],
    }));
  }
}
