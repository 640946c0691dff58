// The validation workers' heap bound (pool.ts WORKER_LIMITS) admits the largest folders the folder budget admits.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_FOLDER_BUDGET } from "../../src/repo/budget.js";
import { validateFolders, WORKER_LIMITS } from "../../src/validate/pool.js";
import { writeBudgetFolder } from "../support/budget-folder.js";

describe("validate: worker heap limits", function () {
  this.timeout(180_000);

  it("workers with WORKER_LIMITS validate folders that fill the budget, in full, as this thread does", async () => {
    const root = mkdtempSync(join(tmpdir(), "vc-pool-limits-"));
    try {
      const names = ["full-0", "full-1", "full-2"];
      for (const n of names) writeBudgetFolder(root, n, DEFAULT_FOLDER_BUDGET);
      expect(WORKER_LIMITS.maxYoungGenerationSizeMb).to.be.at.most(6);
      // Every folder answered by a worker: one past its heap would end (ERR_WORKER_OUT_OF_MEMORY) and leave it to this
      // thread.
      const inWorkers = await validateFolders(root, names, { jobs: 3, detail: "full", workers: "always" });
      expect(inWorkers.workers).to.equal(2);
      expect(inWorkers.byWorkers).to.equal(names.length);
      const here = await validateFolders(root, names, { jobs: 1, detail: "full" });
      const view = (r: (typeof here.results)[number]) => ({
        name: r.name,
        valid: r.valid,
        errors: r.diagnostics.filter((d) => d.severity === "error").length,
        objects: r.spec?.mesh.length,
      });
      expect(inWorkers.results.map(view)).to.deep.equal(here.results.map(view));
      expect(here.results.every((r) => r.valid && r.spec !== undefined)).to.equal(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
