// Hand-built host objects for plan tests: what render produces for a small cluster.
import type { KubeObject } from "../../src/kube/object.js";
import { ANNOTATIONS, LABELS } from "../../src/translate/keys.js";

export function labelled(cluster: string, extra: Record<string, string> = {}): Record<string, string> {
  return { [LABELS.inventory]: cluster, [LABELS.managedBy]: cluster, ...extra };
}

export function clusterObjects(cluster: string, revision = "rev1"): KubeObject[] {
  const ns = `vc-${cluster}`;
  const ann = { [ANNOTATIONS.revision]: revision, [ANNOTATIONS.sourceFile]: `clusters/${cluster}/values.yaml` };
  return [
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: cluster, namespace: ns, labels: labelled(cluster), annotations: ann },
      spec: {
        replicas: 1,
        template: { spec: { containers: [{ name: "syncer", image: "vc:1", env: [{ name: "A", value: "1" }] }] } },
      },
    },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: `vc-${cluster}`, namespace: ns, labels: labelled(cluster), annotations: ann },
    },
    {
      apiVersion: "networking.mesh.io/v1beta1",
      kind: "VirtualService",
      metadata: { name: `r-x-default-x-${cluster}`, namespace: ns, labels: labelled(cluster), annotations: ann },
      spec: { hosts: ["a"] },
    },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: labelled(cluster), annotations: ann } },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `${cluster}-config`, namespace: ns, labels: labelled(cluster), annotations: ann },
      data: { a: "1" },
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${cluster}-db`, namespace: ns, labels: labelled(cluster), annotations: ann },
      stringData: { url: "postgres://u:hunter2@db/x" },
    },
  ];
}

/** What a server returns for an applied object: server fields, defaults, status. */
export function asLive(obj: KubeObject, uid = "u-1"): KubeObject {
  const live = structuredClone(obj) as KubeObject;
  live.metadata = {
    ...live.metadata,
    uid,
    resourceVersion: "42",
    generation: 3,
    creationTimestamp: "2026-01-01T00:00:00Z",
    managedFields: [{ manager: "vc", operation: "Apply", fieldsType: "FieldsV1", fieldsV1: fieldsOf(obj) }],
  };
  if (live.kind === "Secret" && live.stringData) {
    live.data = Object.fromEntries(
      Object.entries(live.stringData as Record<string, string>).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    );
    delete live.stringData;
    live.type = "Opaque";
  }
  if (live.kind === "StatefulSet") {
    (live.spec as Record<string, unknown>).revisionHistoryLimit = 10; // a server default
    const c = ((live.spec as any).template.spec.containers as any[])[0];
    c.terminationMessagePath = "/dev/termination-log"; // a default inside a list item
    live.status = { replicas: 1 };
  }
  return live;
}

/** A fieldsV1 tree of every map field of an object (list items summarised as owned leaves). */
function fieldsOf(v: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (k === "stringData") continue;
    out[`f:${k}`] = val && typeof val === "object" && !Array.isArray(val) ? fieldsOf(val) : {};
  }
  return out;
}
