// The folder watcher stays bounded at any fleet size: every file of a small fleet, git's refs for a large fleet in a
// checkout, the cluster folders' top level for a large fleet outside git.
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { affectedClusters } from "../../src/reconciler/affected.js";
import { FolderSource, WATCH_ALL_FILES_MAX } from "../../src/reconciler/source.js";

function firstCall(): { promise: Promise<string[]>; onChange: (paths: string[]) => void } {
  let resolve!: (p: string[]) => void;
  const promise = new Promise<string[]>((r) => (resolve = r));
  return { promise, onChange: (paths) => resolve(paths) };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, stdio: "pipe" });

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

  it(
    "chooses every file for a small fleet, git's refs for a large one in a checkout, the top level " + "outside git",
    async () => {
      expect(await new FolderSource(tmp).watchMode()).to.equal("files");
      for (let i = 0; i < WATCH_ALL_FILES_MAX; i++) mkdirSync(join(tmp, "clusters", `c${i}`));
      expect(await new FolderSource(tmp).watchMode()).to.equal("top");
      git(tmp, "init", "-q");
      expect(await new FolderSource(tmp).watchMode()).to.equal("git");
    },
  );

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

  it(
    "top: a cluster folder added, removed or moved away is reported as that cluster; a file in clusters/ is no " +
      "cluster",
    async () => {
      const source = new FolderSource(tmp);
      for (const [change, cluster] of [
        [() => mkdirSync(join(tmp, "clusters", "c", "mesh"), { recursive: true }), "c"],
        [() => rmSync(join(tmp, "clusters", "a"), { recursive: true }), "a"],
        [() => renameSync(join(tmp, "clusters", "b"), join(tmp, "b-moved")), "b"],
      ] as const) {
        const { promise, onChange } = firstCall();
        const stop = await source.watch(onChange, 50, "top");
        try {
          writeFileSync(join(tmp, "clusters", "README.md"), "not a cluster\n");
          change();
          expect(affectedClusters(await promise)).to.deep.equal([cluster]);
        } finally {
          await stop();
        }
      }
    },
  );

  it("top: a folder added while watched is watched too; nothing deeper than a folder's own entries is", async () => {
    const { promise: added, onChange: onAdded } = firstCall();
    let next = onAdded;
    const stop = await new FolderSource(tmp).watch((paths) => next(paths), 50, "top");
    try {
      mkdirSync(join(tmp, "clusters", "c", "mesh"), { recursive: true });
      expect(affectedClusters(await added)).to.deep.equal(["c"]);
      const { promise, onChange } = firstCall();
      next = onChange;
      // Under mesh/ is below the top level (it waits for the resync); the values file of the new folder is seen.
      writeFileSync(join(tmp, "clusters", "a", "mesh", "vs.yaml"), "kind: VirtualService\nmetadata: {name: x}\n");
      writeFileSync(join(tmp, "clusters", "c", "mesh", "vs.yaml"), "kind: VirtualService\n");
      writeFileSync(join(tmp, "clusters", "c", "values.yaml"), "controlPlane: {}\n");
      expect(await promise).to.deep.equal(["clusters/c/values.yaml"]);
    } finally {
      await stop();
    }
  });

  it(
    "top: 3,000 cluster folders hold one inotify watch each, within a 24 MiB heap (chokidar needed 25 " + "MiB more)",
    async function () {
      if (process.platform !== "linux") this.skip(); // inotify and /proc are Linux's; the watch itself is tested above
      const clusters = 3000;
      for (let i = 0; i < clusters - 2; i++) {
        mkdirSync(join(tmp, "clusters", `c${i}`, "mesh"), { recursive: true });
        writeFileSync(join(tmp, "clusters", `c${i}`, "values.yaml"), "controlPlane: {}\n");
        writeFileSync(join(tmp, "clusters", `c${i}`, "mesh", "vs.yaml"), "kind: VirtualService\n");
      }
      const child = spawn(
        process.execPath,
        ["--max-old-space-size=24", "--import", "tsx", resolve("test/support/top-watch-child.ts"), tmp],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => child.once("exit", r));
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = await lines.next();
      expect(first.done, `the watcher died: ${stderr}`).to.equal(false);
      // clusters/ and each folder: nothing under mesh/ and no file is watched on its own.
      expect(JSON.parse(first.value as string).watches).to.equal(clusters + 1);
      writeFileSync(join(tmp, "clusters", "c7", "cluster.yaml"), "namespace: vc-c7\n");
      const second = await lines.next();
      expect(second.done, `the watcher died: ${stderr}`).to.equal(false);
      expect(JSON.parse(second.value as string).paths).to.deep.equal(["clusters/c7/cluster.yaml"]);
      expect(await exited).to.equal(0);
    },
  );

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
