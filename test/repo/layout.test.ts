import { expect } from "chai";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { findRepoRoot, listClusterFiles, listClusterFolders, namedClusterFolders } from "../../src/repo/layout.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { cleanupRepos, makeRepo } from "../validate/fixture.js";

describe("repo/layout", () => {
  after(cleanupRepos);

  it("finds the root from the root, clusters/, a cluster folder and below it", () => {
    const root = realpathSync(makeRepo({ "clusters/a/values.yaml": "{}\n", "clusters/a/mesh/x.yaml": "" }));
    expect(findRepoRoot(root)).to.deep.equal({ root });
    expect(findRepoRoot(join(root, "clusters"))).to.deep.equal({ root });
    expect(findRepoRoot(join(root, "clusters/a"))).to.deep.equal({ root, cluster: "a" });
    expect(findRepoRoot(join(root, "clusters/a/mesh"))).to.deep.equal({ root, cluster: "a" });
    expect(findRepoRoot("/")).to.equal(undefined);
  });

  it(
    "looks up named cluster folders one by one as the listing reports them, and nothing of the rest of " + "clusters/",
    async () => {
      const root = realpathSync(
        makeRepo({
          "clusters/a/values.yaml": "{}\n",
          "clusters/b/values.yaml": "{}\n",
          "clusters/c/values.yaml": "{}\n",
          "clusters/README.md": "",
          "clusters/.git/x": "",
        }),
      );
      symlinkSync("/etc", join(root, "clusters", "evil"));
      const listed = listClusterFolders(root);
      const wanted = ["c", "a", "a", "evil", "README.md", "missing", ".git", "../clusters/b", ""];
      const named = namedClusterFolders(root, wanted);
      expect(named.names).to.deep.equal(["a", "c"]);
      expect(named.diagnostics).to.deep.equal(
        listed.diagnostics.filter((d) => ["clusters/evil", "clusters/README.md"].includes(d.file)),
      );
      expect(named.diagnostics.map((d) => d.file).sort()).to.deep.equal(["clusters/README.md", "clusters/evil"]);
      // Unlisted entries are not reported for a chunk; unknown names still are, as for any named load.
      expect(namedClusterFolders(root, ["b"])).to.deep.equal({ names: ["b"], diagnostics: [] });
      const chunk = await loadAndValidate(root, {
        clusters: ["a", "missing"],
        namespaceClaims: new Map(),
        detail: "summary",
      });
      expect(chunk.clusters.map((c) => c.name)).to.deep.equal(["a"]);
      expect(chunk.diagnostics.map((d) => [d.file, d.code])).to.deep.equal([["clusters/missing", "unknown-cluster"]]);
      const whole = await loadAndValidate(root, { clusters: ["a", "missing"], detail: "summary" });
      expect(whole.clusters).to.deep.equal(chunk.clusters);
      expect(whole.diagnostics.map((d) => d.file))
        .to.include("clusters/evil")
        .and.include("clusters/README.md");
    },
  );

  it("orders values.yaml first, then values.*.yaml by name, and lists mesh files recursively", () => {
    const root = makeRepo({
      "clusters/a/values.prod.yaml": "",
      "clusters/a/values.yaml": "",
      "clusters/a/values.ci.yaml": "",
      "clusters/a/cluster.yaml": "",
      "clusters/a/mesh/z.yaml": "",
      "clusters/a/mesh/team/b.yml": "",
      "clusters/a/mesh/README.md": "",
      "clusters/a/notes.txt": "",
      "clusters/a/.gitkeep": "",
    });
    const f = listClusterFiles(root, "a");
    expect(f.values).to.deep.equal([
      "clusters/a/values.yaml",
      "clusters/a/values.ci.yaml",
      "clusters/a/values.prod.yaml",
    ]);
    expect(f.clusterFile).to.equal("clusters/a/cluster.yaml");
    expect(f.mesh).to.deep.equal(["clusters/a/mesh/team/b.yml", "clusters/a/mesh/z.yaml"]);
    expect(f.diagnostics.map((d) => [d.file, d.severity])).to.deep.equal([
      ["clusters/a/mesh/README.md", "warning"],
      ["clusters/a/notes.txt", "warning"],
    ]);
  });

  it("does not follow symlinked folders: an error outside the repository, a warning inside", () => {
    const root = makeRepo({ "clusters/a/values.yaml": "", "clusters/b/values.yaml": "", "clusters/a/mesh/x.yaml": "" });
    symlinkSync("/etc", join(root, "clusters/a/mesh/etc"));
    symlinkSync(join(root, "clusters/b"), join(root, "clusters/a/mesh/b"));
    const f = listClusterFiles(root, "a");
    expect(f.mesh).to.deep.equal(["clusters/a/mesh/x.yaml"]);
    expect(f.diagnostics.map((d) => [d.file, d.severity, d.code])).to.deep.equal([
      ["clusters/a/mesh/b", "warning", "symlink"],
      ["clusters/a/mesh/etc", "error", "symlink"],
    ]);
  });

  it("lists cluster folders and reports stray files and escaping symlinks under clusters/", () => {
    const root = makeRepo({ "clusters/b/values.yaml": "", "clusters/a/values.yaml": "", "clusters/README.md": "" });
    mkdirSync(join(root, "clusters/.hidden"));
    symlinkSync("/tmp", join(root, "clusters/tmp"));
    const l = listClusterFolders(root);
    expect(l.names).to.deep.equal(["a", "b"]);
    expect(l.diagnostics.map((d) => [d.file, d.severity])).to.deep.equal([
      ["clusters/README.md", "warning"],
      ["clusters/tmp", "error"],
    ]);
  });
});
