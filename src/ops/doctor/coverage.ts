// The failures the service documents (spec section 7's errors table, section 3's pod states) and the doctor checks that
// find each: one table the checks take their resolutions from and the README, docs/troubleshooting.md and tests derive
// from.
import type { Finding, Severity } from "./types.js";

export interface SpecRow {
  /** The spec's section (7: errors, 3: pod states), or `vc`: conditions of the tenant boundary vc adds to them. */
  section: "3" | "7" | "vc";
  /** The condition as the spec names it. */
  condition: string;
  /** What the user sees (section 7's result column). */
  result?: string;
  /** The resolution: section 7's text as written there; for the states of section 3, ours. */
  resolution: string;
}

const MEMORY_HINT =
  "raise the memory limit (suggested control-plane resources: requests cpu 200m / memory 512Mi, limits cpu 1000m / " +
  "memory 2Gi; larger profile requests 500m / 1Gi, limits 2000m / 4Gi)";

export const ROWS = {
  "metrics-not-available": {
    section: "7",
    condition: "Top query for pods or nodes while the integration is misconfigured or the host metrics server is down",
    result: 'message "metrics not available"',
    resolution: "verify host metrics server runs, verify integration is enabled, restart the control plane",
  },
  "node-metrics": {
    section: "7",
    condition: "Node metrics empty or wrong nodes",
    result: "no or wrong nodes listed",
    resolution: "enable node syncing",
  },
  "autoscaler-unknown": {
    section: "7",
    condition: "Autoscaler shows `<unknown>` for current metrics",
    result: "unknown value",
    resolution: "give pods resource requests; allow 1-2 minutes for metrics; check pod metrics",
  },
  "metrics-api-service": {
    section: "7",
    condition: "Metrics API service absent from the API service list",
    result: "`metrics.orch.io` missing",
    resolution: "the service is registered at control-plane start; check start-up logs",
  },
  "metrics-forbidden": {
    section: "7",
    condition: "Metrics API permission failure",
    result: "HTTP 403 Forbidden",
    resolution: "grant RBAC to the service account",
  },
  "mesh-custom-resource": {
    section: "7",
    condition: "Mesh integration enabled and a mesh custom resource also set in `sync.toHost.customResources`",
    result:
      "error text: the mesh integration is enabled but the mesh custom resource is also set in " +
      "`sync.toHost.customResources`",
    resolution: "remove the manual custom-resource entry and use `integrations.mesh`",
  },
  "sidecar-missing": {
    section: "7",
    condition: "Sidecar missing (pods lack the `mesh-proxy` container)",
    result: "pod has one container",
    resolution:
      'label host namespace `mesh-injection=enabled` and restart the workload, or annotate the pod with `sidecar.mesh.io/inject: "true"`',
  },
  "mesh-not-effective": {
    section: "7",
    condition: "Synced mesh resource not effective",
    result: "rule not applied",
    resolution:
      "check the host namespace for the translated name, run the mesh analysis tool, check for name conflicts, " +
      "check that the target service exists",
  },
  "gateway-unreachable": {
    section: "7",
    condition: "Gateway not reachable",
    result: "no access through ingress",
    resolution:
      "make the selector match the ingress gateway pods' labels; check the gateway service and its external address",
  },
  "https-certificate": {
    section: "7",
    condition: "HTTPS certificate errors",
    result: "handshake failure",
    resolution:
      "verify the secret named in `tls.credentialName` exists; enable `integrations.certManager`; recreate the " +
      "gateway after the certificate is ready",
  },
  connection: {
    section: "7",
    condition: "Connection hangs, refused or authentication failure",
    result: "client timeout",
    resolution: "restart the stateful set, check service account, network policies, resource constraints",
  },
  "api-timeouts": {
    section: "7",
    condition: "API timeouts",
    result: "slow or hanging calls",
    resolution: "raise the client `--request-timeout`, raise control-plane resources, reduce load, tune the kvstore",
  },
  "state-loss": {
    section: "7",
    condition: "Resources disappear or state resets",
    result: "state loss",
    resolution: "check volume claims and storage class, enable persistence, restore from backup",
  },
  "pending-resources": {
    section: "3",
    condition: "`Pending`: insufficient resources",
    resolution: "lower the pod's resource requests, free capacity or add nodes",
  },
  "pending-volume-claim": {
    section: "3",
    condition: "`Pending`: an unbound volume claim",
    resolution: "check the volume claims and their storage class (kubectl get pvc), and that the class can provision",
  },
  "pending-image-pull": {
    section: "3",
    condition: "`Pending`: image pull failure",
    resolution: "check the image name and tag, the registry's reachability and the image pull secret",
  },
  "pending-node-selector": {
    section: "3",
    condition: "`Pending`: node selector/taint mismatch",
    resolution: "fix the pod's node selector or affinity, or add tolerations for the nodes' taints",
  },
  "pending-unreported": {
    section: "3",
    condition: "`Pending`, no cause reported yet",
    resolution: "wait a moment and run vc doctor again; read the namespace events (vc debug collect)",
  },
  "crash-memory": {
    section: "3",
    condition: "`CrashLoopBackOff`: memory exhaustion",
    resolution: `memory exhaustion: ${MEMORY_HINT}`,
  },
  "crash-liveness": {
    section: "3",
    condition: "`CrashLoopBackOff`: a liveness probe that is too aggressive",
    resolution:
      "loosen the liveness probe to the suggested values: initialDelaySeconds 60, periodSeconds 20, " +
      "failureThreshold 5 (controlPlane.statefulSet.probes.livenessProbe for the control plane)",
  },
  "crash-application": {
    section: "3",
    condition: "`CrashLoopBackOff`: application errors",
    resolution: "read the previous container's logs (vc debug collect) and fix the application's error",
  },
  "crash-node-pressure": {
    section: "3",
    condition: "`CrashLoopBackOff`: node pressure",
    resolution:
      "the node is short of memory, disk or process IDs: free the node, or give the pod requests that place it on " +
      "a node with room",
  },
  "high-restarts": {
    section: "3",
    condition: "High pod-restart count",
    resolution:
      "causes are memory exhaustion, a liveness probe that is too aggressive, application errors or node pressure: " +
      "read the previous logs and the last termination (vc debug collect)",
  },
  "oom-killed": { section: "3", condition: "`OOMKilled` (last termination state)", resolution: MEMORY_HINT },
  "tenant-writes": {
    section: "vc",
    condition:
      "What a tenant wrote in its host namespace: more objects than vc reads at once, or mesh objects vc did " +
      "not render",
    resolution:
      "read the namespace with kubectl (vc doctor reads at most 500 objects or 32 MiB of a kind); remove what the " +
      "tenant's syncer should not have written",
  },
} as const satisfies Record<string, SpecRow>;

export type RowKey = keyof typeof ROWS;

/** One way a row is found: the check, the severity it reports with, and when. */
export interface Coverage {
  row: RowKey;
  check: string;
  severity: Severity;
  when: string;
}

export const COVERAGE: readonly Coverage[] = [
  {
    row: "metrics-not-available",
    check: "metrics-host-api",
    severity: "error",
    when:
      "the host's APIService `v1beta1.<hostApiGroup>` is absent or not Available: no metrics server answers on " +
      "the host",
  },
  {
    row: "metrics-not-available",
    check: "metrics-api-group",
    severity: "error",
    when: "that APIService is Available but discovery does not list pod and node metrics in the group",
  },
  {
    row: "metrics-not-available",
    check: "metrics-proxy",
    severity: "error",
    when:
      "the host's shared metrics proxy (Deployment `vc-system/vc-metrics-proxy`) is absent or has no available " +
      "replica, or its replicas' status says it cannot answer for the cluster (and why)",
  },
  {
    row: "metrics-not-available",
    check: "metrics-proxy",
    severity: "warning",
    when: "the shared proxy runs but publishes no current status (ConfigMap `vc-system/vc-metrics-proxy-status`)",
  },
  {
    row: "metrics-not-available",
    check: "metrics-proxy",
    severity: "note",
    when:
      "the cluster's own proxy of before (Deployment `vc-metrics-proxy-<name>`) still runs: its hand-over to " +
      "the shared proxy is pending, and what it waits for",
  },
  {
    row: "metrics-not-available",
    check: "metrics-virtual-api",
    severity: "error",
    when: "the virtual cluster's APIService `v1beta1.metrics.orch.io` (read through its API server) is not Available",
  },
  {
    row: "metrics-not-available",
    check: "metrics-proxy-tls",
    severity: "error",
    when: "the shared proxy's TLS Secret `vc-system/vc-metrics-proxy-tls` does not exist: its pods cannot start",
  },
  {
    row: "node-metrics",
    check: "node-metrics",
    severity: "note",
    when:
      "node metrics are proxied while node syncing is off (the default): only the nodes running the cluster's " +
      "pods are listed",
  },
  {
    row: "node-metrics",
    check: "node-metrics",
    severity: "error",
    when: "node syncing is on but the control plane's service account may not get and list host nodes",
  },
  {
    row: "autoscaler-unknown",
    check: "pod-requests",
    severity: "warning",
    when: "a synced pod has a container without CPU or memory requests while a metrics source is on",
  },
  {
    row: "autoscaler-unknown",
    check: "pod-metrics",
    severity: "warning",
    when:
      "an autoscaler of the virtual cluster shows `<unknown>` and pods of the workload it scales have no pod " +
      "metrics (asked through the virtual API server), or its pods or metrics cannot be read",
  },
  {
    row: "autoscaler-unknown",
    check: "pod-metrics",
    severity: "note",
    when:
      "an autoscaler shows `<unknown>` while every pod of its workload has pod metrics (they reach it within " +
      "1-2 minutes)",
  },
  {
    row: "metrics-api-service",
    check: "metrics-api-service",
    severity: "error",
    when:
      "the virtual cluster's own APIService list (read through its API server) lacks " +
      "`v1beta1.metrics.orch.io`; or the ConfigMap `vc-init-<name>` the control plane registers the APIService " +
      "from is absent or lacks it, or the control plane is not started with it",
  },
  {
    row: "metrics-api-service",
    check: "metrics-api-service",
    severity: "warning",
    when: "the control plane's pod started with an older configuration than its StatefulSet's",
  },
  {
    row: "metrics-forbidden",
    check: "metrics-forbidden",
    severity: "error",
    when:
      "the service account reading metrics may not get and list pods (host namespace) or nodes of the " +
      "configured `hostApiGroup`",
  },
  {
    row: "mesh-custom-resource",
    check: "mesh-custom-resource",
    severity: "error",
    when:
      "the repository's values of the cluster (reported at their file and line, as vc validate does) or the " +
      "configuration the control plane runs with (its config Secret) have both",
  },
  {
    row: "sidecar-missing",
    check: "sidecar-missing",
    severity: "error",
    when: "a synced pod lacks the `mesh-proxy` container while the mesh integration is on",
  },
  {
    row: "sidecar-missing",
    check: "mesh-injection-label",
    severity: "note",
    when: "the host namespace lacks `mesh-injection=enabled` (optional, recommended)",
  },
  {
    row: "mesh-not-effective",
    check: "mesh-crds",
    severity: "error",
    when: "the host does not serve the mesh kinds (its CRDs are missing)",
  },
  {
    row: "mesh-not-effective",
    check: "mesh-destination",
    severity: "error",
    when:
      "a VirtualService routes to a Service that does not exist on the host (`svc.ns` is a Service only where " +
      "`ns` is a namespace of the cluster's mesh objects: `example.com` is an external host, never reported)",
  },
  {
    row: "mesh-not-effective",
    check: "mesh-not-synced",
    severity: "error",
    when:
      "a mesh object the repository renders for the cluster is not on the host under its translated name, or " +
      "its spec there differs",
  },
  {
    row: "mesh-not-effective",
    check: "mesh-subset",
    severity: "error",
    when: "a route names a subset that no DestinationRule for its host defines on the host",
  },
  {
    row: "mesh-not-effective",
    check: "mesh-host-conflict",
    severity: "warning",
    when: "two DestinationRules, or two VirtualServices on one gateway, claim the same host: only one applies",
  },
  {
    row: "gateway-unreachable",
    check: "gateway-selector",
    severity: "error",
    when: "a Gateway's selector matches no ingress gateway pod",
  },
  {
    row: "gateway-unreachable",
    check: "gateway-pods-ready",
    severity: "error",
    when: "the pods a Gateway's selector matches are none of them Ready",
  },
  {
    row: "gateway-unreachable",
    check: "gateway-service",
    severity: "error",
    when: "no Service selects those pods, or none exposes a port of the Gateway's servers",
  },
  {
    row: "gateway-unreachable",
    check: "gateway-external-address",
    severity: "warning",
    when:
      "the gateway Service has no external address (ClusterIP, or a LoadBalancer without " +
      "status.loadBalancer.ingress)",
  },
  {
    row: "https-certificate",
    check: "tls-secret",
    severity: "error",
    when:
      "the Secret a Gateway names in `tls.credentialName` does not exist where the gateway pods run (their " +
      "namespace for a shared ingress)",
  },
  {
    row: "https-certificate",
    check: "tls-certificate",
    severity: "error",
    when: "the certificate in that Secret is unreadable, expired, not yet valid, or does not name the server's hosts",
  },
  {
    row: "https-certificate",
    check: "tls-certificate",
    severity: "warning",
    when: "the certificate expires within 14 days",
  },
  {
    row: "https-certificate",
    check: "certificate-not-ready",
    severity: "error",
    when:
      "the cert-manager Certificate issuing a Gateway's `tls.credentialName` is not Ready and the Secret does " +
      "not exist yet",
  },
  {
    row: "https-certificate",
    check: "certificate-not-ready",
    severity: "warning",
    when: "the same, while the Secret still holds an earlier certificate",
  },
  {
    row: "connection",
    check: "control-plane-pod",
    severity: "error",
    when: "the StatefulSet wants replicas but pod `<name>-0` does not exist",
  },
  { row: "connection", check: "control-plane-ready", severity: "error", when: "pod `<name>-0` runs but is not Ready" },
  {
    row: "connection",
    check: "control-plane-service-account",
    severity: "error",
    when: "the service account the StatefulSet runs as does not exist",
  },
  {
    row: "connection",
    check: "syncer-rbac",
    severity: "error",
    when: "that service account may not create, delete, get and list pods in the host namespace while pod sync is on",
  },
  {
    row: "connection",
    check: "network-policy",
    severity: "error",
    when:
      "NetworkPolicies of the host namespace select the control plane's pod and admit no connection to its API " +
      "port (8443), or none to the host API server's endpoints (the syncer)",
  },
  {
    row: "connection",
    check: "network-policy",
    severity: "warning",
    when: "they admit connections to the API port only from listed sources",
  },
  {
    row: "api-timeouts",
    check: "api-timeouts",
    severity: "warning",
    when: "the control plane's health probes time out (its API server answers too slowly)",
  },
  {
    row: "api-timeouts",
    check: "host-api-slow",
    severity: "warning",
    when: "a read of the host API took 5 s or more while vc doctor gathered",
  },
  {
    row: "state-loss",
    check: "persistence",
    severity: "note",
    when: "the embedded kvstore has no persistent volume (the default)",
  },
  {
    row: "state-loss",
    check: "persistence",
    severity: "warning",
    when: "the same, and the control plane has restarted: its state was reset",
  },
  {
    row: "state-loss",
    check: "volume-claim",
    severity: "error",
    when: "a volume claim of the control plane is Lost or not bound",
  },
  {
    row: "pending-resources",
    check: "pod-pending",
    severity: "error",
    when: "scheduling reports insufficient CPU, memory or pods",
  },
  {
    row: "pending-volume-claim",
    check: "pod-pending",
    severity: "error",
    when: "a claim of the pod is missing or not Bound",
  },
  {
    row: "pending-image-pull",
    check: "pod-pending",
    severity: "error",
    when: "a container waits in ErrImagePull, ImagePullBackOff and the like",
  },
  {
    row: "pending-node-selector",
    check: "pod-pending",
    severity: "error",
    when: "scheduling reports no node matching the selector or affinity, or untolerated taints",
  },
  {
    row: "pending-unreported",
    check: "pod-pending",
    severity: "warning",
    when: "a pod is Pending and no condition, event or status says why yet",
  },
  {
    row: "crash-memory",
    check: "crash-loop",
    severity: "error",
    when: "the container's last termination was OOMKilled",
  },
  {
    row: "crash-liveness",
    check: "crash-loop",
    severity: "error",
    when: "the container was killed after failing its liveness probe",
  },
  {
    row: "crash-liveness",
    check: "liveness-probe",
    severity: "note",
    when: "the control plane's liveness probe differs from the suggested 60/20/5",
  },
  {
    row: "crash-node-pressure",
    check: "crash-loop",
    severity: "error",
    when: "events report node pressure or an eviction for the pod",
  },
  {
    row: "crash-application",
    check: "crash-loop",
    severity: "error",
    when: "none of the above: the application exits with an error",
  },
  {
    row: "high-restarts",
    check: "high-restarts",
    severity: "warning",
    when: "a container restarted 5 times or more without being in CrashLoopBackOff now",
  },
  {
    row: "oom-killed",
    check: "oom-killed",
    severity: "warning",
    when: "a container's last termination was OOMKilled (not in CrashLoopBackOff now)",
  },
  {
    row: "tenant-writes",
    check: "host-reads-bounded",
    severity: "warning",
    when: "a LIST of the namespace stopped at 500 objects or 32 MiB: the checks saw what was read up to there",
  },
];

/**
 * How each step of a row's resolution is carried out: `by` the checks that perform it (find the fault it fixes and
 * say what to do), and `not` why vc doctor does not perform it (or the part of it it leaves to the user).
 */
export interface ResolutionStep {
  /** The step, as the row's resolution words it. */
  step: string;
  by?: string[];
  not?: string;
}

const NEVER_WRITES = "vc doctor only reads: it never changes the host";

export const RESOLUTIONS: Record<RowKey, ResolutionStep[]> = {
  "metrics-not-available": [
    { step: "verify host metrics server runs", by: ["metrics-host-api", "metrics-api-group"] },
    {
      step: "verify integration is enabled",
      by: ["metrics-proxy", "metrics-proxy-tls", "metrics-virtual-api"],
      not:
        "an integration switched off in the values is a choice, not a fault: the metrics checks run only while " +
        "it is on (vc describe --config-only shows the switch)",
    },
    {
      step: "restart the control plane",
      not: `${NEVER_WRITES}; the metrics-api-service warning says when a restart is due and gives the command`,
    },
  ],
  "node-metrics": [{ step: "enable node syncing", by: ["node-metrics"] }],
  "autoscaler-unknown": [
    { step: "give pods resource requests", by: ["pod-requests"] },
    { step: "allow 1-2 minutes for metrics", by: ["pod-metrics"] },
    { step: "check pod metrics", by: ["pod-metrics"] },
  ],
  "metrics-api-service": [
    { step: "the service is registered at control-plane start", by: ["metrics-api-service"] },
    {
      step: "check start-up logs",
      not:
        "vc doctor reads no logs (they may hold tenant data): the finding gives the kubectl logs command, and " +
        "vc debug collect gathers them",
    },
  ],
  "metrics-forbidden": [
    {
      step: "grant RBAC to the service account",
      by: ["metrics-forbidden"],
      not:
        `the missing grant is found by asking the host's authorizer (SubjectAccessReview) and the kubectl ` +
        `commands are printed; ${NEVER_WRITES}`,
    },
  ],
  "mesh-custom-resource": [
    { step: "remove the manual custom-resource entry and use `integrations.mesh`", by: ["mesh-custom-resource"] },
  ],
  "sidecar-missing": [
    {
      step: "label host namespace `mesh-injection=enabled` and restart the workload",
      by: ["mesh-injection-label", "sidecar-missing"],
    },
    { step: 'or annotate the pod with `sidecar.mesh.io/inject: "true"`', by: ["sidecar-missing"] },
  ],
  "mesh-not-effective": [
    { step: "check the host namespace for the translated name", by: ["mesh-not-synced", "mesh-crds"] },
    {
      step: "run the mesh analysis tool",
      not:
        "the mesh's analyser is the mesh's own tool and needs its control plane; vc doctor checks what the API " +
        "shows: the kinds served, the repository's objects on the host, routes' Services and subsets",
    },
    { step: "check for name conflicts", by: ["mesh-host-conflict"] },
    { step: "check that the target service exists", by: ["mesh-destination", "mesh-subset"] },
  ],
  "gateway-unreachable": [
    {
      step: "make the selector match the ingress gateway pods' labels",
      by: ["gateway-selector", "gateway-pods-ready"],
    },
    { step: "check the gateway service and its external address", by: ["gateway-service", "gateway-external-address"] },
  ],
  "https-certificate": [
    { step: "verify the secret named in `tls.credentialName` exists", by: ["tls-secret", "tls-certificate"] },
    {
      step: "enable `integrations.certManager`",
      by: ["certificate-not-ready"],
      not:
        "a switched-off integration is not reported: a Secret made by hand serves as well, and tls-certificate " +
        "reads the certificate either way",
    },
    {
      step: "recreate the gateway after the certificate is ready",
      by: ["certificate-not-ready"],
      not: `${NEVER_WRITES}; the finding says the certificate is not ready yet`,
    },
  ],
  connection: [
    {
      step: "restart the stateful set",
      by: ["control-plane-pod", "control-plane-ready"],
      not: `${NEVER_WRITES}; the findings say why the control plane does not answer`,
    },
    { step: "check service account", by: ["control-plane-service-account", "syncer-rbac"] },
    { step: "network policies", by: ["network-policy"] },
    { step: "resource constraints", by: ["pod-pending", "crash-loop", "oom-killed"] },
  ],
  "api-timeouts": [
    {
      step: "raise the client `--request-timeout`",
      by: ["host-api-slow"],
      not:
        "a client's timeout is not visible to vc doctor; host-api-slow reports the reads of the host it waited " +
        "long for",
    },
    { step: "raise control-plane resources", by: ["api-timeouts"] },
    { step: "reduce load", not: "the load on the virtual API server (request rates in its /metrics) is not read" },
    {
      step: "tune the kvstore",
      not:
        "the kvstore's own metrics (compaction, database size) are not read; persistence and volume-claim check " +
        "its storage",
    },
  ],
  "state-loss": [
    { step: "check volume claims and storage class", by: ["volume-claim", "pod-pending"] },
    { step: "enable persistence", by: ["persistence"] },
    {
      step: "restore from backup",
      not: `${NEVER_WRITES}; vc restore does; the volume-claim finding of a Lost claim names it`,
    },
  ],
  "pending-resources": [{ step: "lower the pod's resource requests, free capacity or add nodes", by: ["pod-pending"] }],
  "pending-volume-claim": [
    {
      step: "check the volume claims and their storage class (kubectl get pvc), and that the class can provision",
      by: ["pod-pending"],
    },
  ],
  "pending-image-pull": [
    {
      step: "check the image name and tag, the registry's reachability and the image pull secret",
      by: ["pod-pending"],
    },
  ],
  "pending-node-selector": [
    { step: "fix the pod's node selector or affinity, or add tolerations for the nodes' taints", by: ["pod-pending"] },
  ],
  "pending-unreported": [
    {
      step: "wait a moment and run vc doctor again; read the namespace events (vc debug collect)",
      by: ["pod-pending"],
    },
  ],
  "crash-memory": [{ step: ROWS["crash-memory"].resolution, by: ["crash-loop"] }],
  "crash-liveness": [{ step: ROWS["crash-liveness"].resolution, by: ["crash-loop", "liveness-probe"] }],
  "crash-application": [{ step: ROWS["crash-application"].resolution, by: ["crash-loop"] }],
  "crash-node-pressure": [{ step: ROWS["crash-node-pressure"].resolution, by: ["crash-loop"] }],
  "high-restarts": [{ step: ROWS["high-restarts"].resolution, by: ["high-restarts"] }],
  "oom-killed": [{ step: ROWS["oom-killed"].resolution, by: ["oom-killed"] }],
  "tenant-writes": [
    {
      step: "read the namespace with kubectl (vc doctor reads at most 500 objects or 32 MiB of a kind)",
      by: ["host-reads-bounded"],
      not: `${NEVER_WRITES}; the finding names the collection whose read stopped`,
    },
    {
      step: "remove what the tenant's syncer should not have written",
      not: `${NEVER_WRITES}: what a tenant wrote is the tenant's to remove, or the platform's to decide`,
    },
  ],
};

/** Restarts from which a container's restart count is reported as high. */
export const HIGH_RESTARTS = 5;

/** A finding whose resolution is the row's, with what to do in this case after it. */
export function finding(row: RowKey, f: Omit<Finding, "resolution">, how?: string): Finding {
  const resolution: string = ROWS[row].resolution;
  return { ...f, resolution: how ? `${resolution}; ${how}` : resolution };
}

/** The check ids in table order, each once. */
export function checkIds(): string[] {
  return [...new Set(COVERAGE.map((c) => c.check))];
}
