// Work a hostile repository can cause is bounded: alias expansion per file and per cluster, findings per file, failures
// per cluster.
import { expect } from "chai";
import { MAX_FILE_BYTES } from "../../src/repo/read.js";
import {
  MAX_CLUSTER_ALIAS_BYTES,
  MAX_CLUSTER_ALIAS_NODES,
  MAX_FILE_ALIAS_BYTES,
  MAX_FILE_ALIAS_NODES,
} from "../../src/repo/yaml.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAliasFolder } from "../support/budget-folder.js";
import { MAX_FINDINGS_PER_FILE } from "../../src/validate/finding.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { validateValuesDocument } from "../../src/validate/values.js";
import { cleanupRepos, makeRepo, MESH_ON, smallBomb, VS } from "./fixture.js";

/** `count` documents of `doc(i)`, as one multi-document file. */
function stream(count: number, doc: (i: number) => string): string {
  return Array.from({ length: count }, (_, i) => doc(i)).join("---\n");
}

describe("validate: budgets", () => {
  after(cleanupRepos);

  it(
    "refuses a ~1 MB mesh file of thousands of small alias bombs with a located error; other clusters " + "stay valid",
    async () => {
      const count = Math.floor((MAX_FILE_BYTES - 1024) / (smallBomb(99_999).length + 4));
      expect(count).to.be.greaterThan(3500);
      const root = makeRepo({
        "clusters/bomb/values.yaml": MESH_ON,
        "clusters/bomb/mesh/bombs.yaml": stream(count, smallBomb),
        "clusters/fine/values.yaml": MESH_ON,
        "clusters/fine/mesh/vs.yaml": VS("reviews"),
      });
      const r = await loadAndValidate(root);
      const bomb = r.clusters.find((c) => c.name === "bomb")!;
      expect(bomb.spec).to.equal(undefined);
      const d = bomb.diagnostics.find((x) => x.code === "yaml-alias-bomb")!;
      expect(d).to.include({ file: "clusters/bomb/mesh/bombs.yaml", severity: "error" });
      expect(d.line).to.be.greaterThan(1);
      expect(d.message).to.contain(String(MAX_FILE_ALIAS_NODES));
      expect(r.clusters.find((c) => c.name === "fine")!.spec).to.not.equal(undefined);
    },
  );

  it(
    "#38.2: bounds the bytes aliases repeat: issue #38's 2 MiB folder of long aliased strings is refused, one " +
      "under the budget is valid",
    async () => {
      const root = mkdtempSync(join(tmpdir(), "vc-alias-bytes-"));
      try {
        // Within the file, byte, document and alias-node budgets; 123,750 aliases of a 1,000-character string.
        const issue = writeAliasFolder(root, "issue", { files: 10, docs: 125, anchorBytes: 1000, aliases: 99 });
        expect(issue.bytes).to.be.below(2 * 1024 * 1024);
        // Under both budgets: 1,000 aliases of 1,000 characters, over two files.
        writeAliasFolder(root, "under", { files: 2, docs: 5, anchorBytes: 1000, aliases: 100 });
        const r = await loadAndValidate(root);
        const bomb = r.clusters.find((c) => c.name === "issue")!;
        expect(bomb.valid).to.equal(false);
        const d = bomb.diagnostics.find((x) => x.code === "yaml-alias-bomb")!;
        expect(d.message).to.contain(String(MAX_FILE_ALIAS_BYTES)).and.contain("bytes");
        expect(d.file).to.match(/^clusters\/issue\/mesh\/a\d\.yaml$/);
        expect(r.clusters.find((c) => c.name === "under")!.valid, JSON.stringify(r.diagnostics)).to.equal(true);
        // Every file under the per-file budget, together over the cluster's: the file that crosses it is refused.
        writeAliasFolder(root, "spread", { files: 3, docs: 5, anchorBytes: 1000, aliases: 80 });
        const spread = (await loadAndValidate(root, { clusters: ["spread"] })).clusters[0]!;
        expect(spread.valid).to.equal(false);
        expect(spread.diagnostics.find((x) => x.code === "yaml-alias-bomb")!.message).to.contain(
          String(MAX_CLUSTER_ALIAS_BYTES),
        );
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );

  it(
    "counts alias expansion across the files of a cluster: the file crossing the cluster's budget is " + "refused",
    async () => {
      // Each file stays under the per-file budget; together they pass the cluster's.
      const perFile = Math.floor(MAX_FILE_ALIAS_NODES / 7_600) - 1;
      const files = Math.ceil(MAX_CLUSTER_ALIAS_NODES / (perFile * 7_100)) + 1;
      const repo: Record<string, string> = { "clusters/c/values.yaml": MESH_ON };
      for (let f = 0; f < files; f++)
        repo[`clusters/c/mesh/f${f}.yaml`] = stream(perFile, (i) => smallBomb(f * 100 + i));
      const r = await loadAndValidate(makeRepo(repo));
      const c = r.clusters[0]!;
      expect(c.spec).to.equal(undefined);
      const bombs = c.diagnostics.filter((x) => x.code === "yaml-alias-bomb");
      expect(bombs.length).to.be.greaterThan(0);
      expect(bombs[0]!.message).to.contain(String(MAX_CLUSTER_ALIAS_NODES));
      expect(bombs[0]!.file).to.match(/^clusters\/c\/mesh\/f\d+\.yaml$/);
      expect(bombs[0]!.file).to.not.equal("clusters/c/mesh/f0.yaml");
    },
  );

  it(
    "a self-referencing alias makes its own cluster invalid with file:line; the other clusters are still " +
      "validated",
    async () => {
      const root = makeRepo({
        "clusters/loop/values.yaml": MESH_ON,
        "clusters/loop/mesh/vs.yaml": `${VS("reviews")}  extra: &x\n    b: *x\n`,
        "clusters/other/values.yaml": MESH_ON,
        "clusters/other/mesh/vs.yaml": VS("ratings"),
      });
      const r = await loadAndValidate(root);
      const loop = r.clusters.find((c) => c.name === "loop")!;
      expect(loop.spec).to.equal(undefined);
      expect(loop.diagnostics).to.deep.include({
        file: "clusters/loop/mesh/vs.yaml",
        line: 13,
        col: 8,
        severity: "error",
        code: "yaml-alias-cycle",
        message: "a YAML alias refers to the collection that contains it (a self-referencing alias): refused",
      });
      expect(r.clusters.find((c) => c.name === "other")!.spec).to.not.equal(undefined);
    },
  );

  it("reports at most the first problems of a values file with 45,000 unknown keys, then how many more", async () => {
    const text = `${Array.from({ length: 45_000 }, (_, i) => `unknownKey${i}: ${i}`).join("\n")}\n`;
    const r = await loadAndValidate(makeRepo({ "clusters/big/values.yaml": text }));
    expect(r.diagnostics).to.have.length(MAX_FINDINGS_PER_FILE + 1);
    const more = r.diagnostics.find((d) => d.code === "too-many-problems")!;
    expect(more).to.include({ file: "clusters/big/values.yaml", severity: "error" });
    expect(more.message).to.match(/^44900 more problems in this file are not shown/);
    expect(r.diagnostics.filter((d) => d.code === "schema").map((d) => d.line)).to.deep.equal(
      Array.from({ length: 100 }, (_, i) => i + 1),
    );
    // The standalone check (vc create -f) is bounded the same way.
    expect(validateValuesDocument(text, "v.yaml")).to.have.length(MAX_FINDINGS_PER_FILE + 1);
  });

  it("bounds the findings of a mesh file across its documents", async () => {
    const doc = (i: number): string => `${VS(`s${i}`)}  unknownField${i}: 1\n`;
    const r = await loadAndValidate(
      makeRepo({ "clusters/m/values.yaml": MESH_ON, "clusters/m/mesh/many.yaml": stream(250, doc) }),
    );
    const file = r.diagnostics.filter((d) => d.file === "clusters/m/mesh/many.yaml");
    expect(file).to.have.length(MAX_FINDINGS_PER_FILE + 1);
    expect(file.find((d) => d.code === "too-many-problems")).to.include({
      severity: "warning",
      message: "150 more problems in this file are not shown (only the first 100 are): fix those and validate again",
    });
  });
});
