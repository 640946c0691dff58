// Where cluster status lives in a dir: target: `.vc-status/<cluster>.json`, older history in
// `.vc-status/history/<cluster>.json`.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { archiveDepth, DEFAULT_HISTORY_LIMIT, mergeEntries, nextArchive } from "./archive.js";
import { fromData, parseHistory, type ClusterStatus, type Reconciliation } from "./status.js";
import {
  HISTORY_DIR,
  STATUS_DIR,
  stored,
  type StatusFold,
  type StatusStore,
  type StatusStoreOptions,
  type WriteStatusOptions,
} from "./status-store.js";

export class DirStatusStore implements StatusStore {
  readonly dir: string;
  private readonly depth: number;
  constructor(targetDir: string, opts: StatusStoreOptions = {}) {
    this.dir = join(targetDir, STATUS_DIR);
    this.depth = archiveDepth(opts.historyLimit ?? DEFAULT_HISTORY_LIMIT);
  }

  async read(cluster: string): Promise<ClusterStatus | undefined> {
    let text: string;
    try {
      // Synchronous calls: a full pass reads and writes one status per cluster, and awaiting each call through libuv's
      // threads costs several times the CPU of the calls themselves.
      text = readFileSync(join(this.dir, `${cluster}.json`), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    return parseStatusFile(text, cluster);
  }

  async list(): Promise<ClusterStatus[]> {
    let files: string[];
    try {
      files = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const out: ClusterStatus[] = [];
    for (const f of files.filter((f) => f.endsWith(".json")).sort()) {
      const s = await this.read(f.slice(0, -".json".length));
      if (s) out.push(s);
    }
    return out;
  }

  /**
   * Written to a temporary file and renamed, so a reader never sees half a status; older entries go to
   * history/<cluster>.json first.
   */
  async write(status: ClusterStatus): Promise<boolean> {
    mkdirSync(this.dir, { recursive: true });
    if (status.spilled?.length && this.depth > 0) {
      mkdirSync(join(this.dir, HISTORY_DIR), { recursive: true });
      const entries = nextArchive(await this.archived(status.cluster), status.spilled, this.depth);
      writeAtomically(this.historyFile(status.cluster), `${JSON.stringify(entries)}\n`);
    }
    writeAtomically(join(this.dir, `${status.cluster}.json`), `${JSON.stringify(stored(status), null, 2)}\n`);
    return true;
  }

  /** Read, fold, write: a dir: target has one writer at a time (the command that writes the folder). */
  async update(
    cluster: string,
    _hostNamespace: string,
    fold: StatusFold,
    _opts: WriteStatusOptions = {},
  ): Promise<ClusterStatus | undefined> {
    const next = fold(await this.read(cluster), {});
    if (!next) return undefined;
    await this.write(next);
    return next;
  }

  async remove(cluster: string): Promise<void> {
    await rm(join(this.dir, `${cluster}.json`), { force: true });
    await rm(this.historyFile(cluster), { force: true });
  }

  async history(status: ClusterStatus): Promise<Reconciliation[]> {
    return mergeEntries(status.history, await this.archived(status.cluster));
  }

  private historyFile(cluster: string): string {
    return join(this.dir, HISTORY_DIR, `${cluster}.json`);
  }

  private async archived(cluster: string): Promise<Reconciliation[]> {
    try {
      return parseHistory(readFileSync(this.historyFile(cluster), "utf8")).entries;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
  }
}

/**
 * A status file read as tolerantly as the kube store reads its ConfigMap (fromData): fields of the wrong type are
 * dropped, history entries that are not reconciliations are left out and counted (damagedHistory), a file that is
 * not a JSON object reads as a status with a damaged history.
 */
function parseStatusFile(text: string, cluster: string): ClusterStatus {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const fields =
    parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields ?? {})) if (typeof v === "string") data[k] = v;
  data.history = fields === undefined ? "null" : JSON.stringify(fields.history ?? []);
  // Written as an object (stored), read back through the same check as a record's (status.ts fromData).
  if (fields?.validated !== undefined) data.validated = JSON.stringify(fields.validated);
  return fromData(data, cluster)!;
}

function writeAtomically(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}
