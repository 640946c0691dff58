// The content-addressed cache of validated cluster folders: key from vc's version, the schemas and every file's
// content; entries on disk, authenticated.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import type { FolderBudget } from "../repo/budget.js";
import type { ClusterFiles } from "../repo/layout.js";
import type { ReadResult } from "../repo/read.js";
import type { ClusterResult } from "./result.js";
import { cacheDirProblem, openCacheDir } from "./cache-dir.js";
import { SCHEMA_NAMES, SCHEMAS_DIR } from "./schemas.js";

/** Bumped when the shape of an entry or the meaning of a key changes. */
const CACHE_FORMAT = "vc-validate-cache/5"; // 5: alias expansion is bounded in bytes too

/** What a caller needs of a cluster: its diagnostics and settings only (`vc validate`), or also its spec and values. */
export type Detail = "summary" | "full";

export interface ValidationCache {
  get(key: string, detail: Detail): ClusterResult | undefined;
  /** Stores an entry; the write may finish later (see flush). */
  set(key: string, result: ClusterResult): void;
  /** Resolves once every entry set so far is written (or given up). */
  flush(): Promise<void>;
}

let versionAndSchemas: string | undefined;

/** vc's version and a hash of its schemas: part of every key, so an upgrade never reads an older validator's result. */
function codeIdentity(): string {
  if (versionAndSchemas) return versionAndSchemas;
  const h = createHash("sha256");
  h.update(CACHE_FORMAT);
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  h.update(`\0${pkg.version}`);
  // Every schema vc validates with (the policy's too: cheap, and one list to keep).
  for (const name of SCHEMA_NAMES) {
    h.update(`\0${name}\0`);
    h.update(readFileSync(new URL(`${name}.schema.json`, SCHEMAS_DIR)));
  }
  versionAndSchemas = h.digest("hex");
  return versionAndSchemas;
}

/**
 * The key of a cluster folder: its name, its layout findings, the content of each of its files (as read) and its
 * budget, with vc's identity.
 */
export function clusterKey(files: ClusterFiles, reads: ReadonlyMap<string, ReadResult>, budget: FolderBudget): string {
  const h = createHash("sha256");
  h.update(codeIdentity());
  h.update(`\0${budget.files}\0${budget.bytes}\0${budget.objects}`);
  h.update(`\0${files.name}\0${files.hasValuesYaml}\0${JSON.stringify(files.diagnostics)}`);
  for (const [file, read] of reads) {
    h.update(`\0${file}\0`);
    if (read.ok) h.update(read.text);
    else h.update(`!${read.code}\0${read.message}`);
  }
  return h.digest("hex");
}

/**
 * Entries as files under a folder, one per key (`<key>.vcv`): an HMAC-SHA256 (32 bytes, keyed with the folder's
 * secret, over the format, the key and the rest), a 4-byte length, the v8-serialised summary (diagnostics,
 * settings: all `vc validate` reads), then the spec and values (what the reconciler needs). Nothing is
 * deserialised before its MAC is verified: an entry written by anyone without the secret is validated anew.
 */
export class DirCache implements ValidationCache {
  /** Lookups that found no usable entry (the folder is validated anew). */
  misses = 0;
  /** Entries whose MAC did not verify (rewritten or planted): ignored. */
  forged = 0;

  /** `secret`: the folder's key (cache-dir.ts); use DirCache.open for a folder not checked yet. */
  constructor(
    readonly dir: string,
    private readonly secret: Buffer,
  ) {}

  /** The cache in `dir` once the folder is checked and its secret read (or made), or why it is not used. */
  static open(dir: string): { cache: DirCache } | { problem: string } {
    const opened = openCacheDir(dir);
    return "key" in opened ? { cache: new DirCache(dir, opened.key) } : opened;
  }

  private mac(key: string, body: Uint8Array): Buffer {
    return createHmac("sha256", this.secret).update(`${CACHE_FORMAT}\0${key}\0`).update(body).digest();
  }

  get(key: string, detail: Detail): ClusterResult | undefined {
    try {
      const path = join(this.dir, `${key}${ENTRY}`);
      const data = readFileSync(path);
      const body = data.subarray(MAC_BYTES);
      if (data.length < MAC_BYTES + 4 || !timingSafeEqual(data.subarray(0, MAC_BYTES), this.mac(key, body))) {
        this.forged++;
        rmSync(path, { force: true }); // planted, or cut short: never of use, and in the way of the next write (set)
        throw new Error("entry not authenticated");
      }
      const size = body.readUInt32BE(0);
      const summary = deserialize(body.subarray(4, 4 + size)) as ClusterResult;
      const now = new Date();
      utimesSync(path, now, now); // in use: kept by pruneCache
      if (detail === "summary") return summary;
      const full = deserialize(body.subarray(4 + size)) as Pick<ClusterResult, "spec" | "values">;
      if (full.spec !== undefined) summary.spec = full.spec;
      if (full.values !== undefined) summary.values = full.values;
      return summary;
    } catch {
      this.misses++;
      return undefined; // absent, unreadable or not authenticated: validate again
    }
  }

  set(key: string, result: ClusterResult): void {
    const { spec, values, ...summary } = result;
    try {
      const head = serialize(summary);
      const size = Buffer.alloc(4);
      size.writeUInt32BE(head.length);
      const body = Buffer.concat([size, head, serialize({ ...(spec && { spec }), ...(values && { values }) })]);
      const data = Buffer.concat([this.mac(key, body), body]);
      // Created exclusively under its own name and written with one call, never through a symlink: no temporary file
      // and no rename, which cost ext4 more than the write (a cold start writes an entry for every folder of the
      // fleet). A reader that meets an entry not yet whole (or left so by a crash) finds its MAC wrong and removes it
      // (get), so the next validation writes it again. Synchronous: four system calls cost less CPU than the same
      // calls awaited through libuv's threads.
      writeEntry(join(this.dir, `${key}${ENTRY}`), data);
    } catch {
      // A cache that cannot be written only costs speed.
    }
  }

  /** Entries are written as they are set: nothing is left to wait for. */
  async flush(): Promise<void> {}
}

/**
 * Writes a new entry file whole, or leaves none (a file of that name already there is kept: written by another run).
 */
function writeEntry(path: string, data: Uint8Array): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch {
    return;
  }
  let whole = false;
  try {
    for (let at = 0; at < data.length; ) at += writeSync(fd, data, at);
    whole = true;
  } catch {
    // full disk, quota: no entry
  } finally {
    closeSync(fd);
    if (!whole) rmSync(path, { force: true });
  }
}

const MAC_BYTES = 32;
const ENTRY = ".vcv";

/** Entries unused this long are deleted by pruneCache. */
export const CACHE_MAX_AGE_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
const lastPruned = new Map<string, number>();

/** vc's own file names in a cache folder: entries (`<sha256>.vcv`) and the temporary files of their writes. */
const OWN_ENTRY = /^[0-9a-f]{64}\.vcv$/;
const OWN_TEMPORARY = /^\.[0-9a-f]{64}\.\d+\.[0-9a-z]+$/;

/**
 * Deletes entries not used for `maxAgeMs` (and temporary files a crash left), at most once an hour per folder
 * and process: the folder of a long-running reconciler holds about one entry per cluster, not one per commit.
 * Only regular files with vc's own names are removed, and only in a folder cacheDirProblem accepts (never
 * through a symlink): whatever else the folder holds stays.
 */
export function pruneCache(dir: string, maxAgeMs = CACHE_MAX_AGE_MS, now = Date.now()): number {
  if (now - (lastPruned.get(dir) ?? -Infinity) < PRUNE_EVERY_MS) return 0;
  lastPruned.set(dir, now);
  if (cacheDirProblem(dir) !== undefined) return 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const temporary = OWN_TEMPORARY.test(name);
    if (!temporary && !OWN_ENTRY.test(name)) continue;
    if (now - mtime(join(dir, name)) <= (temporary ? PRUNE_EVERY_MS : maxAgeMs)) continue;
    rmSync(join(dir, name), { force: true });
    if (!temporary) removed++;
  }
  return removed;
}

/** Modification time of a regular file (never through a symlink); Infinity for anything else, which is kept. */
function mtime(path: string): number {
  try {
    const st = lstatSync(path);
    return st.isFile() ? st.mtimeMs : Infinity;
  } catch {
    return Infinity;
  }
}
