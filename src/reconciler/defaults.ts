// The real pipeline the reconciler runs: loadAndValidate (optionally through the validation cache), renderCluster and syncCluster.
import { renderCluster } from "../render/index.js";
import { syncCluster } from "../pipeline/sync.js";
import { loadAndValidate } from "../validate/index.js";
import type { Engine } from "../pipeline/engine.js";

export const defaultEngine: Engine = {
  load: (root, opts) => loadAndValidate(root, opts),
  render: renderCluster,
  sync: syncCluster,
};

/** The real pipeline with the validation cache in `cacheDir`: between passes, only changed cluster folders are parsed again. */
export function cachingEngine(cacheDir: string): Engine {
  return { ...defaultEngine, load: (root, opts) => loadAndValidate(root, { ...opts, cacheDir }) };
}
