// `vc apply`'s memory bound: a first apply of a fleet ten chunks large runs in a heap that applying it at once cannot.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateFleet } from "../../bench/fleet.js";

/**
 * The heap of the child: a first apply of this fleet loaded at once (`--cluster` for every cluster) aborts with heap
 * out of memory at 96 MiB (measured).
 */
const HEAP_MIB = 96;
const CLUSTERS = 1000;

describe("vc apply: memory bound", function () {
  this.timeout(600_000);

  it(
    `applies ${CLUSTERS} clusters (19,000 objects) with a ${HEAP_MIB} MiB heap: memory follows the chunk, not ` +
      `the fleet`,
    async () => {
      const root = mkdtempSync(join(tmpdir(), "vc-apply-memory-"));
      try {
        const repo = join(root, "repo");
        await generateFleet(repo, { clusters: CLUSTERS, meshPerCluster: 5 });
        const child = spawn(
          process.execPath,
          [
            `--max-old-space-size=${HEAP_MIB}`,
            "--max-semi-space-size=2",
            resolve("bin/vc.js"),
            "apply",
            repo,
            "--target",
            `dir:${join(root, "out")}`,
          ],
          {
            stdio: ["ignore", "pipe", "pipe"],
            env: { ...process.env, MALLOC_ARENA_MAX: "2", NO_COLOR: "1" },
          },
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
          child.once("exit", (c, s) => r([c, s])),
        );
        expect(stderr).to.not.match(/heap out of memory|Allocation failed/);
        expect(signal, stderr.slice(-2000)).to.equal(null);
        expect(code, stderr.slice(-2000)).to.equal(0);
        const last = stdout.trimEnd().split("\n").at(-1);
        expect(last).to.match(/^(\d+) created, 0 updated, 0 deleted, 0 unchanged, 0 failed, 0 skipped$/);
        expect(Number(/^(\d+)/.exec(last!)![1])).to.be.greaterThan(CLUSTERS * 15);
        expect(stdout).to.include(`recorded ${CLUSTERS} cluster(s)`);
        expect(readdirSync(join(root, "out")).filter((n) => !n.startsWith("."))).to.have.length(CLUSTERS);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});
