// The reconciler's memory bound: the deployed heap follows the formula, and a reconciler run with the formula's heap on the largest folders the budget admits does not crash.
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadAll } from "js-yaml";
import { DEFAULT_FOLDER_BUDGET } from "../../src/repo/budget.js";
import { DEPLOYED_SHARD_BYTES, heapLimitMiB, NON_HEAP_MIB, shardBytesWithin } from "../../src/reconciler/memory.js";
import { writeBudgetFolder } from "../support/budget-folder.js";

interface Container {
  args: string[];
  env: Array<{ name: string; value?: string }>;
  resources: { requests: { memory: string }; limits: { memory: string } };
}

function deployed(): Container {
  const docs = loadAll(readFileSync("deploy/reconciler/deployment.yaml", "utf8")) as Array<{
    kind: string;
    spec: { template: { spec: { containers: Container[] } } };
  }>;
  return docs.find((d) => d.kind === "Deployment")!.spec.template.spec.containers[0]!;
}

const mebibytes = (q: string): number => Number(/^(\d+)Mi$/.exec(q)![1]);

describe("reconciler: memory bound", function () {
  this.timeout(180_000);

  it("the deployment's heap and memory limit follow the formula for the shard it is sized for", () => {
    const c = deployed();
    const options = c.env.find((e) => e.name === "NODE_OPTIONS")!.value!;
    const heap = Number(/--max-old-space-size=(\d+)/.exec(options)![1]);
    const i = c.args.indexOf("--concurrency");
    const concurrency = i >= 0 ? Number(c.args[i + 1]) : 4;
    expect(heap).to.be.at.least(
      heapLimitMiB({
        budget: DEFAULT_FOLDER_BUDGET,
        concurrency,
        shardBytes: DEPLOYED_SHARD_BYTES,
        clusters: concurrency,
      }),
    );
    expect(shardBytesWithin(heap, DEFAULT_FOLDER_BUDGET, concurrency)).to.be.at.least(DEPLOYED_SHARD_BYTES);
    expect(mebibytes(c.resources.limits.memory)).to.be.at.least(heap + NON_HEAP_MIB);
  });

  it("a reconciler with the formula's heap reconciles `concurrency` folders at the budget and refuses those past it, without crashing", async () => {
    const root = mkdtempSync(join(tmpdir(), "vc-memory-"));
    try {
      const repo = join(root, "repo");
      const concurrency = 4;
      let shardBytes = 0;
      for (let i = 0; i < concurrency; i++)
        shardBytes += writeBudgetFolder(repo, `full-${i}`, DEFAULT_FOLDER_BUDGET).bytes;
      for (const past of ["files", "bytes", "objects"] as const)
        writeBudgetFolder(repo, `past-${past}`, DEFAULT_FOLDER_BUDGET, past);
      // The folder: eight ~1 MiB files of ~70,000 small VirtualServices (it killed the reconciler).
      mkdirSync(join(repo, "clusters", "issue", "mesh"), { recursive: true });
      writeFileSync(join(repo, "clusters", "issue", "values.yaml"), "{}\n");
      for (let f = 0, n = 0; f < 8; f++) {
        let s = "";
        while (s.length < 1024 * 1024 - 200)
          s += `---\napiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata: {name: v${n}}\nspec: {hosts: [h${n++}]}\n`;
        writeFileSync(join(repo, "clusters", "issue", "mesh", `f${f}.yaml`), s);
      }
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
          cwd: repo,
          stdio: "pipe",
        });
      git("init", "-q", "-b", "main");
      git("add", "-A");
      git("commit", "-qm", "fleet");
      const heap = heapLimitMiB({ budget: DEFAULT_FOLDER_BUDGET, concurrency, shardBytes, clusters: concurrency });
      const child = spawn(
        process.execPath,
        [
          `--max-old-space-size=${heap}`,
          "--max-semi-space-size=2",
          resolve("bin/vc.js"),
          "reconcile",
          "--once",
          "--repo",
          repo,
          "--target",
          `dir:${join(root, "out")}`,
          "--cache-dir",
          join(root, "cache"),
          "--concurrency",
          String(concurrency),
        ],
        { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, MALLOC_ARENA_MAX: "2", NO_COLOR: "1" } },
      );
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
        child.once("exit", (c, s) => r([c, s])),
      );
      expect(out).to.not.match(/heap out of memory|Allocation failed/);
      expect(signal, out.slice(-2000)).to.equal(null);
      expect(code, out.slice(-2000)).to.equal(1); // invalid clusters
      expect(out).to.match(new RegExp(`reconciled 8 clusters at \\w+ in \\d+ ms: ${concurrency} applied, 4 invalid`));
      for (const name of ["past-files", "past-bytes", "past-objects", "issue"])
        expect(out).to.match(new RegExp(`${name}: invalid .*folderBudget`));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
