// Base snapshots: the fleet base files of a revision, content-addressed (digest), as a records ConfigMap, and
// materialised read-only for the loader.
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "../kube/object.js";
import { baseLayers, FLEET_DIR, isBaseFile, type FleetBase } from "../repo/fleet-base.js";
import { readRepoFile } from "../repo/read.js";
import { LABELS } from "../translate/keys.js";
import { RECORD_LABEL } from "../records/record.js";

/** A base above this (its files' bytes together) is not rolled out: it would not fit a ConfigMap with room to spare. */
export const MAX_BASE_BYTES = 512 * 1024;

/** The base files of one revision: repository path (`fleet/values.yaml`) -> text. */
export interface BaseSnapshot {
  digest: string;
  files: Record<string, string>;
  /** The commit it was first seen at, when known. */
  revision?: string;
}

/** sha256 over the sorted (path, bytes) pairs, each framed by its length so that no two sets share a digest. */
export function baseDigest(files: Readonly<Record<string, string>>): string {
  const h = createHash("sha256");
  for (const path of Object.keys(files).sort()) {
    const bytes = Buffer.from(files[path]!, "utf8");
    h.update(`${Buffer.byteLength(path)}:${path}\n${bytes.length}:`);
    h.update(bytes);
    h.update("\n");
  }
  return h.digest("hex");
}

/**
 * The base files of the repository at `realRoot` (fleet/values.yaml, fleet/values.<group>.yaml, fleet/groups.yaml; not
 * rollout.yaml).
 */
export function readBase(realRoot: string, revision?: string): BaseSnapshot | { error: string } {
  const files: Record<string, string> = {};
  const dir = join(realRoot, FLEET_DIR);
  if (existsSync(dir) && lstatSync(dir).isDirectory()) {
    for (const name of readdirSync(dir).sort()) {
      const path = `${FLEET_DIR}/${name}`;
      if (!isBaseFile(path)) continue;
      const read = readRepoFile(realRoot, path);
      if (!read.ok) return { error: `${path}: ${read.message}` };
      files[path] = read.text;
    }
  }
  const bytes = Object.values(files).reduce((n, t) => n + Buffer.byteLength(t), 0);
  if (bytes > MAX_BASE_BYTES)
    return {
      error:
        `the fleet base is ${bytes} bytes, over the ${MAX_BASE_BYTES} bytes (512 KiB) a rollout can pin: it ` +
        `is applied at once`,
    };
  return { digest: baseDigest(files), files, ...(revision ? { revision } : {}) };
}

/** Name of a snapshot's ConfigMap in the records namespace. */
export const snapshotName = (digest: string): string => `vc-base-${digest.slice(0, 16)}`;
/** Data key of a base file: its path with `/` written `__` (a ConfigMap key may not hold `/`). */
const keyOf = (path: string): string => path.replaceAll("/", "__");
const pathOf = (key: string): string => key.replaceAll("__", "/");

export function snapshotConfigMap(namespace: string, source: string, snap: BaseSnapshot): KubeObject {
  const data: Record<string, string> = { digest: snap.digest };
  if (snap.revision) data.revision = snap.revision;
  for (const [path, text] of Object.entries(snap.files)) data[keyOf(path)] = text;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: snapshotName(snap.digest),
      namespace,
      labels: { [RECORD_LABEL]: "base", ...(source ? { [LABELS.owner]: source } : {}) },
    },
    data,
  };
}

/** The snapshot a ConfigMap holds, or undefined when it is not one or its content does not match its digest. */
export function fromSnapshotConfigMap(cm: KubeObject): BaseSnapshot | undefined {
  const data = (cm.data as Record<string, string> | undefined) ?? {};
  if (cm.metadata.labels?.[RECORD_LABEL] !== "base" || !data.digest) return undefined;
  const files: Record<string, string> = {};
  for (const [k, v] of Object.entries(data))
    if (k.startsWith(`${FLEET_DIR}__`) && isBaseFile(pathOf(k))) files[pathOf(k)] = v;
  if (baseDigest(files) !== data.digest || cm.metadata.name !== snapshotName(data.digest)) return undefined;
  return { digest: data.digest, files, ...(data.revision ? { revision: data.revision } : {}) };
}

/**
 * The snapshot as a folder `<cacheDir>/bases/<digest>/fleet/…` (files 0444, folders 0555), which the loader reads base
 * layers from instead of the repository. Written once (to a temporary folder, then renamed): content-addressed, so an
 * existing folder is the same content.
 */
export function materialise(cacheDir: string, snap: BaseSnapshot): string {
  const root = join(cacheDir, "bases", snap.digest);
  if (existsSync(root)) return root;
  const tmp = `${root}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(join(tmp, FLEET_DIR), { recursive: true });
  for (const [path, text] of Object.entries(snap.files)) {
    const file = join(tmp, ...path.split("/"));
    writeFileSync(file, text, { mode: 0o444 });
  }
  chmodSync(join(tmp, FLEET_DIR), 0o555);
  try {
    renameSync(tmp, root);
  } catch (err) {
    chmodSync(join(tmp, FLEET_DIR), 0o755);
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(root)) throw err;
  }
  return root;
}

/**
 * What a cluster with these labels takes from a snapshot (`fleet`: readFleetBase of its folder): its base layers (paths
 * and text, in merge order). Two snapshots giving a cluster the same effective layers render it the same: it is not
 * part of a rollout between them.
 */
export function effectiveLayers(
  fleet: FleetBase,
  snap: BaseSnapshot,
  labels: Readonly<Record<string, string>>,
): string {
  const layers = baseLayers(fleet, labels);
  return JSON.stringify(layers.map((p) => [p, snap.files[p] ?? ""]));
}

/**
 * A private folder for materialised snapshots (mkdtemp: 0700, a name no one else chose), removed when the process
 * exits (its read-only folders made writable first).
 */
export function privateBasesDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vc-bases-"));
  if (basesDirs.size === 0) process.once("exit", () => basesDirs.forEach(removeBasesDir));
  basesDirs.add(dir);
  return dir;
}

/** The folders privateBasesDir made in this process: one exit hook removes them all. */
const basesDirs = new Set<string>();

/** Removes a folder of materialised snapshots. */
export function removeBasesDir(dir: string): void {
  const unlock = (d: string): void => {
    try {
      chmodSync(d, 0o755);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) unlock(join(d, e.name));
    } catch {
      // gone already
    }
  };
  unlock(dir);
  rmSync(dir, { recursive: true, force: true });
}
