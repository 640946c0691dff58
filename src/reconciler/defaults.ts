// The real pipeline the reconciler runs: loadAndValidate, renderCluster and syncCluster.
import { renderCluster } from "../render/index.js";
import { syncCluster } from "../target/sync.js";
import { loadAndValidate } from "../validate/index.js";
import type { Engine } from "./engine.js";

export const defaultEngine: Engine = {
  load: (root, opts) => loadAndValidate(root, opts),
  render: renderCluster,
  sync: syncCluster,
};
