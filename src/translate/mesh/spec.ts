// A mesh manifest's spec as it lands on the host (pure): each synced kind's references rewritten into its host scope.
import { translateDestinationRuleSpec } from "./destinationRule.js";
import { translateGatewaySpec } from "./gateway.js";
import { type Json, type MeshScope, isObject } from "./refs.js";
import { translateVirtualServiceSpec } from "./virtualService.js";

const TRANSLATORS: Record<string, (spec: Json, scope: MeshScope) => Json> = {
  VirtualService: translateVirtualServiceSpec,
  DestinationRule: translateDestinationRuleSpec,
  Gateway: translateGatewaySpec,
};

/** Whether `kind` is a mesh kind vc syncs to the host. */
export function isMeshKind(kind: string): boolean {
  return Object.hasOwn(TRANSLATORS, kind);
}

/** The host form of a mesh kind's spec; undefined for a kind that is not synced or a spec that is not a mapping. */
export function translateMeshSpec(kind: string, spec: unknown, scope: MeshScope): Json | undefined {
  return isMeshKind(kind) && isObject(spec) ? TRANSLATORS[kind]!(spec, scope) : undefined;
}

/** The namespace a manifest lives in inside the virtual cluster: its own, else `default`. */
export function virtualNamespaceOf(obj: { metadata?: { namespace?: unknown } }): string {
  const ns = obj.metadata?.namespace;
  return typeof ns === "string" && ns !== "" ? ns : "default";
}
