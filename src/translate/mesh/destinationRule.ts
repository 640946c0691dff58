// DestinationRule spec translation: the host, and subsets scoped to this virtual cluster's pods.
import {
  type Json,
  type MeshScope,
  OWN_NAMESPACE_ONLY,
  isObject,
  mapArray,
  scopedLabels,
  serviceHost,
} from "./refs.js";

export function translateDestinationRuleSpec(spec: Json, scope: MeshScope): Json {
  const out: Json = { ...spec };
  if ("host" in spec) out.host = serviceHost(spec.host, scope);
  if ("subsets" in spec) {
    out.subsets = mapArray(spec.subsets, (s) =>
      isObject(s) ? { ...s, labels: scopedLabels(s.labels, scope.cluster) } : s,
    );
  }
  out.exportTo = [...OWN_NAMESPACE_ONLY];
  return out;
}
