// The scale subresource of deployments and stateful sets: autoscaling/v1 Scale read and written through spec.replicas.
import type { KubeObject } from "../../../src/kube/object.js";
import { formatMatchLabels } from "../../../src/kube/selector.js";
import type { Served } from "./catalog.js";
import { isMap, type Json } from "./fieldpath.js";
import { parseBody } from "./http.js";
import type { Objects, WriteOptions } from "./objects.js";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js";
import { badRequest, conflict, invalid } from "./status.js";

type Any = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function scaleOf(obj: KubeObject): KubeObject {
  const spec = (obj.spec ?? {}) as Any;
  const status = (obj.status ?? {}) as Any;
  const matchLabels = spec.selector?.matchLabels;
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 1 },
    status: { replicas: status.replicas ?? 0, ...(matchLabels ? { selector: formatMatchLabels(matchLabels) } : {}) },
  };
}

/** Writes a Scale (from PUT, or a patch of the current Scale) back to the object's spec.replicas. */
export function writeScale(
  objects: Objects,
  served: Served,
  ns: string | undefined,
  name: string,
  method: "PUT" | "PATCH",
  contentType: string,
  text: string,
  opts: WriteOptions,
): KubeObject {
  const live = objects.get(served, ns, name).obj;
  const current = scaleOf(live);
  let next: Json;
  if (method === "PUT") next = parseBody(text) as Json;
  else {
    const type = contentType.split(";")[0]!.trim();
    const body = parseBody(text) as Json;
    if (type === "application/json-patch+json") next = jsonPatch(current as unknown as Json, body);
    else if (type === "application/merge-patch+json")
      next = mergePatch(structuredClone(current) as unknown as Json, body);
    else if (type === "application/strategic-merge-patch+json")
      next = strategicMergePatch(structuredClone(current) as unknown as Json, body);
    else throw badRequest(`unsupported patch type for scale: ${type}`);
  }
  if (!isMap(next) || !isMap(next.spec)) throw badRequest("a Scale needs spec.replicas");
  const meta = isMap(next.metadata) ? next.metadata : {};
  if (
    typeof meta.resourceVersion === "string" &&
    meta.resourceVersion !== "" &&
    meta.resourceVersion !== live.metadata.resourceVersion
  ) {
    throw conflict(
      served.plural,
      served.group,
      name,
      "the object has been modified; please apply your changes to the latest version and try again",
    );
  }
  const replicas = next.spec.replicas;
  if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid("Scale", "autoscaling", name, [
      {
        reason: "FieldValueInvalid",
        field: "spec.replicas",
        message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
      },
    ]);
  }
  const updated = structuredClone(live);
  updated.spec = { ...((updated.spec ?? {}) as Any), replicas };
  const written = objects.update(served, ns, name, updated, { ...opts, subresource: "scale" });
  return scaleOf(written);
}
