// The `dir:PATH` target: hydrated manifests, one YAML file per object,
// `<cluster>/<namespace|_cluster>/<kind>[.<group>]_<name>.yaml`.
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, rmSync, type Dirent } from "node:fs";
import { lstat, mkdir, open, readdir, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { loadYamlText } from "../repo/load.js";
import type { KubeObject, ObjectRef } from "../kube/object.js";
import { objectKey, refOf } from "../kube/object.js";
import { LABELS } from "../translate/keys.js";
import { toYaml } from "../plan/diff.js";
import { stripServerFields } from "../plan/normalize.js";
import { withholdCredentials } from "../render/secrets.js";
import { DirStatusStore } from "../records/dir-store.js";
import { localIdentity, type Identity } from "../host/identity.js";
import type { StatusStoreOptions } from "../records/status-store.js";
import { ClaimIndex } from "../claims/claim-index.js";
import { liveClaimsOf } from "../claims/host-claims.js";
import { MESH_GROUP } from "../kube/resources.js";
import type { Target, WriteOptions } from "./types.js";

/** Folder of cluster-scoped objects inside a cluster's folder (a namespace name never starts with "_"). */
const CLUSTER_SCOPED = "_cluster";
/** Files a write in progress leaves behind when the process dies between writing and renaming. */
const TEMP_FILE = /\.yaml\.tmp-(\d+)$/;
/**
 * File names of the kinds that claim public hosts (claims/host-claims.ts): Gateways and VirtualServices of the mesh.
 */
const CLAIM_FILE = new RegExp(`^(gateway|virtualservice)\\.${MESH_GROUP.replaceAll(".", "\\.")}_[^/]+\\.yaml$`);

/** Largest manifest file read back (as the repository loader's limit). */
const MAX_FILE_BYTES = 1024 * 1024;

/** How manifests are opened for reading: never through a symlink, and a FIFO planted there does not block the open. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A name that is safe as one path segment: DNS-1123 characters, no "..". */
const SEGMENT = /^[a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?$/;

function segment(value: string, what: string): string {
  if (!SEGMENT.test(value) || value.includes(".."))
    throw new Error(`cannot write ${what} "${value}" as a file name: not a DNS-1123 name`);
  return value;
}

/** File of an object, relative to the target folder. */
export function manifestPath(cluster: string, ref: ObjectRef): string {
  const slash = ref.apiVersion.indexOf("/");
  const group = slash < 0 ? "" : ref.apiVersion.slice(0, slash);
  const kind = segment(ref.kind.toLowerCase(), "kind") + (group ? `.${segment(group, "group")}` : "");
  return join(
    segment(cluster, "cluster"),
    ref.namespace ? segment(ref.namespace, "namespace") : CLUSTER_SCOPED,
    `${kind}_${segment(ref.name, "name")}.yaml`,
  );
}

export class DirTarget implements Target {
  readonly description: string;
  readonly root: string;
  /**
   * Folders below the root known to be real folders (not symlinks), created or checked once: the walk of a
   * cluster's folder (listInventory) refuses any symlink in it and fills this in, so writes need no mkdir -p or
   * realpath per file. Forgotten for a cluster whenever its folder is walked again.
   */
  readonly #folders = new Set<string>();
  /** The same folders by cluster name, to forget a cluster's at once. */
  readonly #clusterFolders = new Map<string, string[]>();

  constructor(path: string) {
    this.root = resolve(path);
    this.description = `dir:${path}`;
  }

  /** Hydrated manifests never carry a credential written inline in the repository (render/secrets.ts). */
  prepare(obj: KubeObject): KubeObject {
    return withholdCredentials(obj);
  }

  /** The claims of the manifests written here (read once per target, then kept in step with its writes). */
  #claims: Promise<ClaimIndex> | undefined;

  /**
   * The public-host claims of the Gateways and VirtualServices this folder holds, by host: a folder holds only what vc
   * wrote, so its manifests are the claims of the clusters written before (the same fleet-wide rule as a host's, with
   * the run's new claims decided among themselves). Manifests carry no creation time: of two written claims on one host
   * the cluster name that sorts first wins, and a written claim is older than any new one.
   */
  hostClaimIndex(): Promise<ClaimIndex> {
    this.#claims ??= (async () => {
      const objects: KubeObject[] = [];
      for (const cluster of await this.#clusterFolderNames()) {
        const dir = join(this.root, cluster);
        for (const file of yamlFiles(dir, [])) {
          if (!CLAIM_FILE.test(file.slice(file.lastIndexOf(sep) + 1))) continue;
          const obj = this.read(file);
          if (obj && obj.metadata.labels?.[LABELS.inventory] === cluster) objects.push(obj);
        }
      }
      return ClaimIndex.ofObjects(objects, liveClaimsOf);
    })();
    return this.#claims;
  }

  async listInventory(cluster: string): Promise<KubeObject[]> {
    const dir = join(this.root, segment(cluster, "cluster"));
    for (const f of this.#clusterFolders.get(cluster) ?? []) this.#folders.delete(f);
    const folders: string[] = [];
    // Read synchronously: a cached manifest costs about 12 µs of CPU so, against about 85 µs for the four awaited calls
    // (open, stat, read, close) through libuv's threads, and a cluster's folder (some twenty files) holds the thread
    // for well under a millisecond.
    const files = yamlFiles(dir, folders);
    this.#clusterFolders.set(cluster, folders);
    for (const f of folders) this.#folders.add(f);
    const out: KubeObject[] = [];
    for (const file of files) {
      const obj = this.read(file);
      if (obj && obj.metadata.labels?.[LABELS.inventory] === cluster && whole(obj, cluster, relative(this.root, file)))
        out.push(obj);
      else
        this.tell(
          `${relative(process.cwd(), file)}: unreadable, not a whole manifest vc wrote (cut short?): it is ` +
            `replaced by ` +
            "what the repository renders, or left as it is when the repository renders nothing there",
        );
    }
    return out;
  }

  /** Where the target tells what it did instead of what it was asked; stderr by default. */
  tell: (message: string) => void = (message) => process.stderr.write(`vc: ${message}\n`);

  /**
   * The clusters that have a folder holding something, from the listing alone (no manifest read): what a full pass
   * needs to find clusters whose repository folder is gone.
   */
  async listClusterNames(): Promise<string[]> {
    const names: string[] = [];
    for (const e of await this.#clusterFolderNames()) {
      const inside = await readdir(join(this.root, e)).catch(() => []);
      if (inside.length > 0) names.push(e);
    }
    return names;
  }

  async listInventories(clusters: readonly string[]): Promise<Map<string, KubeObject[]>> {
    const out = new Map<string, KubeObject[]>();
    for (const c of clusters) out.set(c, await this.listInventory(c));
    return out;
  }

  clusterNames(): Promise<string[]> {
    return this.listClusterNames();
  }

  async listFleetInventory(): Promise<Map<string, KubeObject[]>> {
    const fleet = new Map<string, KubeObject[]>();
    for (const name of await this.#clusterFolderNames()) {
      const objs = await this.listInventory(name);
      if (objs.length) fleet.set(name, objs);
    }
    return fleet;
  }

  /** Folder names directly under the root that can be clusters, sorted; a symlink there is refused. */
  async #clusterFolderNames(): Promise<string[]> {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const out: string[] = [];
    for (const e of entries) {
      if (e.isSymbolicLink())
        throw new Error(
          `${relative(process.cwd(), join(this.root, e.name))}: a symlink in the target folder: refused, not followed`,
        );
      if (e.isDirectory() && SEGMENT.test(e.name)) out.push(e.name);
    }
    return out.sort();
  }

  async apply(obj: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const cluster = obj.metadata.labels?.[LABELS.inventory];
    if (!cluster)
      throw new Error(
        `${obj.kind} ${obj.metadata.name} lacks the label ${LABELS.inventory}: the dir target files objects by cluster`,
      );
    const clean = stripServerFields(withholdCredentials(obj));
    if (opts.dryRun) return clean;
    const file = join(this.root, manifestPath(cluster, refOf(obj)));
    await this.#folder(dirname(file));
    const text = toYaml(clean);
    const mode = obj.kind === "Secret" ? 0o600 : 0o644;
    // The same bytes already there (and the same mode): nothing to write.
    if (await sameFile(file, text, mode)) return clean;
    // Write then rename: a run cut off half way leaves whole files only (and the next run removes the temporary file).
    // Secrets are readable by their owner only.
    const tmp = `${file}.tmp-${process.pid}`;
    await writeFile(tmp, text, { mode });
    await rename(tmp, file);
    if (this.#claims) void this.#claims.then((index) => index.put(clean));
    return clean;
  }

  async delete(live: KubeObject, cluster: string, opts: WriteOptions): Promise<"deleted" | "gone" | "not-owned"> {
    const file = join(this.root, manifestPath(cluster, refOf(live)));
    const current = this.read(file);
    if (!current) return "gone";
    if (current.metadata.labels?.[LABELS.inventory] !== cluster) return "not-owned";
    if (opts.dryRun) return "deleted";
    await rm(file, { force: true });
    if (this.#claims) void this.#claims.then((index) => index.remove(objectKey(current)));
    // The namespace folder, then the cluster's, when now empty (a removed cluster leaves no folder behind).
    for (const dir of [dirname(file), dirname(dirname(file))]) {
      if (
        !(await rmdir(dir).then(
          () => true,
          () => false,
        ))
      )
        break;
      this.#folders.delete(dir);
    }
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

  async actor(): Promise<Identity> {
    return localIdentity();
  }

  statusStore(opts: StatusStoreOptions = {}): DirStatusStore {
    return new DirStatusStore(this.root, opts);
  }

  async close(): Promise<void> {}

  /**
   * Makes `dir` (below the root) a real folder, one segment at a time, each created or found once: a segment that
   * is a symlink (or not a folder) is refused, so no write leads outside the target folder.
   */
  async #folder(dir: string): Promise<void> {
    if (this.#folders.has(dir)) return;
    const parent = dirname(dir);
    if (dir !== this.root && parent !== dir) {
      if (parent === this.root) await mkdir(this.root, { recursive: true });
      else await this.#folder(parent);
    }
    if (dir === this.root) return;
    await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
    const info = await lstat(dir);
    if (info.isSymbolicLink() || !info.isDirectory())
      throw new Error(`${relative(process.cwd(), dir)}: leads outside the target folder (a symlink): refused`);
    this.#folders.add(dir);
    const cluster = relative(this.root, dir).split(sep)[0]!;
    this.#clusterFolders.set(cluster, [...(this.#clusterFolders.get(cluster) ?? []), dir]);
  }

  /**
   * A manifest read back with the repository loader's limits; a symlink or an oversized file is refused, not followed.
   */
  private read(file: string): KubeObject | undefined {
    const shown = relative(process.cwd(), file);
    const text = readManifest(file, shown);
    if (text === undefined || text.trim() === "") return undefined;
    const loaded = loadYamlText(shown, text);
    if (!loaded.ok) {
      const d = loaded.diagnostic;
      throw new Error(`${shown}:${d.line}:${d.col}: ${d.message}`);
    }
    const obj = loaded.docs[0];
    if (
      !obj ||
      typeof obj !== "object" ||
      typeof (obj as KubeObject).kind !== "string" ||
      typeof (obj as KubeObject).metadata?.name !== "string"
    )
      return undefined;
    return obj as KubeObject;
  }
}

/** Whether `obj` is a whole manifest of `cluster` as vc writes it: its kind and name, filed where they say. */
function whole(obj: KubeObject, cluster: string, file: string): boolean {
  if (typeof obj.apiVersion !== "string") return false;
  try {
    return manifestPath(cluster, refOf(obj)) === file;
  } catch {
    return false;
  }
}

/**
 * A manifest's text (undefined when there is none): opened without following a symlink (O_NOFOLLOW), checked and
 * read through the one descriptor, so the file checked is the file read.
 */
function readManifest(file: string, shown: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new Error(`${shown}: a symlink in the target folder: refused, not followed`);
    throw err;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error(`${shown}: not a regular file: refused`);
    if (info.size > MAX_FILE_BYTES) throw new Error(`${shown}: larger than ${MAX_FILE_BYTES} bytes: refused`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** True when `file` is a regular file (not a symlink) holding exactly `text` with permissions `mode`. */
async function sameFile(file: string, text: string, mode: number): Promise<boolean> {
  let fh: import("node:fs/promises").FileHandle;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const info = await fh.stat();
    if (!info.isFile() || (info.mode & 0o777) !== mode || info.size !== Buffer.byteLength(text)) return false;
    return (await fh.readFile("utf8")) === text;
  } finally {
    await fh.close();
  }
}

/**
 * The manifest files under `dir`, sorted; every folder walked (all real folders: a symlink is refused) lands in
 * `folders`.
 */
function yamlFiles(dir: string, folders: string[]): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR")
      return [];
    throw err;
  }
  folders.push(dir);
  const out: string[] = [];
  const sub: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    const temp = TEMP_FILE.exec(e.name);
    if (temp && e.isFile()) {
      // Left by a run that died between writing and renaming: never a manifest, removed unless that run is this one.
      if (Number(temp[1]) !== process.pid) rmSync(p, { force: true });
      continue;
    }
    if (e.isSymbolicLink())
      throw new Error(`${relative(process.cwd(), p)}: a symlink in the target folder: refused, not followed`);
    if (e.isDirectory()) sub.push(p);
    else if (e.isFile() && e.name.endsWith(".yaml")) out.push(p);
  }
  for (const p of sub) out.push(...yamlFiles(p, folders));
  return out.sort();
}
