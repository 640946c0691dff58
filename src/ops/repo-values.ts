// A cluster's effective values read from the repository (values files layered, defaults filled).
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Values } from "../model/values.js";
import { CLUSTERS_DIR, listClusterFiles } from "../repo/layout.js";
import { deepMerge, isMapping, type Mapping } from "../repo/merge.js";
import { readRepoFile, safeRealpath } from "../repo/read.js";
import { parseYaml } from "../repo/yaml.js";
import { effectiveValues } from "../validate/values.js";


export type RepoValues = { found: false } | { found: true; values?: Values; error?: string; files: string[] };

/** The effective values of `clusters/<name>` under `repo`; `found: false` when there is no such folder. */
export function clusterValues(repo: string, name: string): RepoValues {
  const root = safeRealpath(repo);
  if (!root || !existsSync(join(root, CLUSTERS_DIR, name))) return { found: false };
  const files = listClusterFiles(root, name).values;
  let merged: Mapping = {};
  for (const file of files) {
    const read = readRepoFile(root, file);
    if (!read.ok) return { found: true, files, error: `${file}: ${read.message}` };
    const parsed = parseYaml(read.text);
    if (!parsed.ok) return { found: true, files, error: `${file}:${parsed.error.line}:${parsed.error.col}: ${parsed.error.message}` };
    const doc = parsed.docs[0];
    if (doc === null || doc === undefined) continue;
    if (!isMapping(doc)) return { found: true, files, error: `${file}: a values file must be a mapping` };
    merged = deepMerge(merged, doc);
  }
  try {
    return { found: true, files, values: effectiveValues(merged) };
  } catch (err) {
    return { found: true, files, error: `${(err as Error).message} (run vc validate)` };
  }
}

