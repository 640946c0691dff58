// Mesh objects of a cluster as host objects: translated name, host namespace, ownership, rewritten references.
import type { KubeObject } from "../../kube/object.js";
import { MESH_API_VERSION } from "../../kube/resources.js";
import type { MeshManifest } from "../../model/cluster.js";
import { meshKindEnabled, type Values } from "../../model/values.js";
import { type RenderContext, manifestMeta } from "../meta.js";
import { meshNamespaces } from "../../translate/index.js";
import type { MeshScope } from "../../translate/mesh/refs.js";
import { isMeshKind, translateMeshSpec, virtualNamespaceOf } from "../../translate/mesh/spec.js";

/** One mesh manifest as its host object, or undefined when its kind is not synced. */
function renderMeshObject(
  manifest: MeshManifest,
  values: Values,
  ctx: RenderContext,
  namespaces?: ReadonlySet<string>,
): KubeObject | undefined {
  const obj = manifest.object;
  if (!isMeshKind(obj.kind) || obj.apiVersion !== MESH_API_VERSION || !meshKindEnabled(values, obj.kind))
    return undefined;
  const scope: MeshScope = {
    cluster: ctx.cluster,
    virtualNamespace: virtualNamespaceOf(obj),
    hostNamespace: ctx.hostNamespace,
    namespaces,
  };
  const out: KubeObject = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: manifestMeta(obj, manifest.file, ctx),
  };
  const spec = translateMeshSpec(obj.kind, obj.spec, scope);
  if (spec) out.spec = spec;
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
