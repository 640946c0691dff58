// changedPaths and folderLog over a real repository made with the git CLI.
import { expect } from "chai";
import { changedPaths } from "../../src/git/changes.js";
import { folderLog, headCommit } from "../../src/git/log.js";
import { TestRepo } from "../support/git-server.js";

describe("git changes and folder log", () => {
  let repo: TestRepo;
  beforeEach(() => {
    repo = new TestRepo();
  });
  afterEach(() => repo.dispose());

  it("lists added, modified and deleted files between two commits", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 50; i++) files[`clusters/c${i}/values.yaml`] = `i: ${i}\n`;
    repo.write({ ...files, "README.md": "x\n", "clusters/c1/mesh/vs.yaml": "kind: VirtualService\n" });
    const a = repo.commit("a");
    repo.write({ "clusters/c7/values.yaml": "i: 70\n", "clusters/c1": null, "clusters/new/values.yaml": "n: 1\n" });
    const b = repo.commit("b");
    const paths = await changedPaths({ dir: repo.work, from: a, to: b });
    expect(paths).to.deep.equal([
      "clusters/c1/mesh/vs.yaml",
      "clusters/c1/values.yaml",
      "clusters/c7/values.yaml",
      "clusters/new/values.yaml",
    ]);
    expect(await changedPaths({ dir: repo.work, from: b, to: b })).to.deep.equal([]);
  });

  it("logs the commits that touched a folder, newest first", async () => {
    repo.write({ "clusters/a/values.yaml": "1\n", "clusters/b/values.yaml": "1\n" });
    const c1 = repo.commit("add a and b");
    repo.write({ "clusters/b/values.yaml": "2\n" });
    repo.commit("change b");
    repo.write({ "clusters/a/values.yaml": "2\n" });
    const c3 = repo.commit("change a\n\nbody");
    const log = await folderLog({ dir: repo.work, path: "clusters/a" });
    expect(log.map((e) => e.commit)).to.deep.equal([c3, c1]);
    expect(log[0]).to.include({ subject: "change a", author: "Test" });
    expect(await folderLog({ dir: repo.work, path: "clusters/zzz" })).to.deep.equal([]);
    // A removed folder keeps its history, newest first, down to the commit that removed it.
    repo.write({ "clusters/a": null });
    const gone = repo.commit("remove a");
    repo.write({ "clusters/b/values.yaml": "3\n" });
    repo.commit("change b again");
    expect((await folderLog({ dir: repo.work, path: "clusters/a" })).map((e) => e.commit)).to.deep.equal([
      gone,
      c3,
      c1,
    ]);
    expect(await headCommit(repo.work)).to.equal(repo.head());
  });
});
