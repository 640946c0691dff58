// The budget of one cluster folder (files, bytes, YAML documents): the defaults, the fleet policy's override, and the
// reads that stop once it is spent.
import type { Diagnostic } from "../model/diagnostic.js";
import { folderFiles, type ClusterFiles } from "./layout.js";
import { readRepoFile, type ReadResult } from "./read.js";

/**
 * What one cluster folder may hold: files vc reads, their bytes together, and the YAML documents (objects) of its mesh/
 * and certificates/ manifests.
 */
export interface FolderBudget {
  files: number;
  bytes: number;
  objects: number;
}

/**
 * The defaults, far above any real cluster (the example fleet's largest folder has 9 files, 5 KiB and 12
 * objects) and low enough that the reconciler's memory stays within its deployed heap: see
 * docs/yaml-loading.md ("Folder budgets") for the formula and the measurement behind them.
 */
export const DEFAULT_FOLDER_BUDGET: Readonly<FolderBudget> = Object.freeze({
  files: 200,
  bytes: 2 * 1024 * 1024,
  objects: 2000,
});

/** The budget in force: the fleet policy's `folderBudget` keys over the defaults. */
export function folderBudget(override?: Partial<FolderBudget>): FolderBudget {
  return { ...DEFAULT_FOLDER_BUDGET, ...(override ?? {}) };
}

export type BudgetedReads = { ok: true; reads: Map<string, ReadResult> } | { ok: false; diagnostic: Diagnostic };

/**
 * Reads a folder's files in the order vc reads them, within the budget's files and bytes: a folder with too many
 * files is refused before anything is read, and reading stops at the first file that would pass the bytes left
 * (its size is known before its content is read). `baseRoot`: where the fleet/ layers are read from, when not the
 * repository.
 */
export function readWithinBudget(
  realRoot: string,
  files: ClusterFiles,
  budget: FolderBudget,
  baseRoot?: string,
): BudgetedReads {
  const all = folderFiles(files);
  if (all.length > budget.files || files.truncated) {
    const first = files.truncated ?? all[budget.files]!;
    return {
      ok: false,
      diagnostic: over(
        first,
        `cluster folder ${files.dir} holds more than ${budget.files} files, its budget (folderBudget.files in ` +
          `policy.yaml): this file is past it; split the cluster or raise the budget`,
      ),
    };
  }
  const reads = new Map<string, ReadResult>();
  let used = 0;
  for (const file of all) {
    // A cluster pinned to a base snapshot (rollouts) reads its fleet/ layers from the snapshot's folder.
    const read = readRepoFile(
      baseRoot !== undefined && file.startsWith("fleet/") ? baseRoot : realRoot,
      file,
      budget.bytes - used,
    );
    if (!read.ok && read.code === "over-budget") {
      return {
        ok: false,
        diagnostic: over(
          file,
          `cluster folder ${files.dir} holds more than ${budget.bytes} bytes, its budget (folderBudget.bytes in ` +
            `policy.yaml): ${read.message}; split the cluster or raise the budget`,
        ),
      };
    }
    if (read.ok) used += Buffer.byteLength(read.text);
    reads.set(file, read);
  }
  return { ok: true, reads };
}

/** The error of an object past the budget, at the document that passes it. */
export function objectsOverBudget(
  file: string,
  line: number,
  col: number,
  dir: string,
  budget: FolderBudget,
): Diagnostic {
  return {
    file,
    line,
    col,
    severity: "error",
    code: "folder-budget",
    message:
      `cluster folder ${dir} holds more than ${budget.objects} manifest documents (mesh/, certificates/), ` +
      `its budget (folderBudget.objects in policy.yaml): this document is past it and the rest of the folder was ` +
      `not read; split the cluster or raise the budget`,
  };
}

function over(file: string, message: string): Diagnostic {
  return { file, line: 0, col: 0, severity: "error", code: "folder-budget", message };
}
