// Health of live objects, pods and clusters (pure): kstatus' rules per kind, doctor's pod states, the worst wins.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { clusterHealth } from "../../src/health/cluster.js";
import { objectHealth } from "../../src/health/object.js";
import { podHealth } from "../../src/health/pod.js";

const sts = (
  status: Record<string, unknown> | undefined,
  spec: Record<string, unknown> = { replicas: 1 },
  generation = 1,
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "shop", namespace: "vc-shop", generation },
  spec,
  ...(status ? { status } : {}),
});
const settled = {
  observedGeneration: 1,
  replicas: 1,
  readyReplicas: 1,
  currentReplicas: 1,
  updatedReplicas: 1,
  currentRevision: "shop-1",
  updateRevision: "shop-1",
};
const deploy = (status: Record<string, unknown> | undefined, replicas = 1): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "proxy", namespace: "vc-shop", generation: 2 },
  spec: { replicas },
  ...(status ? { status } : {}),
});
const withCond = (apiVersion: string, kind: string, conditions: unknown[]): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: "x" },
  status: { conditions },
});
const pod = (name: string, status: Record<string, unknown>): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "vc-shop" },
  status,
});
const running = (name: string) => pod(name, { phase: "Running", conditions: [{ type: "Ready", status: "True" }] });

describe("health: objects", () => {
  it("StatefulSet: healthy only with every replica created, ready and on the update revision", () => {
    expect(objectHealth(sts(settled))).to.deep.equal({ status: "Healthy" });
    expect(objectHealth(sts(undefined)).status).to.equal("Progressing");
    expect(objectHealth(sts({ ...settled, readyReplicas: 0 }))).to.deep.equal({
      status: "Progressing",
      reason: "ready 0/1",
    });
    expect(objectHealth(sts({ ...settled, replicas: 0, readyReplicas: 0 })).reason).to.equal("replicas 0/1");
    expect(objectHealth(sts({ ...settled, replicas: 2 })).reason).to.match(/pending termination/);
    expect(
      objectHealth(sts({ ...settled, updateRevision: "shop-2", currentReplicas: 0, updatedReplicas: 1 })).reason,
    ).to.equal("rolling out revision shop-2");
    // The controller has not seen the newest spec: whatever the counts say is about an older one.
    expect(objectHealth(sts(settled, { replicas: 1 }, 2)).reason).to.equal(
      "generation 2 not yet observed (observed 1)",
    );
    // Partitioned rollout: complete when the replicas above the partition are updated.
    const partitioned = { replicas: 3, updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } } };
    const three = {
      ...settled,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 2,
      updatedReplicas: 1,
      updateRevision: "shop-2",
    };
    expect(objectHealth(sts(three, partitioned)).status).to.equal("Healthy");
    expect(objectHealth(sts({ ...three, updatedReplicas: 0 }, partitioned)).reason).to.equal("updated 0/1");
    expect(objectHealth(sts(undefined, { replicas: 1, updateStrategy: { type: "OnDelete" } })).status).to.equal(
      "Healthy",
    );
    // Scaled to zero is a settled state.
    expect(
      objectHealth(
        sts({ observedGeneration: 1, replicas: 0, currentRevision: "a", updateRevision: "a" }, { replicas: 0 }),
      ).status,
    ).to.equal("Healthy");
  });

  it("Deployment: a deadline exceeded is Degraded; replicas not updated, available or ready are Progressing", () => {
    const ok = {
      observedGeneration: 2,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [{ type: "Available", status: "True" }],
    };
    expect(objectHealth(deploy(ok))).to.deep.equal({ status: "Healthy" });
    expect(objectHealth(deploy({ ...ok, updatedReplicas: 0 })).reason).to.equal("updated 0/1");
    expect(objectHealth(deploy({ ...ok, availableReplicas: 0 })).reason).to.equal("available 0/1");
    expect(objectHealth(deploy({ ...ok, observedGeneration: 1 })).status).to.equal("Progressing");
    const stuck = objectHealth(
      deploy({
        ...ok,
        conditions: [
          {
            type: "Progressing",
            status: "False",
            reason: "ProgressDeadlineExceeded",
            message: 'ReplicaSet "proxy-1" has timed out progressing.',
          },
        ],
      }),
    );
    expect(stuck.status).to.equal("Degraded");
    expect(stuck.reason).to.include("timed out progressing");
  });

  it("APIService by Available, Certificate by Ready (and Issuing), claims by Bound, Namespace by phase", () => {
    expect(
      objectHealth(withCond("apiregistration.k8s.io/v1", "APIService", [{ type: "Available", status: "True" }])).status,
    ).to.equal("Healthy");
    const down = objectHealth(
      withCond("apiregistration.k8s.io/v1", "APIService", [
        {
          type: "Available",
          status: "False",
          reason: "MissingEndpoints",
          message: "endpoints for service/x have no addresses",
        },
      ]),
    );
    expect(down).to.deep.equal({
      status: "Progressing",
      reason: "not available: endpoints for service/x have no addresses",
    });
    expect(
      objectHealth(withCond("cert-manager.io/v1", "Certificate", [{ type: "Ready", status: "True" }])).status,
    ).to.equal("Healthy");
    expect(
      objectHealth(
        withCond("cert-manager.io/v1", "Certificate", [
          { type: "Ready", status: "False", message: "issuer not found" },
        ]),
      ),
    ).to.deep.equal({ status: "Degraded", reason: "not ready: issuer not found" });
    expect(
      objectHealth(
        withCond("cert-manager.io/v1", "Certificate", [
          { type: "Ready", status: "False" },
          { type: "Issuing", status: "True", reason: "DoesNotExist" },
        ]),
      ).status,
    ).to.equal("Progressing");
    expect(objectHealth(withCond("cert-manager.io/v1", "Certificate", [])).status).to.equal("Progressing");
    const pvc = (phase?: string): KubeObject => ({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data-shop-0" },
      status: phase ? { phase } : {},
    });
    expect(objectHealth(pvc("Bound")).status).to.equal("Healthy");
    expect(objectHealth(pvc("Pending"))).to.deep.equal({ status: "Progressing", reason: "volume claim Pending" });
    expect(objectHealth(pvc("Lost")).status).to.equal("Degraded");
    expect(
      objectHealth({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" }, status: { phase: "Active" } })
        .status,
    ).to.equal("Healthy");
    expect(
      objectHealth({ apiVersion: "v1", kind: "Namespace", metadata: { name: "n" }, status: { phase: "Terminating" } })
        .status,
    ).to.equal("Progressing");
    expect(
      objectHealth({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "n", deletionTimestamp: "2026-01-01T00:00:00Z" },
      }).status,
    ).to.equal("Progressing");
    // Any kind: Stalled=True is a failure, Reconciling=True a rollout under way; a plain ConfigMap is healthy once it
    // exists.
    expect(
      objectHealth(withCond("example.io/v1", "Thing", [{ type: "Stalled", status: "True", message: "bad spec" }])),
    ).to.deep.equal({ status: "Degraded", reason: "bad spec" });
    expect(
      objectHealth(withCond("example.io/v1", "Thing", [{ type: "Reconciling", status: "True", reason: "Working" }]))
        .status,
    ).to.equal("Progressing");
    expect(objectHealth({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }).status).to.equal("Healthy");
  });
});

describe("health: pods", () => {
  it("names the pod and the stuck state, as vc doctor knows them", () => {
    const crash = pod("shop-0", {
      phase: "Running",
      containerStatuses: [{ name: "api", restartCount: 5, state: { waiting: { reason: "CrashLoopBackOff" } } }],
    });
    expect(podHealth(crash)).to.deep.equal({ status: "Degraded", reason: "pod shop-0 CrashLoopBackOff" });
    const pull = pod("shop-0", {
      phase: "Pending",
      initContainerStatuses: [{ name: "init", state: { waiting: { reason: "ImagePullBackOff" } } }],
    });
    expect(podHealth(pull).reason).to.equal("pod shop-0 ImagePullBackOff");
    expect(podHealth(pod("shop-0", { phase: "Failed" })).status).to.equal("Degraded");
    expect(podHealth(running("shop-0")).status).to.equal("Healthy");
    expect(
      podHealth(pod("shop-0", { phase: "Running", conditions: [{ type: "Ready", status: "False" }] })),
    ).to.deep.equal({ status: "Progressing", reason: "pod shop-0 not ready" });
    expect(podHealth(pod("shop-0", { phase: "Pending" })).status).to.equal("Progressing");
  });

  it("an unschedulable pod is Degraded with doctor's cause from the scheduler's message", () => {
    const p = pod("shop-0", {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/3 nodes are available: 3 Insufficient memory.",
        },
      ],
    });
    const h = podHealth(p);
    expect(h.status).to.equal("Degraded");
    expect(h.reason).to.match(/^pod shop-0 Unschedulable \(insufficient-resources: /);
  });
});

describe("health: clusters", () => {
  const ns: KubeObject = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "vc-shop" },
    status: { phase: "Active" },
  };
  const refOf = (o: KubeObject) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  });

  it("Healthy when every object and pod is; Progressing with the first object's reason while one rolls out", () => {
    expect(
      clusterHealth({
        objects: [
          { ref: refOf(ns), live: ns },
          { ref: refOf(sts(settled)), live: sts(settled) },
        ],
        pods: [running("shop-0")],
        claims: [],
      }),
    ).to.include({ status: "Healthy" });
    const rolling = clusterHealth({
      objects: [
        { ref: refOf(ns), live: ns },
        { ref: refOf(sts(settled)), live: sts({ ...settled, readyReplicas: 0 }) },
      ],
      pods: [pod("shop-0", { phase: "Pending" })],
      claims: [],
    });
    expect(rolling).to.include({ status: "Progressing", reason: "StatefulSet vc-shop/shop: ready 0/1" });
  });

  it("Degraded wins over Progressing and says which pod and why", () => {
    const crash = pod("shop-0", {
      phase: "Running",
      containerStatuses: [{ name: "api", state: { waiting: { reason: "CrashLoopBackOff" } } }],
    });
    const h = clusterHealth({
      objects: [{ ref: refOf(sts(settled)), live: sts({ ...settled, readyReplicas: 0 }) }],
      pods: [running("proxy-1"), crash],
      claims: [],
    });
    expect(h).to.include({ status: "Degraded", reason: "pod shop-0 CrashLoopBackOff" });
    expect(h.objects.map((o) => o.object)).to.deep.equal([
      "StatefulSet vc-shop/shop",
      "Pod vc-shop/proxy-1",
      "Pod vc-shop/shop-0",
    ]);
  });

  it("a missing object is Progressing; nothing on the host, or an unreadable object, is Unknown", () => {
    const s = sts(settled);
    expect(
      clusterHealth({ objects: [{ ref: refOf(ns), live: ns }, { ref: refOf(s) }], pods: [], claims: [] }),
    ).to.include({ status: "Progressing", reason: "StatefulSet vc-shop/shop not found" });
    expect(clusterHealth({ objects: [{ ref: refOf(ns) }, { ref: refOf(s) }], pods: [], claims: [] }).status).to.equal(
      "Unknown",
    );
    expect(
      clusterHealth({
        objects: [
          { ref: refOf(ns), live: ns },
          { ref: refOf(s), unreadable: "forbidden" },
        ],
        pods: [],
        claims: [],
      }),
    ).to.include({ status: "Unknown", reason: "StatefulSet vc-shop/shop: forbidden" });
  });

  it("an unbound claim keeps the cluster Progressing", () => {
    const claim: KubeObject = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data-shop-0", namespace: "vc-shop" },
      status: { phase: "Pending" },
    };
    expect(
      clusterHealth({ objects: [{ ref: refOf(sts(settled)), live: sts(settled) }], pods: [], claims: [claim] }),
    ).to.include({ status: "Progressing", reason: "PersistentVolumeClaim vc-shop/data-shop-0: volume claim Pending" });
  });
});

describe("health: a rollout replacing a stuck pod", () => {
  it(
    "a stuck pod of the old revision is Progressing while the StatefulSet rolls out; of the update revision, " +
      "Degraded",
    () => {
      const set: KubeObject = {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "shop", namespace: "vc-shop", generation: 2 },
        spec: { replicas: 1 },
        status: { ...settled, observedGeneration: 2, readyReplicas: 0, updateRevision: "shop-2" },
      };
      const crashing = (rev: string): KubeObject => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "shop-0", namespace: "vc-shop", labels: { "controller-revision-hash": rev } },
        status: {
          phase: "Running",
          containerStatuses: [{ name: "api", state: { waiting: { reason: "CrashLoopBackOff" } } }],
        },
      });
      const ref = { apiVersion: "apps/v1", kind: "StatefulSet", namespace: "vc-shop", name: "shop" };
      expect(clusterHealth({ objects: [{ ref, live: set }], pods: [crashing("shop-1")], claims: [] }).status).to.equal(
        "Progressing",
      );
      expect(clusterHealth({ objects: [{ ref, live: set }], pods: [crashing("shop-2")], claims: [] })).to.include({
        status: "Degraded",
        reason: "pod shop-0 CrashLoopBackOff",
      });
    },
  );
});
