// Folder budgets: files, bytes and objects of a cluster folder are bounded while it is read; a folder past them is
// refused, located, and the others go on.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_FOLDER_BUDGET, folderBudget, type FolderBudget } from "../../src/repo/budget.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { writeBudgetFolder } from "../support/budget-folder.js";

const SMALL: FolderBudget = { files: 6, bytes: 40_000, objects: 30 };
const policy = (b: Partial<FolderBudget>) =>
  `folderBudget:\n${Object.entries(b)
    .map(([k, v]) => `  ${k}: ${v}\n`)
    .join("")}`;

describe("repo: folder budgets", () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), "vc-budget-"))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it(
    "admits a folder at its budget (files, bytes and objects all met) and refuses one past each of them, located; " +
      "the others go on",
    async () => {
      writeFileSync(join(root, "policy.yaml"), policy(SMALL));
      const at = writeBudgetFolder(root, "at", SMALL);
      expect(at).to.deep.equal({ files: SMALL.files, bytes: SMALL.bytes, objects: SMALL.objects });
      for (const past of ["files", "bytes", "objects"] as const) writeBudgetFolder(root, `past-${past}`, SMALL, past);
      const r = await loadAndValidate(root);
      const byName = new Map(r.clusters.map((c) => [c.name, c]));
      expect(byName.get("at")!.valid, JSON.stringify(byName.get("at")!.diagnostics.slice(0, 3))).to.equal(true);
      for (const past of ["files", "bytes", "objects"]) {
        const c = byName.get(`past-${past}`)!;
        expect(c.valid).to.equal(false);
        expect(c.spec).to.equal(undefined);
        const d = c.diagnostics.filter((x) => x.code === "folder-budget");
        expect(d, past).to.have.length(1);
        expect(d[0]!.severity).to.equal("error");
        expect(d[0]!.message).to.contain(`folderBudget.${past}`);
        expect(d[0]!.file).to.match(new RegExp(`^clusters/past-${past}/`));
      }
      // The object past the budget is located at its document: the last file, the line where that document starts.
      const objects = byName.get("past-objects")!.diagnostics.find((x) => x.code === "folder-budget")!;
      expect(objects.file).to.equal(`clusters/past-objects/mesh/m${String(SMALL.files - 2).padStart(4, "0")}.yaml`);
      expect(objects.line).to.be.greaterThan(1);
    },
  );

  it(
    "stops reading at the file that passes the bytes budget: files after it are not read (an unreadable one is " +
      "not reported)",
    async () => {
      writeFileSync(join(root, "policy.yaml"), policy({ bytes: 1000 }));
      const dir = join(root, "clusters", "c");
      mkdirSync(join(dir, "mesh"), { recursive: true });
      writeFileSync(join(dir, "values.yaml"), "{}\n");
      writeFileSync(join(dir, "mesh", "a.yaml"), `# ${"x".repeat(1200)}\n`);
      writeFileSync(join(dir, "mesh", "b.yaml"), Buffer.from([0x66, 0, 0x66])); // binary: an error if it were read
      const r = await loadAndValidate(root);
      const d = r.clusters[0]!.diagnostics;
      expect(d.map((x) => x.code)).to.deep.equal(["folder-budget"]);
      expect(d[0]!.file).to.equal("clusters/c/mesh/a.yaml");
    },
  );

  it("takes its defaults when policy.yaml does not set them, and the policy's keys one by one", () => {
    expect(folderBudget()).to.deep.equal(DEFAULT_FOLDER_BUDGET);
    expect(folderBudget({ objects: 5 })).to.deep.equal({ ...DEFAULT_FOLDER_BUDGET, objects: 5 });
  });

  it("a policy.yaml with a budget of the wrong type is a located policy error", async () => {
    writeFileSync(join(root, "policy.yaml"), "folderBudget:\n  files: many\n");
    writeBudgetFolder(root, "c", SMALL);
    const r = await loadAndValidate(root);
    const d = r.diagnostics.find((x) => x.file === "policy.yaml")!;
    expect(d).to.include({ severity: "error", line: 2 });
  });

  it(
    "refuses the issue's folder (eight ~1 MiB files, ~70,000 VirtualServices) by its budget, reading no more than " +
      "the budget's bytes",
    async () => {
      const dir = join(root, "clusters", "big", "mesh");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(root, "clusters", "big", "values.yaml"), "{}\n");
      let n = 0;
      for (let f = 0; f < 8; f++) {
        let s = "";
        while (s.length < 1024 * 1024 - 200)
          s +=
            `---\napiVersion: networking.mesh.io/v1beta1\nkind: VirtualService\nmetadata: {name: v${n}}\nspec: ` +
            `{hosts: [h${n++}]}\n`;
        writeFileSync(join(dir, `f${f}.yaml`), s);
      }
      expect(n).to.be.greaterThan(70_000);
      const r = await loadAndValidate(root);
      const d = r.clusters[0]!.diagnostics.filter((x) => x.severity === "error");
      expect(d).to.have.length(1);
      expect(d[0]!.code).to.equal("folder-budget");
    },
  );
});
