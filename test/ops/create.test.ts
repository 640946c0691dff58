// vc create: validation, refusal of existing names, the commit on a new branch (checked with the git CLI), --apply to
// the test server.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { KubeClient } from "../../src/host/client.js";
import { RecordStore } from "../../src/records/store.js";
import { defaultOwner } from "../../src/model/owner.js";
import { tempDir, vc } from "./helpers.js";

const EXAMPLES = resolve(import.meta.dirname, "../../clusters");

function gitRepo(): string {
  const dir = tempDir("vc-create-");
  cpSync(join(EXAMPLES, "minimal"), join(dir, "clusters/team-a"), { recursive: true });
  const g = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });
  g("init", "-q", "-b", "main");
  g("config", "user.name", "Platform Bot");
  g("config", "user.email", "bot@example.com");
  g("add", ".");
  g("commit", "-q", "-m", "initial");
  return dir;
}

const git = (dir: string, ...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" }).trim();

describe("ops: vc create", function () {
  this.timeout(120_000);
  let server: KubeServer;
  let values: string;
  before(async () => {
    server = await startKubeServer();
    const dir = tempDir();
    values = join(dir, "values.yaml");
    writeFileSync(
      values,
      "controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: 200m\n        memory: 512Mi\n",
    );
    writeFileSync(join(dir, "bad.yaml"), "controlPlane:\n  statefulSet:\n    replicas: many\n");
  });
  after(async () => server?.close());

  it(
    "commits the folder alone on create/<name> without switching branches: the checked-out branch, index and " +
      "files stay",
    async () => {
      const repo = gitRepo();
      writeFileSync(join(repo, "notes.txt"), "untracked, must stay out of the commit\n");
      writeFileSync(join(repo, "staged.txt"), "staged, must stay out of the commit and staged\n");
      git(repo, "add", "staged.txt");
      const r = await vc(["create", "team-c", "-n", "tenants-c", "-f", values, "--repo", repo]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(
        /^committed clusters\/team-c\/values.yaml and clusters\/team-c\/cluster.yaml on branch create\/team-c \(commit [0-9a-f]{12}\); your checked-out branch was not switched: git switch create\/team-c to see the files\n/,
      );
      expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).to.equal("main");
      expect(git(repo, "status", "--porcelain")).to.equal("A  staged.txt\n?? notes.txt");
      expect(existsSync(join(repo, "clusters/team-c"))).to.equal(false);
      expect(git(repo, "show", "--name-only", "--format=%an <%ae>%n%s", "create/team-c").split("\n")).to.deep.equal([
        "Platform Bot <bot@example.com>",
        "Add virtual cluster team-c (namespace tenants-c)",
        "",
        "clusters/team-c/cluster.yaml",
        "clusters/team-c/values.yaml",
      ]);
      expect(git(repo, "rev-parse", "create/team-c~1")).to.equal(git(repo, "rev-parse", "main"));
      // The rest of the tree is main's, unchanged.
      expect(git(repo, "diff", "--name-only", "main", "create/team-c")).to.equal(
        "clusters/team-c/cluster.yaml\nclusters/team-c/values.yaml",
      );
      expect(git(repo, "show", "create/team-c:clusters/team-c/values.yaml")).to.equal(
        readFileSync(values, "utf8").trimEnd(),
      );
      expect(git(repo, "show", "create/team-c:clusters/team-c/cluster.yaml")).to.contain("namespace: tenants-c");
      git(repo, "stash", "-q");
      git(repo, "switch", "-q", "create/team-c");
      const validate = await vc(["validate", repo]);
      expect(validate.code, validate.stdout + validate.stderr).to.equal(0);
    },
  );

  it("applies vc validate's namespace rules: kube-system, default and the reconciler's refused", async () => {
    const repo = gitRepo();
    const refused = await vc(["create", "team-k", "-n", "kube-system", "-f", values, "--repo", repo]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('host namespace "kube-system" belongs to the host cluster itself');
    expect(existsSync(join(repo, "clusters/team-k"))).to.equal(false);
    expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).to.equal("main");
    for (const ns of ["default", "vc-system"]) {
      const refusedToo = await vc(["create", "team-d", "-n", ns, "-f", values, "--repo", repo]);
      expect(refusedToo.code, refusedToo.stderr).to.equal(1);
      expect(refusedToo.stderr).to.contain(`host namespace "${ns}"`);
      expect(existsSync(join(repo, "clusters/team-d"))).to.equal(false);
    }
  });

  it(
    "refuses an existing name, a taken namespace and invalid values (with located messages), writing " + "nothing",
    async () => {
      const repo = gitRepo();
      const head = git(repo, "rev-parse", "HEAD");
      const existing = await vc(["create", "team-a", "-n", "other", "-f", values, "--repo", repo]);
      expect(existing.code).to.equal(1);
      expect(existing.stderr).to.equal(
        "error: clusters/team-a already exists: choose another name (vc list shows the clusters)\n",
      );
      const taken = await vc(["create", "team-z", "-n", "vc-team-a", "-f", values, "--repo", repo]);
      expect(taken.stderr).to.contain("namespace vc-team-a is already the host namespace of team-a");
      const bad = await vc(["create", "team-d", "-n", "tenants-d", "-f", join(values, "../bad.yaml"), "--repo", repo]);
      expect(bad.code).to.equal(1);
      expect(bad.stderr).to.match(/bad\.yaml:3:\d+: error: .*replicas/);
      expect(bad.stderr).to.contain("is not a valid values file; nothing was written");
      expect(existsSync(join(repo, "clusters/team-d"))).to.equal(false);
      expect(git(repo, "rev-parse", "HEAD")).to.equal(head);
      expect(git(repo, "branch", "--list")).to.equal("* main");
      const badName = await vc(["create", "Team_F", "-n", "x", "-f", values, "--repo", repo]);
      expect(badName.code).to.equal(1);
    },
  );

  it("--apply applies the committed cluster to the host at once, the checked-out branch unchanged", async () => {
    const repo = gitRepo();
    const r = await vc([
      "create",
      "team-g",
      "-n",
      "tenants-g",
      "-f",
      values,
      "--repo",
      repo,
      "--apply",
      "--kubeconfig",
      server.kubeconfigPath,
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/applied \d+ object\(s\) of team-g to test/);
    const sts = server.get("apps/v1", "StatefulSet", "tenants-g", "team-g");
    expect(sts?.metadata.annotations?.["vc.orch.io/revision"]).to.equal(git(repo, "rev-parse", "create/team-g"));
    expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD")).to.equal("main");
  });

  /** A repository with an origin, so that its owner name is derived as in CI. */
  const ORIGIN = "https://git.example.com/acme/fleet.git";
  function originRepo(): { repo: string; g: (...args: string[]) => string } {
    const repo = gitRepo();
    const g = (...args: string[]) => git(repo, ...args);
    g("remote", "add", "origin", ORIGIN);
    return { repo, g };
  }

  /** Merges create/<name> and commits a change of the cluster's values on main, as the pull request's next change. */
  function mergeAndChange(repo: string, g: (...args: string[]) => string, name: string): void {
    g("merge", "-q", `create/${name}`);
    writeFileSync(
      join(repo, `clusters/${name}/values.yaml`),
      "controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: 300m\n        memory: 512Mi\n",
    );
    g("commit", "-q", "-am", `more cpu for ${name}`);
  }

  /** The data of the records of `cluster` in the records namespace. */
  const records = (cluster: string): Array<Record<string, string>> =>
    server
      .list("v1", "ConfigMap", "vc-system")
      .filter((c) => c.metadata.labels?.["vc.orch.io/record"] === "record")
      .map((c) => (c.data ?? {}) as Record<string, string>)
      .filter((d) => d.cluster === cluster);

  it("--apply records the cluster under this source as vc apply does: the merged branch's apply finds it", async () => {
    const { repo, g } = originRepo();
    const kc = ["--kubeconfig", server.kubeconfigPath];
    const kube = ["--target", "kube", ...kc];
    const created = await vc(["create", "x4", "-n", "vc-x4", "-f", values, "--repo", repo, "--apply", ...kc]);
    expect(created.code, created.stdout + created.stderr).to.equal(0);
    const owner = defaultOwner(ORIGIN);
    // One record, this source's, in the records namespace; nothing of vc's in the cluster's own host namespace.
    expect(records("x4").map((d) => d.source)).to.deep.equal([owner]);
    expect(server.list("v1", "ConfigMap", "vc-x4").map((c) => c.metadata.name)).to.deep.equal([]);
    const status = await vc(["status", "--cluster", "x4", "--target", "kube", ...kube, "-o", "json"]);
    expect(status.code, status.stderr).to.equal(0);
    expect(status.stdout).to.contain(g("rev-parse", "create/x4"));
    mergeAndChange(repo, g, "x4");
    const applied = await vc(["apply", repo, "--cluster", "x4", ...kube]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    expect(applied.stdout).to.contain("updated StatefulSet vc-x4/x4");
    expect(records("x4").map((d) => d.source)).to.deep.equal([owner]);
  });

  it("vc adopt --from '' takes over a record written with no source name, which held the cluster", async () => {
    const { repo, g } = originRepo();
    const kc = ["--kubeconfig", server.kubeconfigPath];
    const kube = ["--target", "kube", ...kc];
    const created = await vc(["create", "x5", "-n", "vc-x5", "-f", values, "--repo", repo, "--apply", ...kc]);
    expect(created.code, created.stdout + created.stderr).to.equal(0);
    const owner = defaultOwner(ORIGIN);
    // The record an older vc create --apply left: the same inventory under no source name, and none of this source.
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath });
    try {
      const store = new RecordStore(client);
      const mine = ((await store.read(owner, "x5")) ?? (await store.read("", "x5")))!;
      await store.writeInventory("", "x5", "vc-x5", mine.inventory);
      await store.forget(owner, "x5");
    } finally {
      client.close();
    }
    expect(records("x5").map((d) => d.source)).to.deep.equal([""]);
    mergeAndChange(repo, g, "x5");
    const adopted = await vc(["adopt", "x5", repo, "--from", "", ...kube]);
    expect(adopted.code, adopted.stdout + adopted.stderr).to.equal(0);
    expect(adopted.stdout).to.contain(`cluster x5 is now owned by ${owner}`);
    // The record without a source is gone; this source's holds every object the other held.
    expect(records("x5").map((d) => d.source)).to.deep.equal([owner]);
    expect(JSON.parse(records("x5")[0]!.inventory!)).to.include("apps/StatefulSet/vc-x5/x5");
    const again = await vc(["apply", repo, "--cluster", "x5", ...kube]);
    expect(again.code, again.stdout + again.stderr).to.equal(0);
    expect(server.get("apps/v1", "StatefulSet", "vc-x5", "x5")?.metadata.annotations?.["vc.orch.io/revision"]).to.equal(
      g("rev-parse", "HEAD"),
    );
  });
});
