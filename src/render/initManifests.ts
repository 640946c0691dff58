// Objects for the virtual side, carried in a host ConfigMap that the control plane applies into the virtual cluster at
// start.
import { dump } from "js-yaml";
import type { KubeObject } from "../kube/object.js";
import { type RenderContext, controlPlaneMeta, names } from "./meta.js";

export const INIT_MANIFESTS_KEY = "manifests.yaml";

/** The virtual objects as one multi-document YAML text, keys sorted, in the order given. */
export function initManifestsText(objects: readonly KubeObject[]): string {
  return objects.map((o) => dump(o, { sortKeys: true, noRefs: true, lineWidth: -1 })).join("---\n");
}

/** The ConfigMap `vc-init-<cluster>` (key `manifests.yaml`); never applied to the host as the objects themselves. */
export function renderInitManifests(text: string, ctx: RenderContext, source: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: controlPlaneMeta(ctx, source, names.initManifests(ctx.cluster)),
    data: { [INIT_MANIFESTS_KEY]: text },
  };
}
