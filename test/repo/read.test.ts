import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_FILE_BYTES, readRepoFile } from "../../src/repo/read.js";

describe("repo/read", () => {
  let root: string;
  let outside: string;
  before(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "vc-read-")));
    outside = realpathSync(mkdtempSync(join(tmpdir(), "vc-outside-")));
    mkdirSync(join(root, "clusters/a"), { recursive: true });
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("reads UTF-8 text and drops a BOM", () => {
    writeFileSync(join(root, "clusters/a/values.yaml"), "\uFEFFa: é\n");
    expect(readRepoFile(root, "clusters/a/values.yaml")).to.deep.equal({ ok: true, text: "a: é\n" });
  });

  it("refuses a file over the size limit without reading it", () => {
    writeFileSync(join(root, "clusters/a/big.yaml"), Buffer.alloc(MAX_FILE_BYTES + 1, 0x61));
    const r = readRepoFile(root, "clusters/a/big.yaml");
    expect(r.ok).to.equal(false);
    if (!r.ok) {
      expect(r.code).to.equal("file-too-large");
      expect(r.message).to.contain("1 MiB");
    }
  });

  it("accepts a file of exactly the limit", () => {
    writeFileSync(join(root, "clusters/a/edge.yaml"), Buffer.alloc(MAX_FILE_BYTES, 0x61));
    expect(readRepoFile(root, "clusters/a/edge.yaml").ok).to.equal(true);
  });

  it("rejects binary content (a NUL byte)", () => {
    writeFileSync(join(root, "clusters/a/bin.yaml"), Buffer.from([0x61, 0x3a, 0x00, 0x01]));
    const r = readRepoFile(root, "clusters/a/bin.yaml");
    expect(r).to.include({ ok: false, code: "binary" });
  });

  it("rejects content that is not UTF-8", () => {
    writeFileSync(join(root, "clusters/a/latin1.yaml"), Buffer.from([0x61, 0x3a, 0x20, 0xe9, 0x0a]));
    expect(readRepoFile(root, "clusters/a/latin1.yaml")).to.include({ ok: false, code: "encoding" });
  });

  it("follows a symlink whose target is inside the repository", () => {
    writeFileSync(join(root, "shared.yaml"), "x: 1\n");
    symlinkSync(join(root, "shared.yaml"), join(root, "clusters/a/linked.yaml"));
    expect(readRepoFile(root, "clusters/a/linked.yaml")).to.deep.equal({ ok: true, text: "x: 1\n" });
  });

  it("refuses a symlink pointing outside the repository, without opening the target", () => {
    // The target is a FIFO: opening it would block this test forever, so passing proves it was never followed.
    const fifo = join(outside, "secret.fifo");
    execFileSync("mkfifo", [fifo]);
    symlinkSync(fifo, join(root, "clusters/a/escape.yaml"));
    const r = readRepoFile(root, "clusters/a/escape.yaml");
    expect(r).to.include({ ok: false, code: "symlink" });
    if (!r.ok) expect(r.message).to.contain("outside the repository");
  });

  it("refuses a relative symlink climbing out of the repository", () => {
    writeFileSync(join(outside, "creds.yaml"), "password: x\n");
    symlinkSync(`../../../${outside.split("/").pop()}/creds.yaml`, join(root, "clusters/a/up.yaml"));
    expect(readRepoFile(root, "clusters/a/up.yaml")).to.include({ ok: false, code: "symlink" });
  });

  it("refuses a FIFO inside the repository without blocking on it", () => {
    execFileSync("mkfifo", [join(root, "clusters/a/pipe.yaml")]);
    expect(readRepoFile(root, "clusters/a/pipe.yaml")).to.deep.equal({
      ok: false,
      code: "read",
      message: "not a regular file",
    });
  });

  it("reports a dangling symlink and a missing file as errors", () => {
    symlinkSync(join(root, "nowhere.yaml"), join(root, "clusters/a/dangling.yaml"));
    expect(readRepoFile(root, "clusters/a/dangling.yaml")).to.include({ ok: false, code: "symlink" });
    expect(readRepoFile(root, "clusters/a/missing.yaml")).to.include({ ok: false, code: "read" });
  });
});
