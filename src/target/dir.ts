// The `dir:PATH` target: hydrated manifests, one YAML file per object, `<cluster>/<namespace|_cluster>/<kind>[.<group>]_<name>.yaml`.
import { lstat, mkdir, readdir, readFile, realpath, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { loadYamlText } from "../repo/load.js";
import type { KubeObject, ObjectRef } from "../kube/object.js";
import { refOf } from "../kube/object.js";
import { LABELS } from "../translate/keys.js";
import { toYaml } from "../plan/diff.js";
import { stripServerFields } from "../plan/normalize.js";
import { withholdCredentials } from "../render/secrets.js";
import type { Target, WriteOptions } from "./types.js";

/** Folder of cluster-scoped objects inside a cluster's folder (a namespace name never starts with "_"). */
const CLUSTER_SCOPED = "_cluster";
/** Files a write in progress leaves behind when the process dies between writing and renaming. */
const TEMP_FILE = /\.yaml\.tmp-(\d+)$/;
/** Largest manifest file read back (as the repository loader's limit). */
const MAX_FILE_BYTES = 1024 * 1024;

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

  /** Hydrated manifests never carry a credential written inline in the repository (render/secrets.ts). */
  prepare(obj: KubeObject): KubeObject {
    return withholdCredentials(obj);
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
      if (e.isSymbolicLink()) throw new Error(`${relative(process.cwd(), join(this.root, e.name))}: a symlink in the target folder: refused, not followed`);
      if (!e.isDirectory() || !SEGMENT.test(e.name)) continue;
      const objs = await this.listInventory(e.name);
      if (objs.length) fleet.set(e.name, objs);
    }
    return fleet;
  }

  async apply(obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const cluster = obj.metadata.labels?.[LABELS.inventory];
    if (!cluster) throw new Error(`${obj.kind} ${obj.metadata.name} lacks the label ${LABELS.inventory}: the dir target files objects by cluster`);
    const clean = stripServerFields(withholdCredentials(obj));
    if (opts.dryRun) return clean;
    const file = join(this.root, manifestPath(cluster, refOf(obj)));
    await mkdir(join(file, ".."), { recursive: true });
    await this.requireInside(join(file, ".."));
    // Write then rename: a run cut off half way leaves whole files only (and the next run removes the temporary file).
    // Secrets are readable by their owner only.
    const tmp = `${file}.tmp-${process.pid}`;
    await writeFile(tmp, toYaml(clean), { mode: obj.kind === "Secret" ? 0o600 : 0o644 });
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

  /** A folder the target writes into must resolve inside the target (no symlinked folder leading elsewhere). */
  private async requireInside(dir: string): Promise<void> {
    const [root, real] = [await realpath(this.root), await realpath(dir)];
    if (real !== root && !real.startsWith(`${root}${sep}`)) {
      throw new Error(`${relative(process.cwd(), dir)}: leads outside the target folder (a symlink): refused`);
    }
  }

  /** A manifest read back with the repository loader's limits; a symlink or an oversized file is refused, not followed. */
  private async read(file: string): Promise<KubeObject | undefined> {
    const shown = relative(process.cwd(), file);
    const info = await lstat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (!info) return undefined;
    if (info.isSymbolicLink()) throw new Error(`${shown}: a symlink in the target folder: refused, not followed`);
    if (!info.isFile()) throw new Error(`${shown}: not a regular file: refused`);
    if (info.size > MAX_FILE_BYTES) throw new Error(`${shown}: larger than ${MAX_FILE_BYTES} bytes: refused`);
    const text = await readFile(file, "utf8");
    if (text.trim() === "") return undefined;
    const loaded = loadYamlText(shown, text);
    if (!loaded.ok) {
      const d = loaded.diagnostic;
      throw new Error(`${shown}:${d.line}:${d.col}: ${d.message}`);
    }
    const obj = loaded.docs[0];
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
    const temp = TEMP_FILE.exec(e.name);
    if (temp && e.isFile()) {
      // Left by a run that died between writing and renaming: never a manifest, removed unless that run is this one.
      if (Number(temp[1]) !== process.pid) await rm(p, { force: true });
      continue;
    }
    if (e.isSymbolicLink()) throw new Error(`${relative(process.cwd(), p)}: a symlink in the target folder: refused, not followed`);
    if (e.isDirectory()) out.push(...(await yamlFiles(p)));
    else if (e.isFile() && e.name.endsWith(".yaml")) out.push(p);
  }
  return out.sort();
}
