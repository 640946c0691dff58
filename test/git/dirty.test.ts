import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitOf, dirtyRevision, fleetDiffersFromHead, shortRevision } from "../../src/git/dirty.js";
import { resolveSource } from "../../src/pipeline/source.js";
import { TestRepo } from "../support/git-server.js";

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" });

/** Both ways of asking: the git command, and isomorphic-git (where git is not installed, as in vc's image). */
const WAYS = [
  ["git status", {}],
  ["isomorphic-git", { git: false }],
] as const;

describe("git: the revision a local fleet is recorded at", () => {
  let repo: TestRepo;
  beforeEach(() => {
    repo = new TestRepo();
    repo
      .write({
        "clusters/a/values.yaml": "controlPlane: {}\n",
        "policy.yaml": "# policy\n",
        "README.md": "fleet\n",
        ".gitignore": "hydrated/\n",
      })
      .commit("fleet");
  });
  afterEach(() => repo.dispose());

  it(
    "is HEAD while clusters/ and policy.yaml are as committed, whatever else changed (other files, ignored " +
      "output, a look-alike clusters-old/)",
    async () => {
      repo.write({
        "README.md": "changed\n",
        "notes.txt": "untracked\n",
        "hydrated/a/x.yaml": "kind: X\n",
        "clusters-old/z/values.yaml": "x: 1\n",
      });
      for (const [way, opts] of WAYS) expect(await fleetDiffersFromHead(repo.work, opts), way).to.equal(false);
      expect((await resolveSource({ path: repo.work, markDirty: true })).revision).to.equal(repo.head());
    },
  );

  for (const [what, change] of [
    ["a changed cluster file", { "clusters/a/values.yaml": "controlPlane: {statefulSet: {}}\n" }],
    ["a new, untracked cluster folder", { "clusters/b/values.yaml": "controlPlane: {}\n" }],
    ["a deleted cluster file", { "clusters/a/values.yaml": null }],
    ["a changed policy.yaml", { "policy.yaml": "# stricter\n" }],
    ["a new fleet base", { "fleet/values.yaml": "controlPlane: {}\n" }],
  ] as const) {
    it(`is HEAD-dirty with ${what}`, async () => {
      repo.write(change);
      for (const [way, opts] of WAYS) expect(await fleetDiffersFromHead(repo.work, opts), way).to.equal(true);
      const source = await resolveSource({ path: repo.work, markDirty: true });
      expect(source.revision).to.equal(dirtyRevision(repo.head()));
      // Only when asked for: vc diff and vc list keep the commit.
      expect((await resolveSource({ path: repo.work })).revision).to.equal(repo.head());
    });
  }

  it("is HEAD-dirty with a change staged but not committed, and HEAD again once committed", async () => {
    repo.write({ "clusters/a/values.yaml": "controlPlane: {statefulSet: {}}\n" });
    git(repo.work, "add", "-A");
    for (const [way, opts] of WAYS) expect(await fleetDiffersFromHead(repo.work, opts), way).to.equal(true);
    const head = repo.commit("change a");
    expect((await resolveSource({ path: repo.work, markDirty: true })).revision).to.equal(head);
  });

  it("looks at the fleet's own folder when clusters/ sits below the repository's root", async () => {
    const sub = new TestRepo();
    try {
      sub
        .write({
          "fleets/prod/clusters/a/values.yaml": "controlPlane: {}\n",
          "fleets/dev/clusters/b/values.yaml": "controlPlane: {}\n",
        })
        .commit("two fleets");
      sub.write({ "fleets/dev/clusters/b/values.yaml": "controlPlane: {statefulSet: {}}\n" });
      const prod = await resolveSource({ path: join(sub.work, "fleets/prod"), markDirty: true });
      expect(prod.revision).to.equal(sub.head()); // the subfolder finds HEAD of the repository holding it
      expect((await resolveSource({ path: join(sub.work, "fleets/dev"), markDirty: true })).revision).to.equal(
        dirtyRevision(sub.head()),
      );
    } finally {
      sub.dispose();
    }
  });

  it("is local outside git, never dirty", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vc-dirty-"));
    try {
      execFileSync("mkdir", ["-p", join(dir, "clusters/a")]);
      for (const [way, opts] of WAYS) expect(await fleetDiffersFromHead(dir, opts), way).to.equal(false);
      expect((await resolveSource({ path: dir, markDirty: true })).revision).to.equal("local");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    "is never dirty before the first commit, either way; a git that cannot be run leaves it to " + "isomorphic-git",
    async () => {
      const fresh = new TestRepo();
      try {
        fresh.write({ "clusters/a/values.yaml": "controlPlane: {}\n" });
        for (const [way, opts] of WAYS) expect(await fleetDiffersFromHead(fresh.work, opts), way).to.equal(false);
      } finally {
        fresh.dispose();
      }
      repo.write({ "clusters/a/values.yaml": "controlPlane: {statefulSet: {}}\n" });
      expect(await fleetDiffersFromHead(repo.work, { git: "/nonexistent/git" })).to.equal(true);
    },
  );

  it("shows and resolves a dirty revision by its commit", () => {
    const sha = "0123456789abcdef0123456789abcdef01234567";
    expect(commitOf(dirtyRevision(sha))).to.equal(sha);
    expect(commitOf(sha)).to.equal(sha);
    expect(shortRevision(dirtyRevision(sha))).to.equal("0123456789ab-dirty");
    expect(shortRevision(sha)).to.equal("0123456789ab");
    expect(shortRevision(undefined)).to.equal("-");
  });
});
