// Where vc keeps its caches (outside the checkout), whether a cache folder may be trusted, and the per-installation key
// that authenticates validation cache entries.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  writeSync,
  type Stats,
} from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** The file of a cache folder's secret: 32 random bytes, mode 0600, created by vc in that folder. */
export const CACHE_KEY_FILE = "vc-cache.key";
const KEY_BYTES = 32;

/** vc's cache root: `$XDG_CACHE_HOME/vc`, else `~/.cache/vc` (never inside the checkout). */
export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".cache"), "vc");
}

/**
 * Why the folder `dir` may not hold a cache, or undefined when it may: it is a symlink, not a folder, owned by
 * another user, or writable by its group or others (anyone who may write there could plant entries or remove files).
 */
export function cacheDirProblem(dir: string): string | undefined {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (err) {
    return `cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  if (st.isSymbolicLink()) return "it is a symlink (never followed)";
  if (!st.isDirectory()) return "it is not a folder";
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `it is owned by user ${st.uid}, not by this user (${uid})`;
  if ((st.mode & 0o022) !== 0)
    return (
      `it is writable by ` +
      `${st.mode & 0o020 ? "its group" : ""}${(st.mode & 0o022) === 0o022 ? " and " : ""}${st.mode & 0o002 ? "others" : ""} (mode ${(st.mode & 0o777).toString(8)}): chmod go-w`
    );
  return undefined;
}

/**
 * The folder made (0700, parents as needed) when missing, then checked: the problem, or undefined when it may be used.
 */
function prepareCacheDir(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    return `cannot create it (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  return cacheDirProblem(dir);
}

/**
 * The secret of the cache folder `dir` (already checked by cacheDirProblem): read from CACHE_KEY_FILE, or created
 * there (0600, exclusively) when absent. A key file that is a symlink, not a regular file, owned by another user,
 * readable or writable by anyone else (as no file git checks out is) or of the wrong size is refused: a string says
 * why.
 */
function cacheSecret(dir: string): Buffer | string {
  const path = join(dir, CACHE_KEY_FILE);
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      const key = randomBytes(KEY_BYTES);
      writeSync(fd, key);
      return key;
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST")
      return `cannot create its key ${CACHE_KEY_FILE} (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return (
      `its key ${CACHE_KEY_FILE} cannot be read ` +
      `(${(err as NodeJS.ErrnoException).code === "ELOOP" ? "a symlink" : ((err as NodeJS.ErrnoException).code ?? String(err))})`
    );
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile()) return `its key ${CACHE_KEY_FILE} is not a regular file`;
    if (uid !== undefined && st.uid !== uid) return `its key ${CACHE_KEY_FILE} is owned by another user`;
    if ((st.mode & 0o077) !== 0)
      return `its key ${CACHE_KEY_FILE} has mode ${(st.mode & 0o777).toString(8)}, not 600 (vc did not create it)`;
    if (st.size !== KEY_BYTES) return `its key ${CACHE_KEY_FILE} is not ${KEY_BYTES} bytes`;
    const key = Buffer.alloc(KEY_BYTES);
    if (readSync(fd, key, 0, KEY_BYTES, 0) !== KEY_BYTES) return `its key ${CACHE_KEY_FILE} cannot be read whole`;
    return key;
  } finally {
    closeSync(fd);
  }
}

/** The cache folder made ready: its secret, or why it is not used (the run goes on without a cache). */
export function openCacheDir(dir: string): { key: Buffer } | { problem: string } {
  const problem = prepareCacheDir(dir);
  if (problem) return { problem: `validation cache ${dir} not used: ${problem}` };
  const key = cacheSecret(dir);
  return typeof key === "string" ? { problem: `validation cache ${dir} not used: ${key}` } : { key };
}
