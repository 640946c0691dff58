// In-memory host snapshots for the doctor tests: one healthy cluster, and per row of the coverage table a change that
// breaks it.
import type { KubeObject } from "../../src/kube/object.js";
import type { PodLike } from "../../src/health/pod-causes.js";
import type { HostSnapshot } from "../../src/ops/doctor/types.js";
import { initManifestsText } from "../../src/render/initManifests.js";
import { metricsVirtualObjects } from "../../src/render/metricsProxy.js";
import { formatReplicaStatus } from "../../src/model/proxy-status.js";
import { LABELS } from "../../src/translate/keys.js";
import { metricsAccessQuestions } from "../../src/ops/doctor/metrics-rbac.js";
import { syncerAccessQuestions } from "../../src/ops/doctor/syncer.js";
import { effectiveValues } from "../../src/validate/values.js";

export const NS = "vc-team-a";

export function obj(
  apiVersion: string,
  kind: string,
  name: string,
  rest: Record<string, unknown> = {},
  namespace: string | undefined = NS,
): KubeObject {
  const { metadata, ...other } = rest as { metadata?: Record<string, unknown> };
  return { apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}), ...(metadata ?? {}) }, ...other };
}

const REQUESTS = { requests: { cpu: "100m", memory: "128Mi" } };

/** The cert-manager Certificate that issues the fixture Gateway's Secret, not Ready. */
const unreadyCertificate = (): KubeObject =>
  obj("cert-manager.io/v1", "Certificate", "a-x-default-x-team-a", {
    spec: {
      secretName: "a-cert",
      dnsNames: ["a.example.com"],
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" },
    },
    status: { conditions: [{ type: "Ready", status: "False", reason: "Failed", message: "ACME challenge failed" }] },
  });

export function pod(name: string, extra: Partial<PodLike> & { labels?: Record<string, string> } = {}): KubeObject {
  return obj("v1", "Pod", name, {
    metadata: { labels: extra.labels ?? { [LABELS.managedBy]: "team-a" }, annotations: extra.metadata?.annotations },
    spec: extra.spec ?? {
      containers: [
        { name: "app", resources: REQUESTS },
        { name: "mesh-proxy", resources: REQUESTS },
      ],
    },
    status: extra.status ?? { phase: "Running" },
  });
}

const REVIEWS = "reviews-x-default-x-team-a";
const REVIEWS_HOST = `${REVIEWS}.${NS}.svc.cluster.local`;
const PROXY = "vc-metrics-proxy-team-a";

/** A replica's status of the shared proxy, written at the snapshot's time, failing for `failed`. */
function proxyStatus(failed: Record<string, string>): string {
  return formatReplicaStatus({
    at: "2026-02-01T00:00:00.000Z",
    intervalSeconds: 60,
    clusters: 1,
    loaded: 1,
    ready: [],
    waiting: {},
    failed,
  });
}

/**
 * A healthy cluster with the metrics integration (host group metrics.k8s.io), node syncing, the mesh integration and
 * persistence on: every check has something to look at and finds nothing.
 */
export function healthy(): HostSnapshot {
  const s = healthyWithoutAccess();
  s.access = [...metricsAccessQuestions(s), ...syncerAccessQuestions(s)].map((q) => ({ ...q, allowed: true }));
  s.rendered = structuredClone([...s.virtualServices, ...s.destinationRules, ...s.gateways]);
  return s;
}

/**
 * The host's authorizer denies these verbs to the service account `name` on `resource` of `group` (SubjectAccessReview
 * answers).
 */
function deny(s: HostSnapshot, name: string, group: string, resource: string, verbs: string[]): void {
  const hits = s.access!.filter(
    (a) => a.serviceAccount.name === name && a.group === group && a.resource === resource && verbs.includes(a.verb),
  );
  if (hits.length !== verbs.length)
    throw new Error(`no such questions: ${name} ${verbs.join(",")} ${resource}.${group}`);
  for (const a of hits) Object.assign(a, { allowed: false, reason: "" });
}

function healthyWithoutAccess(): HostSnapshot {
  const raw = {
    integrations: {
      mesh: { enabled: true },
      metricsServer: { enabled: true, proxy: { hostApiGroup: "metrics.k8s.io" } },
    },
    controlPlane: { backingStore: { kvstore: { persistence: { enabled: true } } } },
    sync: { fromHost: { nodes: { enabled: true } } },
  };
  return {
    cluster: "team-a",
    namespace: NS,
    namespaceObject: obj(
      "v1",
      "Namespace",
      NS,
      { metadata: { labels: { "mesh-injection": "enabled", [LABELS.metricsProxy]: "synced" } } },
      undefined,
    ),
    statefulSet: obj("apps/v1", "StatefulSet", "team-a", {
      spec: {
        replicas: 1,
        template: {
          metadata: { annotations: { "vc.orch.io/config-hash": "c0ffee" } },
          spec: {
            serviceAccountName: "vc-team-a",
            containers: [
              {
                name: "syncer",
                args: ["--backing-store=embedded-kvstore", "--init-manifests=/etc/vc/init/manifests.yaml"],
                livenessProbe: { initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5 },
                resources: { requests: { cpu: "200m", memory: "512Mi" } },
              },
            ],
          },
        },
        volumeClaimTemplates: [{ metadata: { name: "data" } }],
      },
    }),
    pods: [
      pod("team-a-0", {
        labels: { release: "team-a", app: "vc" },
        metadata: { name: "team-a-0", annotations: { "vc.orch.io/config-hash": "c0ffee" } },
        spec: { containers: [{ name: "syncer", resources: { requests: { cpu: "200m", memory: "512Mi" } } }] },
        status: {
          phase: "Running",
          conditions: [{ type: "Ready", status: "True" }],
          containerStatuses: [{ name: "syncer", restartCount: 0, ready: true, state: { running: {} } }],
        },
      }),
      pod("web-x-default-x-team-a"),
    ],
    events: [],
    pvcs: [obj("v1", "PersistentVolumeClaim", "data-team-a-0", { status: { phase: "Bound" } })],
    metricsApiService: obj(
      "apiregistration.k8s.io/v1",
      "APIService",
      "v1beta1.metrics.k8s.io",
      { status: { conditions: [{ type: "Available", status: "True" }] } },
      undefined,
    ),
    initManifests: obj("v1", "ConfigMap", "vc-init-team-a", {
      data: { "manifests.yaml": initManifestsText(metricsVirtualObjects("team-a", NS)) },
    }),
    liveValues: effectiveValues(raw),
    deployments: [],
    sharedProxy: {
      deployment: obj(
        "apps/v1",
        "Deployment",
        "vc-metrics-proxy",
        {
          spec: {
            replicas: 2,
            template: { spec: { containers: [{ args: ["--listen", ":9001", "--host-api-group", "metrics.k8s.io"] }] } },
          },
          status: { availableReplicas: 2 },
        },
        "vc-system",
      ),
      status: obj(
        "v1",
        "ConfigMap",
        "vc-metrics-proxy-status",
        { data: { "vc-metrics-proxy-0": proxyStatus({}) } },
        "vc-system",
      ),
      tlsSecret: true,
    },
    serviceAccounts: [obj("v1", "ServiceAccount", "vc-team-a"), obj("v1", "ServiceAccount", PROXY)],
    services: [obj("v1", "Service", REVIEWS)],
    virtualServices: [
      obj("networking.mesh.io/v1beta1", "VirtualService", REVIEWS, {
        spec: { hosts: [REVIEWS_HOST], http: [{ route: [{ destination: { host: REVIEWS_HOST, subset: "v1" } }] }] },
      }),
    ],
    destinationRules: [
      obj("networking.mesh.io/v1beta1", "DestinationRule", REVIEWS, {
        spec: { host: REVIEWS_HOST, subsets: [{ name: "v1", labels: { version: "v1" } }] },
      }),
    ],
    gateways: [
      obj("networking.mesh.io/v1beta1", "Gateway", "gw-x-default-x-team-a", {
        spec: {
          selector: { istio: "ingressgateway" },
          servers: [
            {
              port: { number: 443, name: "https", protocol: "HTTPS" },
              hosts: ["a.example.com"],
              tls: { mode: "SIMPLE", credentialName: "a-cert" },
            },
          ],
        },
      }),
    ],
    ingressPods: [
      obj(
        "v1",
        "Pod",
        "ingress-1",
        {
          metadata: { labels: { istio: "ingressgateway" } },
          status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
        },
        "mesh-system",
      ),
    ],
    ingressServices: [
      obj(
        "v1",
        "Service",
        "ingressgateway",
        {
          spec: {
            type: "LoadBalancer",
            selector: { istio: "ingressgateway" },
            ports: [{ name: "https", port: 443, targetPort: 8443 }],
          },
          status: { loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } },
        },
        "mesh-system",
      ),
    ],
    tlsCertificates: {
      "mesh-system/a-cert": {
        validFrom: "2026-01-01T00:00:00.000Z",
        validTo: "2026-06-01T00:00:00.000Z",
        dnsNames: ["a.example.com"],
      },
    },
    checkedAt: "2026-02-01T00:00:00.000Z",
    // A policy that admits the API port from anywhere and egress to the host API server.
    networkPolicies: [
      obj("networking.k8s.io/v1", "NetworkPolicy", "control-plane", {
        spec: {
          podSelector: { matchLabels: { release: "team-a" } },
          policyTypes: ["Ingress", "Egress"],
          ingress: [{ ports: [{ port: 8443 }] }],
          egress: [{ to: [{ ipBlock: { cidr: "10.0.0.0/24" } }], ports: [{ port: 6443 }] }],
        },
      }),
    ],
    apiServerEndpoints: [{ ip: "10.0.0.1", port: 6443 }],
    virtual: {
      server: "https://team-a.vc-team-a:443",
      apiServices: [
        obj(
          "apiregistration.k8s.io/v1",
          "APIService",
          "v1beta1.metrics.orch.io",
          { status: { conditions: [{ type: "Available", status: "True" }] } },
          undefined,
        ),
      ],
      autoscalers: [],
    },
    existingSecrets: ["mesh-system/a-cert"],
    slowReads: [],
    missingKinds: [],
    values: effectiveValues(raw),
    unreadable: {},
  };
}

type Spec = { spec: Record<string, unknown> };
type PolicyLike = { ingress?: unknown[]; egress?: unknown[] };
type Status = { status: Record<string, unknown> };

const web = (s: HostSnapshot) =>
  s.pods.find((p) => p.metadata.name === "web-x-default-x-team-a") as unknown as KubeObject & Spec & Status;
const controlPlane = (s: HostSnapshot) =>
  s.pods.find((p) => p.metadata.name === "team-a-0") as unknown as KubeObject & Spec & Status;
const syncer = (s: HostSnapshot) =>
  (s.statefulSet as unknown as { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } }).spec
    .template.spec.containers[0]!;
const event = (name: string, kind: string, target: string, reason: string, message: string) =>
  obj("v1", "Event", name, {
    involvedObject: { kind, name: target, namespace: NS },
    reason,
    message,
    lastTimestamp: "2026-01-01T10:00:00Z",
  });
const crashLoop = (s: HostSnapshot, lastState: Record<string, unknown>) => {
  web(s).status = {
    phase: "Running",
    containerStatuses: [
      { name: "app", restartCount: 9, state: { waiting: { reason: "CrashLoopBackOff" } }, lastState },
    ],
  };
};

/** Per coverage entry (`row|check|severity`), the change to the healthy snapshot that makes it fire. */
export const SCENARIOS: Record<string, (s: HostSnapshot) => void> = {
  "metrics-not-available|metrics-host-api|error": (s) => void (s.metricsApiService = undefined),
  "metrics-not-available|metrics-api-group|error": (s) =>
    void (s.missingKinds = ["metrics.k8s.io/v1beta1/NodeMetrics", "metrics.k8s.io/v1beta1/PodMetrics"]),
  "metrics-not-available|metrics-proxy|error": (s) =>
    void ((s.sharedProxy!.deployment as unknown as Status).status = { availableReplicas: 0 }),
  "metrics-not-available|metrics-proxy|warning": (s) => void (s.sharedProxy!.status = undefined),
  // The cluster's own proxy of before still runs, its hand-over waiting.
  "metrics-not-available|metrics-proxy|note": (s) =>
    void s.deployments.push(
      obj("apps/v1", "Deployment", PROXY, {
        spec: { replicas: 1, template: { spec: { serviceAccountName: PROXY } } },
        status: { availableReplicas: 1 },
      }),
    ),
  "metrics-not-available|metrics-proxy-tls|error": (s) => void (s.sharedProxy!.tlsSecret = false),
  "node-metrics|node-metrics|note": (s) => void (s.values!.sync.fromHost.nodes.enabled = false),
  "node-metrics|node-metrics|error": (s) => deny(s, "vc-team-a", "", "nodes", ["get", "list"]),
  "autoscaler-unknown|pod-requests|warning": (s) =>
    void (web(s).spec = { containers: [{ name: "app" }, { name: "mesh-proxy", resources: REQUESTS }] }),
  "metrics-api-service|metrics-api-service|error": (s) => void (s.initManifests = undefined),
  "metrics-not-available|metrics-virtual-api|error": (s) =>
    void (s.virtual!.apiServices[0]!.status = {
      conditions: [{ type: "Available", status: "False", reason: "FailedDiscoveryCheck" }],
    }),
  "autoscaler-unknown|pod-metrics|warning": (s) =>
    void s.virtual!.autoscalers.push({
      autoscaler: "default/web",
      workload: "Deployment default/web",
      pods: ["web-1", "web-2"],
      withMetrics: ["web-1"],
    }),
  "autoscaler-unknown|pod-metrics|note": (s) =>
    void s.virtual!.autoscalers.push({
      autoscaler: "default/web",
      workload: "Deployment default/web",
      pods: ["web-1"],
      withMetrics: ["web-1"],
    }),
  "metrics-api-service|metrics-api-service|warning": (s) =>
    void (controlPlane(s).metadata.annotations = { "vc.orch.io/config-hash": "0ld" }),
  // The host's authorizer denies the metrics reader pod metrics of the configured host group metrics.k8s.io.
  "metrics-forbidden|metrics-forbidden|error": (s) =>
    deny(s, "vc-metrics-proxy", "metrics.k8s.io", "pods", ["get", "list"]),
  "mesh-custom-resource|mesh-custom-resource|error": (s) =>
    void (s.liveValues!.sync.toHost.customResources = { "virtualservices.networking.mesh.io": { enabled: true } }),
  "sidecar-missing|sidecar-missing|error": (s) =>
    void (web(s).spec = { containers: [{ name: "app", resources: REQUESTS }] }),
  "sidecar-missing|mesh-injection-label|note": (s) => void (s.namespaceObject!.metadata.labels = {}),
  "mesh-not-effective|mesh-crds|error": (s) =>
    void (s.missingKinds = [
      "networking.mesh.io/v1beta1/DestinationRule",
      "networking.mesh.io/v1beta1/Gateway",
      "networking.mesh.io/v1beta1/VirtualService",
    ]),
  "mesh-not-effective|mesh-destination|error": (s) => void (s.services = []),
  // The synced VirtualService was deleted on the host (and the repository's DestinationRule edited there).
  "mesh-not-effective|mesh-not-synced|error": (s) => {
    s.virtualServices = [];
    (s.destinationRules[0]!.spec as { subsets: unknown[] }).subsets.push({ name: "v2", labels: { version: "v2" } });
  },
  // The route names subset v1, which neither the repository's DestinationRule nor the host's defines.
  "mesh-not-effective|mesh-subset|error": (s) => {
    for (const dr of [s.destinationRules[0]!, s.rendered!.find((o) => o.kind === "DestinationRule")!])
      (dr.spec as { subsets: unknown[] }).subsets = [];
  },
  "mesh-not-effective|mesh-host-conflict|warning": (s) =>
    void s.destinationRules.push(
      obj("networking.mesh.io/v1beta1", "DestinationRule", "reviews-too", { spec: { host: REVIEWS_HOST } }),
    ),
  "gateway-unreachable|gateway-selector|error": (s) => void (s.ingressPods = []),
  "gateway-unreachable|gateway-pods-ready|error": (s) =>
    void ((s.ingressPods[0] as unknown as Status).status = { phase: "Pending" }),
  "gateway-unreachable|gateway-service|error": (s) => void (s.ingressServices = []),
  "gateway-unreachable|gateway-external-address|warning": (s) =>
    void ((s.ingressServices[0] as unknown as Status).status = { loadBalancer: {} }),
  "https-certificate|tls-certificate|error": (s) => void (s.checkedAt = "2026-07-01T00:00:00.000Z"),
  "https-certificate|tls-certificate|warning": (s) => void (s.checkedAt = "2026-05-25T00:00:00.000Z"),
  "https-certificate|tls-secret|error": (s) =>
    void (s.existingSecrets = s.existingSecrets.filter((x) => !x.includes("a-cert"))),
  // The Gateway's Secret comes from a Certificate that cert-manager has not issued (yet): no Secret at all, or an
  // earlier one.
  "https-certificate|certificate-not-ready|error": (s) => {
    s.certificates = [unreadyCertificate()];
    s.existingSecrets = s.existingSecrets.filter((x) => !x.includes("a-cert"));
  },
  "https-certificate|certificate-not-ready|warning": (s) => {
    s.certificates = [unreadyCertificate()];
    s.existingSecrets.push(`${NS}/a-cert`);
  },
  "connection|control-plane-pod|error": (s) => void (s.pods = s.pods.filter((p) => p.metadata.name !== "team-a-0")),
  "connection|control-plane-ready|error": (s) =>
    void (controlPlane(s).status.conditions = [{ type: "Ready", status: "False", reason: "ContainersNotReady" }]),
  "connection|control-plane-service-account|error": (s) =>
    void (s.serviceAccounts = s.serviceAccounts.filter((a) => a.metadata.name !== "vc-team-a")),
  "connection|syncer-rbac|error": (s) => deny(s, "vc-team-a", "", "pods", ["create", "delete"]),
  // Egress admitted only to a block without the host API server's address.
  "connection|network-policy|error": (s) =>
    void ((s.networkPolicies![0]!.spec as PolicyLike).egress = [{ to: [{ ipBlock: { cidr: "192.168.0.0/16" } }] }]),
  "connection|network-policy|warning": (s) =>
    void ((s.networkPolicies![0]!.spec as PolicyLike).ingress = [
      { from: [{ podSelector: { matchLabels: { app: "client" } } }], ports: [{ port: 8443 }] },
    ]),
  "api-timeouts|api-timeouts|warning": (s) =>
    void s.events.push(
      event(
        "cp.1",
        "Pod",
        "team-a-0",
        "Unhealthy",
        'Readiness probe failed: Get "https://10.0.0.7:8443/readyz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
      ),
    ),
  "api-timeouts|host-api-slow|warning": (s) =>
    void (s.slowReads = [{ path: `/api/v1/namespaces/${NS}/events`, ms: 6400 }]),
  "tenant-writes|host-reads-bounded|warning": (s) =>
    void (s.boundedReads = [{ path: `/api/v1/namespaces/${NS}/pods`, why: "more than 500 objects", read: 500 }]),
  "state-loss|persistence|note": (s) => void delete (s.statefulSet as unknown as Spec).spec.volumeClaimTemplates,
  // The control plane's pod was created an hour after its StatefulSet: it was recreated (deleted, evicted, its node
  // lost).
  "state-loss|persistence|warning": (s) => {
    delete (s.statefulSet as unknown as Spec).spec.volumeClaimTemplates;
    Object.assign(s.statefulSet!.metadata, { creationTimestamp: "2026-01-01T09:00:00Z" });
    Object.assign(controlPlane(s).metadata, { creationTimestamp: "2026-01-01T10:00:00Z" });
  },
  "state-loss|volume-claim|error": (s) => void ((s.pvcs[0] as unknown as Status).status = { phase: "Lost" }),
  "pending-resources|pod-pending|error": (s) =>
    void (web(s).status = {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/3 nodes are available: 3 Insufficient cpu.",
        },
      ],
    }),
  "pending-volume-claim|pod-pending|error": (s) => {
    web(s).spec.volumes = [{ name: "d", persistentVolumeClaim: { claimName: "missing-claim" } }];
    web(s).status = { phase: "Pending" };
  },
  "pending-image-pull|pod-pending|error": (s) =>
    void (web(s).status = {
      phase: "Pending",
      containerStatuses: [
        { name: "app", state: { waiting: { reason: "ImagePullBackOff", message: "Back-off pulling image" } } },
      ],
    }),
  "pending-node-selector|pod-pending|error": (s) => {
    web(s).status = { phase: "Pending" };
    s.events.push(
      event(
        "web.1",
        "Pod",
        "web-x-default-x-team-a",
        "FailedScheduling",
        "0/2 nodes are available: 2 node(s) had untolerated taint {gpu: true}.",
      ),
    );
  },
  "pending-unreported|pod-pending|warning": (s) => void (web(s).status = { phase: "Pending" }),
  "crash-memory|crash-loop|error": (s) => crashLoop(s, { terminated: { reason: "OOMKilled", exitCode: 137 } }),
  "crash-liveness|crash-loop|error": (s) => {
    crashLoop(s, { terminated: { reason: "Error", exitCode: 137 } });
    s.events.push(
      event(
        "web.2",
        "Pod",
        "web-x-default-x-team-a",
        "Killing",
        "Container app failed liveness probe, will be restarted",
      ),
    );
  },
  "crash-liveness|liveness-probe|note": (s) =>
    void (syncer(s).livenessProbe = { initialDelaySeconds: 10, periodSeconds: 20, failureThreshold: 3 }),
  "crash-node-pressure|crash-loop|error": (s) => {
    crashLoop(s, { terminated: { reason: "Error", exitCode: 137 } });
    s.events.push(event("web.3", "Pod", "web-x-default-x-team-a", "Evicted", "The node was low on resource: memory."));
  },
  "crash-application|crash-loop|error": (s) => crashLoop(s, { terminated: { reason: "Error", exitCode: 1 } }),
  "high-restarts|high-restarts|warning": (s) =>
    void (web(s).status = {
      phase: "Running",
      containerStatuses: [
        {
          name: "app",
          restartCount: 7,
          state: { running: {} },
          lastState: { terminated: { reason: "Error", exitCode: 2 } },
        },
      ],
    }),
  "oom-killed|oom-killed|warning": (s) =>
    void (web(s).status = {
      phase: "Running",
      containerStatuses: [
        {
          name: "app",
          restartCount: 1,
          state: { running: {} },
          lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
        },
      ],
    }),
};
