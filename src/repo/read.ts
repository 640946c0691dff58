// Reads one repository file safely: size limit, symlinks leaving the repository refused, binary and non-UTF-8 content
// rejected.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import { join, sep } from "node:path";

/** Files larger than this are refused unread (1 MiB): no values file or mesh manifest comes close. */
export const MAX_FILE_BYTES = 1024 * 1024;

export type ReadResult = { ok: true; text: string } | { ok: false; code: string; message: string };

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads `rel` (`/`-separated, relative to the real path `realRoot`). A symlink is followed only when its
 * target resolves inside the repository; otherwise it is refused without being opened. `bytesLeft`: what is
 * left of its folder's budget; a larger file is refused unread (`over-budget`).
 */
export function readRepoFile(realRoot: string, rel: string, bytesLeft?: number): ReadResult {
  const abs = join(realRoot, ...rel.split("/"));
  // O_NOFOLLOW: a regular file opens in one call; a symlink fails with ELOOP and is checked before anything is opened.
  // O_NONBLOCK: a FIFO or device opens without waiting, and fstat then refuses it.
  let fd = tryOpen(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  if (typeof fd === "string") {
    if (fd !== "ELOOP") return fail("read", `cannot read file: ${fd}`);
    const target = safeRealpath(abs);
    if (target === undefined) return fail("symlink", "symlink target does not exist");
    if (!isInside(realRoot, target))
      return fail("symlink", "symlink points outside the repository: refused, not followed");
    fd = tryOpen(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (typeof fd === "string") return fail("read", `cannot read file: ${fd}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return fail("read", "not a regular file");
    if (st.size > MAX_FILE_BYTES)
      return fail("file-too-large", `file is ${st.size} bytes, over the limit of ${MAX_FILE_BYTES} bytes (1 MiB)`);
    if (bytesLeft !== undefined && st.size > bytesLeft)
      return fail("over-budget", `this file is ${st.size} bytes and ${Math.max(0, bytesLeft)} were left`);
    const buf = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    return decode(buf.subarray(0, got));
  } catch (err) {
    return fail("read", `cannot read file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  } finally {
    closeSync(fd);
  }
}

/** A file descriptor, or the error code when the file cannot be opened. */
function tryOpen(path: string, flags: number): number | string {
  try {
    return openSync(path, flags);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

/**
 * Text of a buffer, or why it is not YAML text: a NUL byte means binary; invalid UTF-8 is refused. A BOM is dropped.
 */
function decode(buf: Uint8Array): ReadResult {
  if (buf.indexOf(0) >= 0) return fail("binary", "binary content (a NUL byte): not a YAML text file");
  try {
    return { ok: true, text: utf8.decode(buf) };
  } catch {
    return fail("encoding", "content is not valid UTF-8: save the file as UTF-8");
  }
}

/** Whether `target` is `root` or lies below it (both real paths). */
export function isInside(root: string, target: string): boolean {
  return target === root || target.startsWith(root.endsWith(sep) ? root : root + sep);
}

export function safeRealpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function fail(code: string, message: string): ReadResult {
  return { ok: false, code, message };
}
