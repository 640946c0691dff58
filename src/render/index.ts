// Rendering: a validated cluster folder as the host objects that must exist for it (pure, deterministic).
import type { KubeObject } from "../kube/object.js";
import type { ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { renderCertificates } from "./certificates.js";
import { findCollisions } from "./collisions.js";
import { renderLimitRange, renderNamespace, renderQuota, renderServices } from "./controlPlane.js";
import { initManifestsText, renderInitManifests } from "./initManifests.js";
import { type RenderContext, names, valuesSource } from "./meta.js";
import { renderMesh } from "./mesh/index.js";
import { metricsVirtualObjects, renderMetricsProxy } from "./metricsProxy.js";
import { READ_VERBS, RuleSet, renderRoleAndBinding, renderServiceAccount, syncerRules } from "./rbac.js";
import { configText, renderConfigSecret, renderDatabaseSecret, sha256 } from "./secrets.js";
import { sortObjects } from "./sort.js";
import { renderStatefulSet } from "./statefulSet.js";

/** The control-plane objects of a cluster (unsorted). */
function renderControlPlane(spec: ClusterSpec, ctx: RenderContext): KubeObject[] {
  const { values } = spec;
  const source = valuesSource(spec.valuesFiles, spec.dir);
  const metricsOn = values.integrations.metricsServer.enabled;
  const config = configText(values, ctx.cluster);
  const init = metricsOn ? initManifestsText(metricsVirtualObjects(ctx.cluster, ctx.hostNamespace)) : "";
  const sa = names.serviceAccount(ctx.cluster);
  const objects: KubeObject[] = [
    renderNamespace(values, ctx, source),
    renderServiceAccount(ctx, source, sa),
    renderConfigSecret(config, ctx, source),
    ...renderRoleAndBinding({
      ctx,
      source,
      name: names.role(ctx.cluster),
      serviceAccount: sa,
      rules: syncerRules(values),
    }),
    ...renderServices(ctx, source),
    renderStatefulSet({
      values,
      ctx,
      source,
      configHash: sha256(`${config}\u0000${init}`),
      hasInitManifests: init !== "",
    }),
  ];
  const db = renderDatabaseSecret(values, ctx, source);
  if (db) objects.push(db);
  const quota = renderQuota(values, ctx, source);
  if (quota) objects.push(quota);
  const limits = renderLimitRange(values, ctx, source);
  if (limits) objects.push(limits);
  if (values.sync.fromHost.nodes.enabled) {
    objects.push(
      ...renderRoleAndBinding({
        ctx,
        source,
        serviceAccount: sa,
        clusterScoped: true,
        name: names.nodesClusterRole(ctx.cluster, ctx.hostNamespace),
        rules: new RuleSet().add("", ["nodes"], READ_VERBS).rules(),
      }),
    );
  }
  if (metricsOn) {
    objects.push(renderInitManifests(init, ctx, source));
    objects.push(...renderMetricsProxy(ctx.cluster, ctx.hostNamespace, { sourceFile: source, revision: ctx.revision }));
  }
  return objects;
}

/**
 * Every host object of a validated cluster, sorted, without the collision check (see `renderSpecs` for diagnostics).
 */
export function renderObjects(spec: ClusterSpec, revision: string): KubeObject[] {
  const ctx: RenderContext = { cluster: spec.name, hostNamespace: spec.settings.namespace, revision };
  return sortObjects([
    ...renderControlPlane(spec, ctx),
    ...renderMesh(spec.mesh, spec.values, ctx),
    ...renderCertificates(spec.certificates, spec.values, ctx),
  ]);
}

/** Two objects of a cluster would land under one host identity: the cluster must not be applied. */
export class RenderCollisionError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map((d) => `${d.file}: ${d.message}`).join("; "));
  }
}

/**
 * Every host object of a validated cluster, sorted by kind order then namespace and name, keys sorted.
 * Throws RenderCollisionError when two objects translate to one host identity (never apply such a cluster).
 */
export function renderCluster(spec: ClusterSpec, revision: string): KubeObject[] {
  const objects = renderObjects(spec, revision);
  const collisions = findCollisions(objects);
  if (collisions.length > 0) throw new RenderCollisionError(collisions);
  return objects;
}
