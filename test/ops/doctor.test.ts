// The doctor checks as pure functions over host snapshots: each problem found, and a healthy cluster clean.
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { diagnose } from "../../src/ops/doctor/index.js";
import { pendingCauses } from "../../src/ops/doctor/pods.js";
import { allowed } from "../../src/ops/doctor/rbac.js";
import type { HostSnapshot, PodLike } from "../../src/ops/doctor/types.js";
import { effectiveValues } from "../../src/validate/values.js";
import { LABELS } from "../../src/translate/keys.js";

const NS = "vc-team-a";

function obj(apiVersion: string, kind: string, name: string, rest: Record<string, unknown> = {}, namespace: string | undefined = NS): KubeObject {
  const { metadata, ...other } = rest as { metadata?: Record<string, unknown> };
  return { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}), ...(metadata ?? {}) }, ...other };
}

function pod(name: string, extra: Partial<PodLike> & { labels?: Record<string, string> } = {}): KubeObject {
  return obj("v1", "Pod", name, {
    metadata: { labels: extra.labels ?? { [LABELS.managedBy]: "team-a" }, annotations: extra.metadata?.annotations },
    spec: extra.spec ?? { containers: [{ name: "app" }, { name: "mesh-proxy" }] },
    status: extra.status ?? { phase: "Running" },
  });
}

/** A healthy cluster with the metrics and mesh integrations on. */
function healthy(): HostSnapshot {
  const values = effectiveValues({
    integrations: { mesh: { enabled: true }, metricsServer: { enabled: true } },
    controlPlane: { backingStore: { kvstore: { persistence: { enabled: true } } } },
  });
  const saName = "vc-metrics-proxy-team-a";
  return {
    cluster: "team-a",
    namespace: NS,
    namespaceObject: obj("v1", "Namespace", NS, { metadata: { labels: { "mesh-injection": "enabled" } } }, undefined),
    statefulSet: obj("apps/v1", "StatefulSet", "team-a", {
      spec: {
        template: { spec: { containers: [{ name: "syncer", args: ["--backing-store=embedded-kvstore"], livenessProbe: { initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5 } }] } },
        volumeClaimTemplates: [{ metadata: { name: "data" } }],
      },
    }),
    pods: [
      pod("team-a-0", { labels: { release: "team-a", app: "vc", [LABELS.managedBy]: "team-a" }, spec: { containers: [{ name: "syncer" }] } }),
      pod("web-x-default-x-team-a"),
    ],
    events: [],
    pvcs: [obj("v1", "PersistentVolumeClaim", "data-team-a-0", { status: { phase: "Bound" } })],
    metricsApiService: obj("apiregistration.k8s.io/v1", "APIService", "v1beta1.metrics.orch.io", { status: { conditions: [{ type: "Available", status: "True" }] } }, undefined),
    deployments: [obj("apps/v1", "Deployment", saName, { spec: { template: { spec: { serviceAccountName: saName } } } })],
    rbac: {
      roles: [
        obj("rbac.authorization.k8s.io/v1", "Role", "metrics", { rules: [{ apiGroups: ["metrics.orch.io"], resources: ["pods"], verbs: ["get", "list", "watch"] }] }),
        obj("rbac.authorization.k8s.io/v1", "Role", "vc-team-a", { rules: [{ apiGroups: [""], resources: ["pods", "services"], verbs: ["*"] }] }),
      ],
      roleBindings: [
        obj("rbac.authorization.k8s.io/v1", "RoleBinding", "metrics", { roleRef: { kind: "Role", name: "metrics" }, subjects: [{ kind: "ServiceAccount", name: saName, namespace: NS }] }),
        obj("rbac.authorization.k8s.io/v1", "RoleBinding", "vc-team-a", { roleRef: { kind: "Role", name: "vc-team-a" }, subjects: [{ kind: "ServiceAccount", name: "vc-team-a", namespace: NS }] }),
      ],
      clusterRoles: [obj("rbac.authorization.k8s.io/v1", "ClusterRole", "nodes", { rules: [{ apiGroups: ["metrics.orch.io"], resources: ["nodes"], verbs: ["*"] }] }, undefined)],
      clusterRoleBindings: [obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "nodes", { roleRef: { kind: "ClusterRole", name: "nodes" }, subjects: [{ kind: "ServiceAccount", name: saName, namespace: NS }] }, undefined)],
    },
    gateways: [
      obj("networking.mesh.io/v1beta1", "Gateway", "gw-x-default-x-team-a", {
        spec: { selector: { istio: "ingressgateway" }, servers: [{ port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["a.example.com"], tls: { mode: "SIMPLE", credentialName: "a-cert" } }] },
      }),
    ],
    ingressPods: [obj("v1", "Pod", "ingress-1", { metadata: { labels: { istio: "ingressgateway" } } }, "mesh-system")],
    existingSecrets: ["mesh-system/a-cert"],
    values,
  };
}

const checks = (s: HostSnapshot) => diagnose(s).map((f) => f.check);

describe("ops/doctor", () => {
  it("finds nothing on a healthy cluster", () => {
    expect(diagnose(healthy())).to.deep.equal([]);
  });

  it("names each of the four causes of a Pending pod", () => {
    const s = healthy();
    s.pods.push(
      pod("cpu", { status: { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/3 nodes are available: 3 Insufficient cpu." }] } }),
      pod("claim", { spec: { containers: [{ name: "app" }, { name: "mesh-proxy" }], volumes: [{ name: "d", persistentVolumeClaim: { claimName: "missing-claim" } }] }, status: { phase: "Pending" } }),
      pod("pull", { status: { phase: "Pending", containerStatuses: [{ name: "app", state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } } }] } }),
      pod("taint", { status: { phase: "Pending" } }),
    );
    s.events.push(obj("v1", "Event", "taint.1", { involvedObject: { kind: "Pod", name: "taint" }, reason: "FailedScheduling", message: "0/2 nodes are available: 2 node(s) had untolerated taint {gpu: true}." }));
    const found = diagnose(s).filter((f) => f.check === "pod-pending");
    const by = (name: string) => found.filter((f) => f.object === `Pod ${NS}/${name}`).map((f) => f.message.split(" ")[1]);
    expect(by("cpu")).to.deep.equal(["insufficient-resources"]);
    expect(by("claim")).to.deep.equal(["unbound-volume-claim"]);
    expect(by("pull")).to.deep.equal(["image-pull"]);
    expect(by("taint")).to.deep.equal(["node-selector-or-taint"]);
    expect(found.every((f) => f.resolution.length > 20)).to.equal(true);
  });

  it("sees an unbound claim through the claim's phase", () => {
    const s = healthy();
    s.pvcs = [obj("v1", "PersistentVolumeClaim", "data-team-a-0", { status: { phase: "Pending" } })];
    const p = pod("team-a-0", { spec: { containers: [{ name: "syncer" }], volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-team-a-0" } }] }, status: { phase: "Pending" } });
    expect(pendingCauses(s, p as unknown as PodLike)).to.deep.equal([{ cause: "unbound-volume-claim", detail: "volume claim data-team-a-0 is Pending" }]);
  });

  it("reports CrashLoopBackOff with restarts and OOMKilled, suggesting resources", () => {
    const s = healthy();
    s.pods[0] = pod("team-a-0", {
      labels: { release: "team-a", app: "vc" },
      spec: { containers: [{ name: "syncer", resources: { limits: { memory: "256Mi" } } }] },
      status: { phase: "Running", containerStatuses: [{ name: "syncer", restartCount: 17, state: { waiting: { reason: "CrashLoopBackOff" } }, lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } } }] },
    });
    const [f] = diagnose(s);
    expect(f).to.include({ check: "crash-loop", severity: "error", object: `Pod ${NS}/team-a-0` });
    expect(f!.message).to.equal("container syncer in CrashLoopBackOff after 17 restarts, last terminated OOMKilled");
    expect(f!.resolution).to.match(/memory exhaustion: raise the memory limit .*limits cpu 1000m \/ memory 2Gi.*\(limit now 256Mi\)/);
  });

  it("reports the metrics API service absent and unavailable", () => {
    const s = healthy();
    s.metricsApiService = undefined;
    expect(diagnose(s)[0]).to.deep.include({ check: "metrics-api", resolution: "the service is registered at control-plane start; check start-up logs" });
    s.metricsApiService = obj("apiregistration.k8s.io/v1", "APIService", "v1beta1.metrics.orch.io", { status: { conditions: [{ type: "Available", status: "False", reason: "FailedDiscoveryCheck" }] } }, undefined);
    const [f] = diagnose(s);
    expect(f!.message).to.equal("metrics not available (FailedDiscoveryCheck)");
    expect(f!.resolution).to.equal("verify host metrics server runs, verify integration is enabled, restart the control plane");
  });

  it("skips metrics checks when the integration is off", () => {
    const s = healthy();
    s.values!.integrations.metricsServer.enabled = false;
    s.metricsApiService = undefined;
    s.rbac.roleBindings = s.rbac.roleBindings.filter((b) => b.metadata.name !== "metrics");
    s.rbac.clusterRoleBindings = [];
    expect(checks(s)).to.deep.equal([]);
  });

  it("reports metrics forbidden with the RBAC to grant", () => {
    const s = healthy();
    s.rbac.roleBindings = s.rbac.roleBindings.filter((b) => b.metadata.name !== "metrics");
    const f = diagnose(s).find((x) => x.check === "metrics-forbidden")!;
    expect(f.message).to.equal(`HTTP 403 Forbidden: system:serviceaccount:${NS}:vc-metrics-proxy-team-a may not get, list pods.metrics.orch.io in ${NS}`);
    expect(f.resolution).to.contain(`create rolebinding vc-metrics-reader --role=vc-metrics-reader --serviceaccount=${NS}:vc-metrics-proxy-team-a`);
  });

  it("reports a syncer service account that may not manage pods in the host namespace, unless pod sync is off", () => {
    const s = healthy();
    (s.statefulSet!.spec as { template: { spec: Record<string, unknown> } }).template.spec.serviceAccountName = "vc-team-a";
    s.rbac.roles[1]!.rules = [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }];
    const [f] = diagnose(s);
    expect(f).to.include({ check: "syncer-rbac", object: `ServiceAccount ${NS}/vc-team-a` });
    expect(f!.message).to.equal(`system:serviceaccount:${NS}:vc-team-a may not create, delete pods in ${NS}: pod sync cannot work`);
    s.values!.sync.toHost.pods.enabled = false;
    expect(diagnose(s)).to.deep.equal([]);
  });

  it("evaluates RBAC: wildcards, namespaces, resourceNames, groups", () => {
    const s = healthy().rbac;
    const sa = { namespace: NS, name: "vc-metrics-proxy-team-a" };
    expect(allowed(s, sa, "metrics.orch.io", "pods", "list", NS)).to.equal(true);
    expect(allowed(s, sa, "metrics.orch.io", "pods", "list", "other")).to.equal(false);
    expect(allowed(s, sa, "metrics.orch.io", "pods", "delete", NS)).to.equal(false);
    expect(allowed(s, sa, "metrics.orch.io", "nodes", "get")).to.equal(true);
    expect(allowed(s, { namespace: NS, name: "someone" }, "metrics.orch.io", "nodes", "get")).to.equal(false);
    s.clusterRoles[0]!.rules = [{ apiGroups: ["metrics.orch.io"], resources: ["nodes"], verbs: ["get"], resourceNames: ["n1"] }];
    expect(allowed(s, sa, "metrics.orch.io", "nodes", "get")).to.equal(false);
  });

  it("reports pods without the mesh-proxy sidecar and the namespace without the injection label", () => {
    const s = healthy();
    s.namespaceObject!.metadata.labels = {};
    s.pods.push(pod("lonely", { spec: { containers: [{ name: "app" }] } }));
    s.pods.push(pod("opted-out", { spec: { containers: [{ name: "app" }] }, metadata: { name: "x", annotations: { "sidecar.mesh.io/inject": "false" } } }));
    s.pods.push(pod("foreign", { labels: { [LABELS.managedBy]: "team-b" }, spec: { containers: [{ name: "app" }] } }));
    const found = diagnose(s);
    expect(found.map((f) => [f.check, f.object])).to.deep.equal([
      ["sidecar-missing", `Pod ${NS}/lonely`],
      ["mesh-injection-label", `Namespace ${NS}`],
    ]);
    expect(found[0]!.message).to.equal("pod lacks the mesh-proxy container (1 container)");
    expect(found[0]!.resolution).to.equal('label host namespace mesh-injection=enabled and restart the workload, or annotate the pod with sidecar.mesh.io/inject: "true"');
  });

  it("reports a Gateway selector matching no ingress pods and a missing TLS secret", () => {
    const s = healthy();
    s.ingressPods = [];
    s.existingSecrets = [];
    const found = diagnose(s);
    expect(found.map((f) => f.check)).to.deep.equal(["gateway-selector", "tls-secret"]);
    expect(found[0]!.message).to.equal("selector istio=ingressgateway matches no ingress gateway pods");
    expect(found[0]!.resolution).to.equal("make the selector match the ingress gateway pods' labels; check the gateway service and its external address");
    expect(found[1]!.message).to.equal(`tls.credentialName a-cert (port 443) names a secret that does not exist in ${NS}`);
    expect(found[1]!.resolution).to.match(/^verify the secret named in tls.credentialName exists; enable integrations.certManager/);
  });

  it("reports the embedded store without persistence", () => {
    const s = healthy();
    delete (s.statefulSet!.spec as Record<string, unknown>).volumeClaimTemplates;
    expect(checks(s)).to.deep.equal(["persistence"]);
    s.statefulSet = undefined;
    s.values!.controlPlane.backingStore.kvstore.persistence.enabled = false;
    expect(checks(s)).to.deep.equal(["persistence"]);
    s.values!.controlPlane.backingStore.database.external.enabled = true;
    expect(checks(s)).to.deep.equal([]);
  });

  it("reports a liveness probe tighter than 60/20/5", () => {
    const s = healthy();
    const c = (s.statefulSet!.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec.containers[0]!;
    c.livenessProbe = { initialDelaySeconds: 10, periodSeconds: 20, failureThreshold: 3 };
    const [f] = diagnose(s);
    expect(f).to.include({ check: "liveness-probe", severity: "warning" });
    expect(f!.message).to.equal("liveness probe tighter than suggested: initialDelaySeconds 10 < 60, failureThreshold 3 < 5");
  });
});
