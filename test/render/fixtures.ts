// Test helpers: complete default Values and ClusterSpecs built by hand, and small object lookups.
import type { KubeObject } from "../../src/kube/object.js";
import type { CertificateManifest, ClusterSpec, MeshManifest } from "../../src/model/cluster.js";
import type { Values } from "../../src/model/values.js";

export function defaultValues(): Values {
  return {
    controlPlane: {
      statefulSet: {
        image: { repository: "ghcr.io/vc-project/control-plane", tag: "0.1.0", pullPolicy: "IfNotPresent" },
        replicas: 1,
        resources: { requests: { cpu: "200m", memory: "512Mi" }, limits: { cpu: "1000m", memory: "2Gi" } },
        env: [],
        probes: { livenessProbe: { initialDelaySeconds: 60, periodSeconds: 20, failureThreshold: 5 } },
        enableServiceLinks: true,
      },
      backingStore: {
        kvstore: {
          embedded: { enabled: true, migrateFromDeployedKvstore: false },
          persistence: { enabled: false, size: "10Gi", storageClass: "" },
        },
        database: { external: { enabled: false, endpoint: "" } },
      },
    },
    policies: { resourceQuota: { enabled: false, quota: {} } },
    sync: {
      toHost: {
        pods: { enabled: true },
        services: { enabled: true },
        persistentVolumeClaims: { enabled: true },
        customResources: {},
      },
      fromHost: { nodes: { enabled: false, all: false } },
    },
    integrations: {
      certManager: { enabled: false },
      mesh: {
        enabled: false,
        sync: {
          toHost: {
            destinationRules: { enabled: true },
            gateways: { enabled: true },
            virtualServices: { enabled: true },
          },
        },
      },
      metricsServer: {
        enabled: false,
        pods: true,
        nodes: true,
        proxy: {
          image: { repository: "ghcr.io/vc-project/metrics-proxy", tag: "0.1.0", pullPolicy: "IfNotPresent" },
          replicas: 1,
          cacheTTL: "15s",
          hostApiGroup: "metrics.orch.io",
        },
      },
    },
    deploy: { metricsServer: { enabled: false } },
    privateNodes: { enabled: false },
  };
}

/** A mesh manifest document at `clusters/<cluster>/mesh/<file>`. */
export function meshDoc(cluster: string, file: string, object: KubeObject, index = 0): MeshManifest {
  return { file: `clusters/${cluster}/mesh/${file}`, index, object };
}

/** A Certificate document at `clusters/<cluster>/certificates/<file>`. */
export function certificateDoc(cluster: string, file: string, object: KubeObject, index = 0): CertificateManifest {
  return { file: `clusters/${cluster}/certificates/${file}`, index, object };
}

export function makeSpec(
  name: string,
  edit: (v: Values) => void = () => {},
  mesh: MeshManifest[] = [],
  certificates: CertificateManifest[] = [],
): ClusterSpec {
  const values = defaultValues();
  edit(values);
  return {
    name,
    dir: `clusters/${name}`,
    settings: { namespace: `vc-${name}`, suspend: false, prune: true },
    values,
    valuesFiles: [`clusters/${name}/values.yaml`],
    mesh,
    certificates,
  };
}

export function withMesh(v: Values): void {
  v.integrations.mesh.enabled = true;
}

export function find(objects: readonly KubeObject[], kind: string, name?: string): KubeObject | undefined {
  return objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}

export function must(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const o = find(objects, kind, name);
  if (!o)
    throw new Error(`no ${kind} ${name ?? ""} among ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return o;
}

/** Reads a nested value by path (`spec.template.spec.containers.0.args`). */
export function at(obj: unknown, path: string): any {
  let cur: any = obj;
  for (const p of path.split(".")) cur = cur == null ? undefined : cur[p];
  return cur;
}
