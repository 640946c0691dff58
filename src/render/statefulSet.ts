// The control plane's StatefulSet: the syncer container, its backing store, config and persistence.
import type { KubeObject } from "../kube/object.js";
import type { Values } from "../model/values.js";
import { ANNOTATIONS, CHART_APP_LABEL } from "../translate/index.js";
import { type RenderContext, controlPlaneMeta, names } from "./meta.js";
import { CONFIG_KEY, databaseSecretRef } from "./secrets.js";
import { INIT_MANIFESTS_KEY } from "./initManifests.js";

/** Port the virtual API server listens on inside the pod. */
export const API_SERVER_PORT = 8443;
const CONFIG_DIR = "/etc/vc/config";
const INIT_DIR = "/etc/vc/init";
const DATA_DIR = "/data";
const DATABASE_ENDPOINT_ENV = "VC_DATABASE_ENDPOINT";

/** Labels of control-plane pods (spec 1.2); also the StatefulSet's and the Services' selector. */
export function controlPlanePodLabels(cluster: string): Record<string, string> {
  return { release: cluster, app: CHART_APP_LABEL };
}

type BackingStore = "external-database" | "embedded-kvstore" | "deployed-kvstore";

function backingStoreOf(values: Values): BackingStore {
  const bs = values.controlPlane.backingStore;
  if (bs.database.external.enabled) return "external-database";
  return bs.kvstore.embedded.enabled ? "embedded-kvstore" : "deployed-kvstore";
}

function quantities(q: { cpu?: string; memory?: string }): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  if (q.cpu) out.cpu = q.cpu;
  if (q.memory) out.memory = q.memory;
  return Object.keys(out).length > 0 ? out : undefined;
}

function resources(values: Values): Record<string, unknown> {
  const r = values.controlPlane.statefulSet.resources;
  const out: Record<string, unknown> = {};
  const requests = quantities(r.requests);
  const limits = quantities(r.limits);
  if (requests) out.requests = requests;
  if (limits) out.limits = limits;
  return out;
}

function syncerArgs(values: Values, ctx: RenderContext, hasInitManifests: boolean): string[] {
  const store = backingStoreOf(values);
  const args = [
    `--name=${ctx.cluster}`,
    `--host-namespace=${ctx.hostNamespace}`,
    `--service-name=${names.service(ctx.cluster)}`,
    `--config=${CONFIG_DIR}/${CONFIG_KEY}`,
    `--backing-store=${store}`,
  ];
  if (store === "embedded-kvstore") {
    args.push(`--kvstore-data-dir=${DATA_DIR}`);
    if (values.controlPlane.backingStore.kvstore.embedded.migrateFromDeployedKvstore)
      args.push("--migrate-from-deployed-kvstore");
  }
  if (hasInitManifests) args.push(`--init-manifests=${INIT_DIR}/${INIT_MANIFESTS_KEY}`);
  return args;
}

function env(values: Values, cluster: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = values.controlPlane.statefulSet.env.map((e) => ({
    name: e.name,
    value: e.value,
  }));
  const ref = databaseSecretRef(values, cluster);
  if (ref) out.push({ name: DATABASE_ENDPOINT_ENV, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } });
  return out;
}

function probe(path: string, extra: Record<string, number>): Record<string, unknown> {
  return { httpGet: { path, port: API_SERVER_PORT, scheme: "HTTPS" }, ...extra };
}

export interface StatefulSetInputs {
  values: Values;
  ctx: RenderContext;
  source: string;
  /** SHA-256 of the mounted configuration (values text and init manifests). */
  configHash: string;
  hasInitManifests: boolean;
}

export function renderStatefulSet({
  values,
  ctx,
  source,
  configHash,
  hasInitManifests,
}: StatefulSetInputs): KubeObject {
  const sts = values.controlPlane.statefulSet;
  const persistence = values.controlPlane.backingStore.kvstore.persistence;
  const podLabels = controlPlanePodLabels(ctx.cluster);
  const mounts: Array<Record<string, unknown>> = [
    { name: "config", mountPath: CONFIG_DIR, readOnly: true },
    { name: "data", mountPath: DATA_DIR },
  ];
  const volumes: Array<Record<string, unknown>> = [
    { name: "config", secret: { secretName: names.configSecret(ctx.cluster) } },
  ];
  if (hasInitManifests) {
    mounts.push({ name: "init-manifests", mountPath: INIT_DIR, readOnly: true });
    volumes.push({ name: "init-manifests", configMap: { name: names.initManifests(ctx.cluster) } });
  }
  if (!persistence.enabled) volumes.push({ name: "data", emptyDir: {} });
  const container: Record<string, unknown> = {
    name: "syncer",
    image: `${sts.image.repository}:${sts.image.tag}`,
    imagePullPolicy: sts.image.pullPolicy,
    args: syncerArgs(values, ctx, hasInitManifests),
    ports: [{ name: "https", containerPort: API_SERVER_PORT, protocol: "TCP" }],
    resources: resources(values),
    livenessProbe: probe("/healthz", { ...sts.probes.livenessProbe }),
    readinessProbe: probe("/readyz", { periodSeconds: 10 }),
    volumeMounts: mounts,
  };
  const envList = env(values, ctx.cluster);
  if (envList.length > 0) container.env = envList;
  const spec: Record<string, unknown> = {
    replicas: sts.replicas,
    serviceName: names.headlessService(ctx.cluster),
    selector: { matchLabels: podLabels },
    template: {
      metadata: { labels: podLabels, annotations: { [ANNOTATIONS.configHash]: configHash } },
      spec: {
        serviceAccountName: names.serviceAccount(ctx.cluster),
        enableServiceLinks: sts.enableServiceLinks,
        containers: [container],
        volumes,
      },
    },
  };
  if (persistence.enabled) {
    const claim: Record<string, unknown> = {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: persistence.size } },
    };
    if (persistence.storageClass !== "") claim.storageClassName = persistence.storageClass;
    spec.volumeClaimTemplates = [{ metadata: { name: "data" }, spec: claim }];
  }
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: controlPlaneMeta(ctx, source, names.statefulSet(ctx.cluster), { labels: podLabels }),
    spec,
  };
}
