// A host for the doctor tests of both tiers (in-memory and real API server): two clusters applied by vc, then broken
// by hand the way operators meet them. Only the Host interface is used, so the same steps run against either server.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openHost } from "../../src/ops/host.js";
import { P, pathOf } from "../../src/ops/paths.js";
import { effectiveValues } from "../../src/validate/values.js";
import { runVc } from "../support/vc.js";

/** `shop`: metrics (host group metrics.k8s.io) and mesh on. `calm`: the defaults. */
const SHOP_VALUES = {
  integrations: {
    mesh: { enabled: true },
    metricsServer: { enabled: true, proxy: { hostApiGroup: "metrics.k8s.io" } },
  },
};

const REVIEWS_ROUTE = `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: reviews
  namespace: default
spec:
  hosts: [reviews]
  http:
    - route:
        - destination: {host: reviews, subset: v1}
`;

export function writeDoctorRepo(): string {
  const repo = mkdtempSync(join(tmpdir(), "vc-doctor-"));
  mkdirSync(join(repo, "clusters/shop/mesh"), { recursive: true });
  mkdirSync(join(repo, "clusters/calm"), { recursive: true });
  writeFileSync(join(repo, "clusters/shop/values.yaml"), JSON.stringify(SHOP_VALUES, null, 2));
  writeFileSync(join(repo, "clusters/shop/mesh/reviews.yaml"), REVIEWS_ROUTE);
  writeFileSync(join(repo, "clusters/calm/values.yaml"), "sync:\n  toHost:\n    pods:\n      enabled: true\n");
  return repo;
}

/** The controller reference of a StatefulSet, as its controller puts it on the pods it creates. */
async function statefulSetRef(kubeconfig: string, namespace: string, name: string): Promise<Record<string, unknown>> {
  const host = openHost({ kubeconfig });
  try {
    const sts = await host.get(P.statefulSets(namespace, name));
    return { apiVersion: "apps/v1", kind: "StatefulSet", name, uid: sts?.metadata.uid, controller: true };
  } finally {
    host.close();
  }
}

async function podWithPhase(
  kubeconfig: string,
  namespace: string,
  pod: Record<string, unknown>,
  phase: string,
): Promise<void> {
  const host = openHost({ kubeconfig });
  try {
    const name = (pod.metadata as { name: string }).name;
    await host.create(P.pods(namespace), { apiVersion: "v1", kind: "Pod", ...pod });
    await host.mergePatch(`${P.pods(namespace, name)}/status`, { status: { phase } });
  } finally {
    host.close();
  }
}

/**
 * Applies the repository, then: the shared metrics proxy's ClusterRole (made by hand, its Deployment never deployed)
 * lets it read pod metrics of `metrics.orch.io` instead of the `metrics.k8s.io` the host serves; a synced pod without
 * requests; the control plane's config Secret syncs VirtualServices as a custom resource besides the mesh integration.
 * Nothing creates `shop-0`, the Service `reviews` or the shared proxy's TLS Secret. `calm` gets a hand-made `calm-0`
 * pod that stays Pending.
 */
export async function breakDoctorHost(kubeconfig: string, repo: string): Promise<void> {
  const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kubeconfig]);
  expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
  const host = openHost({ kubeconfig });
  try {
    const rbac = "rbac.authorization.k8s.io/v1";
    await host.create(pathOf(rbac, "ClusterRole"), {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: "vc-metrics-proxy" },
      rules: [
        { apiGroups: ["metrics.orch.io"], resources: ["pods"], verbs: ["get", "list"] },
        { apiGroups: ["metrics.k8s.io"], resources: ["nodes"], verbs: ["get", "list"] },
      ],
    });
    await host.create(pathOf(rbac, "ClusterRoleBinding"), {
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name: "vc-metrics-proxy" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "vc-metrics-proxy" },
      subjects: [{ kind: "ServiceAccount", name: "vc-metrics-proxy", namespace: "vc-system" }],
    });
    const live = effectiveValues({
      ...SHOP_VALUES,
      sync: { toHost: { customResources: { "virtualservices.networking.mesh.io": { enabled: true } } } },
    });
    await host.mergePatch(P.secrets("vc-shop", "vc-config-shop"), {
      data: { "values.yaml": Buffer.from(JSON.stringify(live)).toString("base64") },
    });
  } finally {
    host.close();
  }
  const managed = { "vc.orch.io/managed-by": "shop" };
  const containers = [
    { name: "app", image: "nginx:1.27" },
    { name: "mesh-proxy", image: "mesh/proxy:1", resources: { requests: { cpu: "10m", memory: "32Mi" } } },
  ];
  await podWithPhase(
    kubeconfig,
    "vc-shop",
    { metadata: { name: "web-x-default-x-shop", labels: managed }, spec: { containers } },
    "Running",
  );
  await podWithPhase(
    kubeconfig,
    "vc-calm",
    {
      metadata: {
        name: "calm-0",
        labels: { release: "calm", app: "vc" },
        ownerReferences: [await statefulSetRef(kubeconfig, "vc-calm", "calm")],
      },
      spec: { serviceAccountName: "vc-calm", containers: [{ name: "syncer", image: "vc/syncer:1" }] },
    },
    "Pending",
  );
}

/** What `vc doctor shop` reports on that host, as `check severity object`, whatever the server. */
export const SHOP_FINDINGS = [
  "control-plane-pod error StatefulSet vc-shop/shop",
  "mesh-custom-resource error Secret vc-shop/vc-config-shop",
  "metrics-forbidden error ServiceAccount vc-system/vc-metrics-proxy",
  "metrics-host-api error APIService v1beta1.metrics.k8s.io",
  "metrics-proxy error Deployment vc-system/vc-metrics-proxy",
  "metrics-proxy-tls error Secret vc-system/vc-metrics-proxy-tls",
  "mesh-destination error VirtualService vc-shop/reviews-x-default-x-shop",
  "mesh-subset error VirtualService vc-shop/reviews-x-default-x-shop",
  "pod-requests warning Pod vc-shop/web-x-default-x-shop",
  "node-metrics note StatefulSet vc-shop/shop",
  "persistence note StatefulSet vc-shop/shop",
];
