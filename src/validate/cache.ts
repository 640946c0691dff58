// The content-addressed cache of validated cluster folders: key from vc's version, the schemas and every file's content; entries on disk.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import type { ClusterFiles } from "../repo/layout.js";
import type { ReadResult } from "../repo/read.js";
import type { ClusterResult } from "./cluster.js";
import { SCHEMAS_DIR } from "./schemas.js";

/** Bumped when the shape of an entry or the meaning of a key changes. */
const CACHE_FORMAT = "vc-validate-cache/1";

/** What a caller needs of a cluster: its diagnostics and settings only (`vc validate`), or also its spec and values. */
export type Detail = "summary" | "full";

export interface ValidationCache {
  get(key: string, detail: Detail): ClusterResult | undefined;
  set(key: string, result: ClusterResult): void;
}

let versionAndSchemas: string | undefined;

/** vc's version and a hash of its schemas: part of every key, so an upgrade never reads an older validator's result. */
function codeIdentity(): string {
  if (versionAndSchemas) return versionAndSchemas;
  const h = createHash("sha256");
  h.update(CACHE_FORMAT);
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  h.update(`\0${pkg.version}`);
  for (const name of ["values", "cluster", "mesh/virtualservice", "mesh/destinationrule", "mesh/gateway"]) {
    h.update(`\0${name}\0`);
    h.update(readFileSync(new URL(`${name}.schema.json`, SCHEMAS_DIR)));
  }
  for (const f of readdirSync(new URL("mesh/", SCHEMAS_DIR)).sort()) h.update(`\0${f}`);
  versionAndSchemas = h.digest("hex");
  return versionAndSchemas;
}

/** The key of a cluster folder: its name, its layout findings and the content of each of its files (as read), with vc's identity. */
export function clusterKey(files: ClusterFiles, reads: ReadonlyMap<string, ReadResult>): string {
  const h = createHash("sha256");
  h.update(codeIdentity());
  h.update(`\0${files.name}\0${files.hasValuesYaml}\0${JSON.stringify(files.diagnostics)}`);
  for (const [file, read] of reads) {
    h.update(`\0${file}\0`);
    if (read.ok) h.update(read.text);
    else h.update(`!${read.code}\0${read.message}`);
  }
  return h.digest("hex");
}

/** Entries as files under a folder: `<key>.sum` (diagnostics, settings) and `<key>.full` (spec and values), each v8-serialised. */
export class DirCache implements ValidationCache {
  private made = false;

  constructor(readonly dir: string) {}

  get(key: string, detail: Detail): ClusterResult | undefined {
    try {
      const sum = join(this.dir, `${key}.sum`);
      const summary = deserialize(readFileSync(sum)) as ClusterResult;
      const now = new Date();
      utimesSync(sum, now, now); // in use: kept by pruneCache
      if (detail === "summary") return summary;
      const full = deserialize(readFileSync(join(this.dir, `${key}.full`))) as Pick<ClusterResult, "spec" | "values">;
      if (full.spec !== undefined) summary.spec = full.spec;
      if (full.values !== undefined) summary.values = full.values;
      return summary;
    } catch {
      return undefined; // absent or unreadable: validate again
    }
  }

  set(key: string, result: ClusterResult): void {
    const { spec, values, ...summary } = result;
    try {
      if (!this.made) mkdirSync(this.dir, { recursive: true });
      this.made = true;
      // The full part first, so that a summary present means a whole entry; each written whole, then renamed.
      this.write(`${key}.full`, serialize({ ...(spec && { spec }), ...(values && { values }) }));
      this.write(`${key}.sum`, serialize(summary));
    } catch {
      // A cache that cannot be written only costs speed.
    }
  }

  private write(name: string, data: Buffer): void {
    const tmp = join(this.dir, `.${name}.${process.pid}.${Math.random().toString(36).slice(2)}`);
    writeFileSync(tmp, data);
    renameSync(tmp, join(this.dir, name));
  }
}

/** Entries unused this long are deleted by pruneCache. */
export const CACHE_MAX_AGE_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
const lastPruned = new Map<string, number>();

/**
 * Deletes entries not used for `maxAgeMs` (and temporary files a crash left), at most once an hour per folder
 * and process: the folder of a long-running reconciler holds about one entry per cluster, not one per commit.
 */
export function pruneCache(dir: string, maxAgeMs = CACHE_MAX_AGE_MS, now = Date.now()): number {
  if (now - (lastPruned.get(dir) ?? -Infinity) < PRUNE_EVERY_MS) return 0;
  lastPruned.set(dir, now);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const stale = name.startsWith(".") ? now - mtime(join(dir, name)) > PRUNE_EVERY_MS : name.endsWith(".sum") && now - mtime(join(dir, name)) > maxAgeMs;
    if (!stale) continue;
    const base = name.startsWith(".") ? name : name.slice(0, -".sum".length);
    for (const f of name.startsWith(".") ? [name] : [`${base}.sum`, `${base}.full`]) rmSync(join(dir, f), { force: true });
    removed++;
  }
  // A full part whose summary is gone (a crash between the two writes) is never read: delete it too.
  const present = new Set(names);
  for (const name of names) {
    if (name.endsWith(".full") && !present.has(`${name.slice(0, -".full".length)}.sum`) && now - mtime(join(dir, name)) > PRUNE_EVERY_MS) rmSync(join(dir, name), { force: true });
  }
  return removed;
}

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
}
