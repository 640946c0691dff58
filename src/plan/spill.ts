// Where a fleet report keeps its diff texts: in memory up to a bound, past it in a temporary file read back when
// printed.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Diff text a report holds in memory before the rest goes to a temporary file (a first diff of a large fleet). */
const DIFF_MEMORY_BYTES = 32 * 1024 * 1024;

/**
 * The diff texts of a report a streamed plan keeps until it is printed (vc diff of a fleet: every object of a first
 * diff is a diff of its whole YAML). Up to `memoryBytes` they stay as they are; past it each is written to a
 * temporary file, already unlinked (nothing is left behind, even by a killed process; readable by this user only),
 * and the change's `diff` reads it back when a formatter asks. A file that cannot be made keeps the texts in memory.
 * close() lets the file go: read every diff before.
 */
export class DiffSpill {
  private held = 0;
  private fd: number | undefined;
  private failed = false;
  private end = 0;
  /** Bytes of diff text kept in memory and in the file. */
  readonly bytes = { memory: 0, file: 0 };

  constructor(private readonly memoryBytes = DIFF_MEMORY_BYTES) {}

  /** The change, its `diff` kept in memory or in the file (read back on each access). */
  keep<C extends { diff?: string }>(change: C): C {
    const diff = change.diff;
    if (diff === undefined || diff === "") return change;
    const size = Buffer.byteLength(diff);
    const fd = this.held + size > this.memoryBytes ? this.file() : undefined;
    if (fd === undefined) {
      this.held += size;
      this.bytes.memory += size;
      return change;
    }
    const at = this.end;
    writeSync(fd, diff, at, "utf8");
    this.end += size;
    this.bytes.file += size;
    // A class whose `diff` is read from the file: every such change keeps one fast shape (a property defined on each
    // object would turn it into a dictionary, about 300 bytes more per change).
    const { diff: _d, ...rest } = change;
    return Object.assign(new SpilledChange(fd, at, size), rest) as unknown as C;
  }

  /** Closes the file (the diffs it held can no longer be read). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** The temporary file, made once: opened, then unlinked with its folder. Undefined when it cannot be made. */
  private file(): number | undefined {
    if (this.fd !== undefined || this.failed) return this.fd;
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmpdir(), "vc-diff-"));
      const path = join(dir, "diffs");
      this.fd = openSync(path, "wx+", 0o600);
      unlinkSync(path);
    } catch {
      this.failed = true;
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
    return this.fd;
  }
}

/** A change whose diff text is in the spill's file: read back whole on each access (`diff`, JSON.stringify). */
class SpilledChange {
  readonly #fd: number;
  readonly #at: number;
  readonly #size: number;

  constructor(fd: number, at: number, size: number) {
    this.#fd = fd;
    this.#at = at;
    this.#size = size;
  }

  get diff(): string {
    const buf = Buffer.allocUnsafe(this.#size);
    let read = 0;
    while (read < this.#size) {
      const n = readSync(this.#fd, buf, read, this.#size - read, this.#at + read);
      if (n === 0) throw new Error("the temporary file of the report's diffs was cut short");
      read += n;
    }
    return buf.toString("utf8");
  }

  toJSON(): object {
    return { ...this, diff: this.diff };
  }
}
