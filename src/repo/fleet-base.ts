// The fleet's shared bases: fleet/values.yaml for every cluster, fleet/values.<group>.yaml for the groups
// (fleet/groups.yaml) a cluster's labels select.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Diagnostic } from "../model/diagnostic.js";
import { loadYamlFile } from "./load.js";
import { isMapping } from "./merge.js";

export const FLEET_DIR = "fleet";
const FLEET_VALUES = `${FLEET_DIR}/values.yaml`;
export const GROUPS_FILE = `${FLEET_DIR}/groups.yaml`;
const GROUP_VALUES = /^values\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.yaml$/;

interface FleetGroup {
  name: string;
  matchLabels: Record<string, string>;
}

export interface FleetBase {
  /** Groups of fleet/groups.yaml, by name. */
  groups: FleetGroup[];
  /** Whether fleet/values.yaml exists. */
  hasValues: boolean;
  /** Groups that have a fleet/values.<group>.yaml. */
  groupValues: Set<string>;
  /**
   * The raw groups document when it parsed as a mapping (validated by the caller against schemas/groups.schema.json).
   */
  groupsDoc?: unknown;
}

const isFile = (path: string): boolean => {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * What fleet/ holds (pure of validation: the caller checks the groups document against its schema). A repository
 * without fleet/ has no base: every cluster reads only its own folder.
 */
export function readFleetBase(realRoot: string): { base: FleetBase; diagnostics: Diagnostic[] } {
  const base: FleetBase = { groups: [], hasValues: false, groupValues: new Set() };
  const diagnostics: Diagnostic[] = [];
  const dir = join(realRoot, FLEET_DIR);
  if (!existsSync(dir) || !lstatSync(dir).isDirectory()) return { base, diagnostics };
  base.hasValues = isFile(join(realRoot, FLEET_VALUES));
  for (const name of readdirSync(dir).sort()) {
    const m = GROUP_VALUES.exec(name);
    if (m && isFile(join(dir, name))) base.groupValues.add(m[1]!);
  }
  if (isFile(join(realRoot, GROUPS_FILE))) {
    const loaded = loadYamlFile(realRoot, GROUPS_FILE);
    if (!loaded.ok) diagnostics.push(loaded.diagnostic);
    else {
      base.groupsDoc = loaded.docs[0] ?? {};
      const groups = isMapping(base.groupsDoc) ? base.groupsDoc.groups : undefined;
      if (isMapping(groups)) {
        for (const name of Object.keys(groups).sort()) {
          const g = groups[name];
          const labels =
            isMapping(g) && isMapping(g.matchLabels) ? (g.matchLabels as Record<string, string>) : undefined;
          if (labels) base.groups.push({ name, matchLabels: labels });
        }
      }
    }
  }
  return { base, diagnostics };
}

/** The groups whose labels a cluster's labels hold, by name. */
function groupsOf(base: FleetBase, labels: Readonly<Record<string, string>>): string[] {
  return base.groups.filter((g) => Object.entries(g.matchLabels).every(([k, v]) => labels[k] === v)).map((g) => g.name);
}

/**
 * Whether a cluster's labels can change its base layers: some group has a values file of its own. Otherwise its
 * layers are the same whatever its labels, and its cluster.yaml need not be read for them (peekLabels).
 */
export function labelsChooseLayers(base: FleetBase): boolean {
  return base.groups.some((g) => base.groupValues.has(g.name));
}

/**
 * The base layers of a cluster with these labels, in merge order: fleet/values.yaml, then fleet/values.<group>.yaml of
 * each of its groups by group name. The cluster's own values.yaml and values.*.yaml come after them.
 */
export function baseLayers(base: FleetBase, labels: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  if (base.hasValues) out.push(FLEET_VALUES);
  for (const g of groupsOf(base, labels)) if (base.groupValues.has(g)) out.push(`${FLEET_DIR}/values.${g}.yaml`);
  return out;
}

/** Whether a repository path is one of the fleet's base files (a change to it reaches clusters beyond one folder). */
export function isBaseFile(path: string): boolean {
  return (
    path === FLEET_VALUES ||
    path === GROUPS_FILE ||
    (path.startsWith(`${FLEET_DIR}/`) && GROUP_VALUES.test(path.slice(FLEET_DIR.length + 1)))
  );
}

/** The group a base file applies to (`fleet/values.<group>.yaml`); undefined for fleet/values.yaml and groups.yaml. */
function groupOfFile(path: string): string | undefined {
  if (!path.startsWith(`${FLEET_DIR}/`)) return undefined;
  return GROUP_VALUES.exec(path.slice(FLEET_DIR.length + 1))?.[1];
}

/** A cluster's labels as its cluster.yaml says (read early, to choose its bases); {} when absent or not a label map. */
export function peekLabels(realRoot: string, clusterFile: string | undefined): Record<string, string> {
  if (!clusterFile) return {};
  const loaded = loadYamlFile(realRoot, clusterFile);
  const doc = loaded.ok ? loaded.docs[0] : undefined;
  const labels = isMapping(doc) ? doc.labels : undefined;
  if (!isMapping(labels)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (typeof v === "string") out[k] = v;
  return out;
}

/**
 * The clusters (of `folders`) a change to a base file reaches: every cluster for fleet/values.yaml and
 * fleet/groups.yaml (a groups change can move any cluster in or out of a group), the group's members for
 * fleet/values.<group>.yaml.
 */
export function clustersReachedBy(realRoot: string, file: string, folders: readonly string[]): string[] {
  const group = groupOfFile(file);
  if (group === undefined) return [...folders];
  const { base } = readFleetBase(realRoot);
  const g = base.groups.find((x) => x.name === group);
  if (!g) return [];
  return folders.filter((name) => {
    const clusterFile = `clusters/${name}/cluster.yaml`;
    const labels = peekLabels(realRoot, isFile(join(realRoot, clusterFile)) ? clusterFile : undefined);
    return Object.entries(g.matchLabels).every(([k, v]) => labels[k] === v);
  });
}
