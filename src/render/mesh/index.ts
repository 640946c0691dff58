// Mesh objects of a cluster as host objects: translated name, host namespace, ownership, rewritten references.
import type { KubeObject } from "../../kube/object.js";
import { MESH_API_VERSION } from "../../kube/resources.js";
import type { MeshManifest } from "../../model/cluster.js";
import type { Values } from "../../model/values.js";
import { type RenderContext, manifestMeta, virtualNamespaceOf } from "../meta.js";
import { translateDestinationRuleSpec } from "./destinationRule.js";
import { translateGatewaySpec } from "./gateway.js";
import { meshNamespaces } from "../../translate/index.js";
import { type Json, type MeshScope, isObject } from "./refs.js";
import { translateVirtualServiceSpec } from "./virtualService.js";

type MeshSwitch = keyof Values["integrations"]["mesh"]["sync"]["toHost"];

const KINDS: Record<string, { switch: MeshSwitch; spec: (spec: Json, scope: MeshScope) => Json }> = {
  VirtualService: { switch: "virtualServices", spec: translateVirtualServiceSpec },
  DestinationRule: { switch: "destinationRules", spec: translateDestinationRuleSpec },
  Gateway: { switch: "gateways", spec: translateGatewaySpec },
};

/** True when the cluster's values sync this mesh kind to the host. */
export function meshKindEnabled(values: Values, kind: string): boolean {
  const k = KINDS[kind];
  return values.integrations.mesh.enabled && k !== undefined && values.integrations.mesh.sync.toHost[k.switch].enabled;
}

/** One mesh manifest as its host object, or undefined when its kind is not synced. */
export function renderMeshObject(manifest: MeshManifest, values: Values, ctx: RenderContext, namespaces?: ReadonlySet<string>): KubeObject | undefined {
  const obj = manifest.object;
  const kind = KINDS[obj.kind];
  if (!kind || obj.apiVersion !== MESH_API_VERSION || !meshKindEnabled(values, obj.kind)) return undefined;
  const virtualNamespace = virtualNamespaceOf(obj);
  const scope: MeshScope = { cluster: ctx.cluster, virtualNamespace, hostNamespace: ctx.hostNamespace, namespaces };
  const out: KubeObject = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: manifestMeta(obj, manifest.file, ctx) };
  if (isObject(obj.spec)) out.spec = kind.spec(obj.spec, scope);
  return out;
}

/** Every synced mesh manifest of a cluster as host objects (unsorted). */
export function renderMesh(mesh: readonly MeshManifest[], values: Values, ctx: RenderContext): KubeObject[] {
  if (!values.integrations.mesh.enabled) return [];
  const out: KubeObject[] = [];
  const namespaces = meshNamespaces(mesh.map((m) => m.object));
  for (const m of mesh) {
    const obj = renderMeshObject(m, values, ctx, namespaces);
    if (obj) out.push(obj);
  }
  return out;
}
