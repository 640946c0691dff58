// The folder watcher stays bounded at any fleet size: every file of a small fleet, git's refs for a large fleet in a
// checkout, the cluster folders' top level for a large fleet outside git.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FolderSource, WATCH_ALL_FILES_MAX } from "../../src/reconciler/source.js";

function firstCall(): { promise: Promise<string[]>; onChange: (paths: string[]) => void } {
  let resolve!: (p: string[]) => void;
  const promise = new Promise<string[]>((r) => (resolve = r));
  return { promise, onChange: (paths) => resolve(paths) };
}

const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, stdio: "pipe" });

describe("reconciler: folder watch modes", function () {
  this.timeout(60_000);
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-watch-mode-"));
    for (const name of ["a", "b"]) {
      mkdirSync(join(tmp, "clusters", name, "mesh"), { recursive: true });
      writeFileSync(join(tmp, "clusters", name, "values.yaml"), "controlPlane: {}\n");
      writeFileSync(join(tmp, "clusters", name, "mesh", "vs.yaml"), "kind: VirtualService\n");
    }
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it("chooses every file for a small fleet, git's refs for a large one in a checkout, the top level outside git", async () => {
    expect(await new FolderSource(tmp).watchMode()).to.equal("files");
    for (let i = 0; i < WATCH_ALL_FILES_MAX; i++) mkdirSync(join(tmp, "clusters", `c${i}`));
    expect(await new FolderSource(tmp).watchMode()).to.equal("top");
    git(tmp, "init", "-q");
    expect(await new FolderSource(tmp).watchMode()).to.equal("git");
  });

  it("top: a change to a cluster folder's own file is reported with its path", async () => {
    const { promise, onChange } = firstCall();
    const stop = await new FolderSource(tmp).watch(onChange, 50, "top");
    try {
      writeFileSync(join(tmp, "clusters", "b", "values.yaml"), "controlPlane: {statefulSet: {}}\n");
      expect(await promise).to.deep.equal(["clusters/b/values.yaml"]);
    } finally {
      await stop();
    }
  });

  it("git: a commit triggers a pass (the paths come from git), whatever the number of files", async () => {
    git(tmp, "init", "-q", "-b", "main");
    git(tmp, "add", ".");
    git(tmp, "commit", "-qm", "fleet");
    const source = new FolderSource(tmp);
    const before = (await source.sync()).revision;
    const { promise, onChange } = firstCall();
    const stop = await source.watch(onChange, 50, "git");
    try {
      const file = join(tmp, "clusters", "a", "mesh", "vs.yaml");
      writeFileSync(file, `${readFileSync(file, "utf8")}metadata: {name: x}\n`);
      git(tmp, "commit", "-qam", "change a");
      expect(await promise).to.deep.equal([]);
      const after = (await source.sync()).revision;
      expect(await source.changes(before, after)).to.deep.equal(["clusters/a/mesh/vs.yaml"]);
    } finally {
      await stop();
    }
  });
});
