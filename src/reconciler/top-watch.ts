// The "top" folder watch of a large fleet outside git: one fs.watch on clusters/ and one on each cluster folder,
// nothing deeper.
import fs, { type FSWatcher } from "node:fs";
import { join } from "node:path";

/**
 * Watches `base` (the clusters/ folder) and each cluster folder in it: `note` gets `<base>/<name>/<entry>` for a change
 * to a folder's own entry (cluster.yaml, values files, the mesh/ folder itself) and `<base>/<name>/` when a folder
 * appears, goes or is replaced. One inotify watch and one small handle per folder: at 10,000 folders a few MiB,
 * where chokidar keeps a watcher and a stat for every path it follows (94 MiB of heap, docs/scale.md).
 * Dot-folders and node_modules are not watched (the loader ignores them). Throws when `base` itself cannot be watched,
 * or a folder cannot be for another reason than having gone (the watch limit: `fs.inotify.max_user_watches`); a folder
 * added later that cannot be watched waits for the resync, as does everything when clusters/ itself goes.
 */
export function watchTop(base: string, note: (path: string) => void): { close(): void } {
  const folders = new Map<string, FSWatcher>();
  let closed = false;
  const ignored = (name: string): boolean => name === ".git" || name === "node_modules";

  const watchFolder = (name: string, strict: boolean): void => {
    const dir = join(base, name);
    let w: FSWatcher;
    try {
      w = fs.watch(dir, (_event, entry) => {
        const e = entry?.toString();
        if (e === undefined || e === "") note(`${dir}/`);
        else if (!ignored(e)) note(join(dir, e));
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!strict || code === "ENOENT" || code === "ENOTDIR") return; // gone since it was listed: the base watch saw it
      throw new Error(
        `cannot watch ${dir}: ` +
          `${(err as Error).message}${code === "ENOSPC" ? " (raise fs.inotify.max_user_watches, or keep the fleet in git)" : ""}`,
      );
    }
    // A folder removed while watched: its own watch ends; the base watch reports the folder.
    w.on("error", () => unwatch(name));
    folders.set(name, w);
  };
  const unwatch = (name: string): void => {
    folders.get(name)?.close();
    folders.delete(name);
  };
  /**
   * An entry of clusters/ changed: follows it as it is now (a real folder, not a symlink). True when it is or was a
   * cluster folder (a file there, or a name that came and went, is none).
   */
  const follow = (name: string): boolean => {
    const was = folders.has(name);
    // Replaced (removed and made again between two events): the old watch follows nothing any more.
    unwatch(name);
    const st = fs.lstatSync(join(base, name), { throwIfNoEntry: false });
    if (!st?.isDirectory()) return was;
    watchFolder(name, false);
    return true;
  };

  const top = fs.watch(base, (_event, entry) => {
    if (closed) return;
    const name = entry?.toString();
    if (name === undefined || name === "") {
      // No name given: follow the listing anew (what changed in it waits for the resync).
      for (const n of listFolders(base)) if (!folders.has(n)) follow(n);
      for (const n of [...folders.keys()]) if (!fs.existsSync(join(base, n))) unwatch(n);
      return;
    }
    if (name.startsWith(".") || ignored(name)) return;
    if (follow(name)) note(`${join(base, name)}/`);
  });
  top.on("error", () => undefined); // clusters/ removed: a pass reports it (the folder source fails to list)
  try {
    for (const name of listFolders(base)) watchFolder(name, true);
  } catch (err) {
    top.close();
    for (const w of folders.values()) w.close();
    throw err;
  }
  return {
    close(): void {
      closed = true;
      top.close();
      for (const w of folders.values()) w.close();
      folders.clear();
    },
  };
}

function listFolders(base: string): string[] {
  try {
    return fs
      .readdirSync(base, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith(".") && e.name !== "node_modules")
      .map((e) => e.name);
  } catch {
    return [];
  }
}
