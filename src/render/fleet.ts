// Rendering many validated clusters at once: each cluster's objects, with host-name collisions as diagnostics.
import type { KubeObject } from "../kube/object.js";
import type { ClusterSpec } from "../model/cluster.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { findCollisions } from "./collisions.js";
import { renderObjects } from "./index.js";

interface RenderedCluster {
  spec: ClusterSpec;
  objects: KubeObject[];
}

export interface FleetRender {
  /** Clusters that rendered cleanly, in the order given. */
  clusters: RenderedCluster[];
  /** Errors of clusters left out (two objects rendered under one host identity). */
  diagnostics: Diagnostic[];
}

/** Renders every spec; a cluster whose objects collide is left out and reported. Pure. */
export function renderSpecs(specs: readonly ClusterSpec[], revision: string): FleetRender {
  const out: FleetRender = { clusters: [], diagnostics: [] };
  for (const spec of specs) {
    const objects = renderObjects(spec, revision);
    const collisions = findCollisions(objects);
    if (collisions.length > 0) out.diagnostics.push(...collisions);
    else out.clusters.push({ spec, objects });
  }
  return out;
}
