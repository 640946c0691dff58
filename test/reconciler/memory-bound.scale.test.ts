// The reconciler's memory bound: the deployed heap follows the formula, and a reconciler run with the formula's heap on
// the largest folders the budget admits does not crash.
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadAll } from "js-yaml";
import { DEFAULT_FOLDER_BUDGET } from "../../src/repo/budget.js";
import { DEPLOYED_SHARD_BYTES, heapLimitMiB, NON_HEAP_MIB, shardBytesWithin } from "../../src/reconciler/memory.js";
import { writeAliasFolder, writeBudgetFolder } from "../support/budget-folder.js";

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

  it(
    "a reconciler under the Deployment's own flags reconciles the worst folders the budgets admit and refuses " +
      "those past them, its peak memory within the Deployment's limit",
    async () => {
      const root = mkdtempSync(join(tmpdir(), "vc-memory-"));
      try {
        const repo = join(root, "repo");
        // The Deployment's own flags: its NODE_OPTIONS and environment, its --concurrency (4 when it sets none).
        const c = deployed();
        const nodeOptions = c.env.find((e) => e.name === "NODE_OPTIONS")!.value!;
        const deployedEnv = Object.fromEntries(
          c.env.filter((e) => e.value !== undefined && e.name !== "NODE_OPTIONS").map((e) => [e.name, e.value!]),
        );
        const at = c.args.indexOf("--concurrency");
        const concurrency = at >= 0 ? Number(c.args[at + 1]) : 4;
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
            s +=
              `---\napiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata: {name: v${n}}\nspec: ` +
              `{hosts: [h${n++}]}\n`;
          writeFileSync(join(repo, "clusters", "issue", "mesh", `f${f}.yaml`), s);
        }
        // Issue #38's folder three times over (2 MiB of long strings repeated by 123,750 aliases each): refused. The
        // worst a folder may do with aliases: just under their byte budget (1,000 repeats of 1,000 characters).
        for (let i = 0; i < 3; i++)
          writeAliasFolder(repo, `aliases-${i}`, { files: 10, docs: 125, anchorBytes: 1000, aliases: 99 });
        writeAliasFolder(repo, "aliases-admitted", { files: 2, docs: 5, anchorBytes: 1000, aliases: 100 });
        const git = (...args: string[]) =>
          execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
            cwd: repo,
            stdio: "pipe",
          });
        git("init", "-q", "-b", "main");
        git("add", "-A");
        git("commit", "-qm", "fleet");
        expect(
          heapLimitMiB({ budget: DEFAULT_FOLDER_BUDGET, concurrency, shardBytes, clusters: concurrency }),
        ).to.be.at.most(Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)![1]));
        const usageFile = join(root, "usage.json");
        const child = spawn(
          process.execPath,
          [
            ...nodeOptions.split(/\s+/),
            "--import",
            resolve("bench/usage-hook.mjs"),
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
          {
            stdio: ["ignore", "pipe", "pipe"],
            env: { ...process.env, ...deployedEnv, NO_COLOR: "1", VC_BENCH_USAGE_FILE: usageFile },
          },
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
        expect(out).to.match(
          new RegExp(`reconciled 12 clusters at \\w+ in \\d+ ms: ${concurrency + 1} applied, 7 invalid`),
        );
        for (const name of ["past-files", "past-bytes", "past-objects", "issue"])
          expect(out).to.match(new RegExp(`${name}: invalid .*folderBudget`));
        for (let i = 0; i < 3; i++) expect(out).to.match(new RegExp(`aliases-${i}: invalid .*extra bytes`));
        const peak = (JSON.parse(readFileSync(usageFile, "utf8")) as { maxRssKiB: number }).maxRssKiB / 1024;
        expect(peak, "peak resident MiB").to.be.at.most(mebibytes(c.resources.limits.memory));
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});
