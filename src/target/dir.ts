// The `dir:PATH` target: hydrated manifests, one YAML file per object, `<cluster>/<namespace|_cluster>/<kind>[.<group>]_<name>.yaml`.
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { load } from "js-yaml";
import type { KubeObject, ObjectRef } from "../kube/object.js";
import { refOf } from "../kube/object.js";
import { LABELS } from "../translate/keys.js";
import { toYaml } from "../plan/diff.js";
import { stripServerFields } from "../plan/normalize.js";
import type { Target, WriteOptions } from "./types.js";

/** Folder of cluster-scoped objects inside a cluster's folder (a namespace name never starts with "_"). */
const CLUSTER_SCOPED = "_cluster";
/** A name that is safe as one path segment: DNS-1123 characters, no "..". */
const SEGMENT = /^[a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?$/;

function segment(value: string, what: string): string {
  if (!SEGMENT.test(value) || value.includes("..")) throw new Error(`cannot write ${what} "${value}" as a file name: not a DNS-1123 name`);
  return value;
}

/** File of an object, relative to the target folder. */
export function manifestPath(cluster: string, ref: ObjectRef): string {
  const slash = ref.apiVersion.indexOf("/");
  const group = slash < 0 ? "" : ref.apiVersion.slice(0, slash);
  const kind = segment(ref.kind.toLowerCase(), "kind") + (group ? `.${segment(group, "group")}` : "");
  return join(segment(cluster, "cluster"), ref.namespace ? segment(ref.namespace, "namespace") : CLUSTER_SCOPED, `${kind}_${segment(ref.name, "name")}.yaml`);
}

export class DirTarget implements Target {
  readonly description: string;
  readonly root: string;

  constructor(path: string) {
    this.root = resolve(path);
    this.description = `dir:${path}`;
  }

  async listInventory(cluster: string): Promise<KubeObject[]> {
    const dir = join(this.root, segment(cluster, "cluster"));
    const files = await yamlFiles(dir);
    const out: KubeObject[] = [];
    for (const file of files) {
      const obj = await this.read(file);
      if (obj && obj.metadata.labels?.[LABELS.inventory] === cluster) out.push(obj);
    }
    return out;
  }

  async listFleetInventory(): Promise<Map<string, KubeObject[]>> {
    const fleet = new Map<string, KubeObject[]>();
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return fleet;
      throw err;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!e.isDirectory() || !SEGMENT.test(e.name)) continue;
      const objs = await this.listInventory(e.name);
      if (objs.length) fleet.set(e.name, objs);
    }
    return fleet;
  }

  async apply(obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const cluster = obj.metadata.labels?.[LABELS.inventory];
    if (!cluster) throw new Error(`${obj.kind} ${obj.metadata.name} lacks the label ${LABELS.inventory}: the dir target files objects by cluster`);
    const clean = stripServerFields(obj);
    if (opts.dryRun) return clean;
    const file = join(this.root, manifestPath(cluster, refOf(obj)));
    await mkdir(join(file, ".."), { recursive: true });
    // Write then rename: a run cut off half way leaves whole files only.
    const tmp = `${file}.tmp-${process.pid}`;
    await writeFile(tmp, toYaml(clean));
    await rename(tmp, file);
    return clean;
  }

  async delete(live: KubeObject, cluster: string, opts: WriteOptions): Promise<"deleted" | "gone" | "not-owned"> {
    const file = join(this.root, manifestPath(cluster, refOf(live)));
    const current = await this.read(file);
    if (!current) return "gone";
    if (current.metadata.labels?.[LABELS.inventory] !== cluster) return "not-owned";
    if (opts.dryRun) return "deleted";
    await rm(file, { force: true });
    await rmdir(join(file, "..")).catch(() => undefined); // the namespace folder, when now empty
    return "deleted";
  }

  /** Files have no immutable fields: the new content replaces the old. */
  async recreate(_live: KubeObject, desired: KubeObject, opts: WriteOptions): Promise<string[]> {
    await this.apply(desired, opts);
    return [];
  }

  /** A folder stores any kind. */
  async missingKinds(): Promise<Array<{ apiVersion: string; kind: string }>> {
    return [];
  }

  async close(): Promise<void> {}

  private async read(file: string): Promise<KubeObject | undefined> {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    let obj: unknown;
    try {
      obj = text.trim() === "" ? undefined : load(text);
    } catch (err) {
      throw new Error(`${relative(process.cwd(), file)}: not valid YAML: ${(err as Error).message.split("\n")[0]}`);
    }
    if (!obj || typeof obj !== "object" || typeof (obj as KubeObject).kind !== "string" || typeof (obj as KubeObject).metadata?.name !== "string") return undefined;
    return obj as KubeObject;
  }
}

async function yamlFiles(dir: string): Promise<string[]> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") return [];
    throw err;
  }
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await yamlFiles(p)));
    else if (e.isFile() && e.name.endsWith(".yaml")) out.push(p);
  }
  return out.sort();
}
