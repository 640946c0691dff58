// One owner per cluster: two sources against one host (the API test server). Each source's records (records
// namespace) say what it holds, the older record wins; a source never updates, adopts or prunes what another holds and
// reports the conflict per cluster; vc adopt hands a cluster over explicitly.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetLocation } from "../../src/git/origin.js";
import type { KubeObject } from "../../src/kube/object.js";
import { canonicalRepo, chooseOwner, defaultOwner, ownerProblem } from "../../src/model/owner.js";
import { buildPlan } from "../../src/plan/build.js";
import { reconcileOnce } from "../../src/reconciler/service.js";
import { silentLogger } from "../../src/model/log.js";
import { LABELS } from "../../src/translate/keys.js";
import { INVENTORY_TYPES } from "../../src/sinks/kube/target.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";
import { recordConfigMap, recordConfigMaps, recordData } from "../support/records.js";

const OWNER = LABELS.owner;
/** Every object of the kinds vc applies, on the test server. */
const allObjects = (s: KubeServer): KubeObject[] =>
  INVENTORY_TYPES.flatMap((t) => s.list(t.group ? `${t.group}/${t.version}` : t.version, t.kind));
const writesIn = (s: KubeServer, ns: string) =>
  s.requests.filter((r) => ["PATCH", "PUT", "POST", "DELETE"].includes(r.method) && r.namespace === ns).length;
const deletes = (s: KubeServer) => s.requests.filter((r) => r.method === "DELETE").length;

describe("owner names", () => {
  it("derive one name per repository and folder, whatever the URL's spelling, and a label value", () => {
    const a = defaultOwner("https://github.com/acme/fleet.git");
    expect(a).to.match(/^fleet-[0-9a-f]{10}$/);
    expect(ownerProblem(a)).to.equal(undefined);
    for (const same of [
      "https://token:x@GitHub.com/acme/fleet",
      "git@github.com:acme/fleet.git",
      "http://github.com/acme/fleet/",
      "ssh://github.com/acme/fleet.git".replace("ssh://", "https://"),
    ]) {
      expect(defaultOwner(same), same).to.equal(a);
    }
    expect(canonicalRepo("git@github.com:acme/fleet.git")).to.equal("github.com/acme/fleet");
    expect(defaultOwner("https://github.com/acme/other")).to.not.equal(a);
    expect(defaultOwner("https://github.com/acme/fleet", "envs/prod")).to.match(/^fleet-envs-prod-[0-9a-f]{10}$/);
    expect(defaultOwner("https://github.com/acme/fleet", "envs/prod")).to.not.equal(
      defaultOwner("https://github.com/acme/fleet", "envs/stage"),
    );
    expect(ownerProblem(defaultOwner(`https://example.com/${"x".repeat(200)}`, "y".repeat(100)))).to.equal(undefined);
  });

  it("--owner, then $VC_OWNER, then the default; an invalid name is refused", () => {
    const loc = { repo: "https://github.com/acme/fleet", subdir: "" };
    const saved = process.env.VC_OWNER;
    try {
      delete process.env.VC_OWNER;
      expect(chooseOwner(undefined, loc)).to.equal(defaultOwner(loc.repo));
      process.env.VC_OWNER = "from-env";
      expect(chooseOwner(undefined, loc)).to.equal("from-env");
      expect(chooseOwner("from-flag", loc)).to.equal("from-flag");
      expect(() => chooseOwner("no spaces", loc)).to.throw(/invalid owner name "no spaces" \(--owner\)/);
    } finally {
      if (saved === undefined) delete process.env.VC_OWNER;
      else process.env.VC_OWNER = saved;
    }
  });

  it(
    "a local checkout has the owner name of its origin remote (vc apply in CI and the reconciler agree); without " +
      "one, its folder's",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "vc-owner-git-"));
      try {
        execFileSync("git", ["init", "-q", dir]);
        execFileSync("mkdir", ["-p", join(dir, "fleets", "prod", "clusters")]);
        expect(await fleetLocation(join(dir, "fleets", "prod"))).to.deep.equal({
          repo: `file:${dir}`,
          subdir: "fleets/prod",
        });
        execFileSync("git", ["-C", dir, "remote", "add", "origin", "git@github.com:acme/fleet.git"]);
        const loc = await fleetLocation(join(dir, "fleets", "prod"));
        expect(defaultOwner(loc.repo, loc.subdir)).to.equal(
          defaultOwner("https://github.com/acme/fleet", "fleets/prod"),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("plan: ownership (pure)", () => {
  const obj = (name: string, owner?: string): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "ns", labels: { [LABELS.inventory]: "c", ...(owner ? { [OWNER]: owner } : {}) } },
    data: { a: "1" },
  });
  it(
    "labels what it applies, refuses a cluster another owner holds (empty plan), keeps unowned objects from " +
      "prune, and adopts when told",
    () => {
      const mine = buildPlan("c", [obj("x")], [obj("x", "a")], { prune: true, allowMassPrune: true, owner: "a" });
      expect(mine.counts).to.deep.include({ unchanged: 1 });
      const theirs = buildPlan("c", [obj("x")], [obj("x", "b"), obj("y", "a")], {
        prune: true,
        allowMassPrune: true,
        owner: "a",
      });
      expect(theirs.changes).to.deep.equal([]);
      expect(theirs.ownerConflict).to.deep.equal(["b"]);
      expect(theirs.blocked)
        .to.include(
          "cluster c is owned by another source: its live objects carry vc.orch.io/owner=b (this source is a)",
        )
        .and.include("vc adopt c --from b");
      const legacy = buildPlan("c", [obj("x")], [obj("x"), obj("old")], {
        prune: true,
        allowMassPrune: true,
        owner: "a",
      });
      expect(legacy.changes.map((c) => `${c.action} ${c.ref.name}`)).to.deep.equal(["update x"]);
      expect(legacy.changes[0]!.desired!.metadata.labels![OWNER]).to.equal("a");
      expect(legacy.retained!.map((r) => r.ref.name)).to.deep.equal(["old"]);
      const adopt = buildPlan("c", [obj("x")], [obj("x", "b"), obj("old", "b"), obj("older")], {
        prune: true,
        allowMassPrune: true,
        owner: "a",
        adoptFrom: ["b"],
      });
      expect(adopt.changes.map((c) => `${c.action} ${c.ref.name}`)).to.deep.equal([
        "update x",
        "delete older",
        "delete old",
      ]);
      const neutral = buildPlan("c", [obj("x")], [obj("x", "b")], { prune: true, allowMassPrune: true });
      expect(neutral.counts.unchanged, "without an owner of its own a run keeps the live owner").to.equal(1);
    },
  );
});

describe("two sources on one host", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let a: string;
  let b: string;
  let kube: string[];

  beforeEach(async () => {
    server = await startKubeServer();
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    a = exampleRepo(["minimal", "bookinfo"]);
    // B claims minimal too (other values), and has platform.
    b = exampleRepo(["platform"], {
      "clusters/minimal/values.yaml": "controlPlane:\n  statefulSet:\n    replicas: 2\n",
    });
  });
  afterEach(async () => {
    await server.close();
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  });

  const apply = (repo: string, owner: string, ...extra: string[]) =>
    runVc(["apply", repo, ...kube, "--owner", owner, ...extra]);
  const liveOwners = (ns: string) =>
    new Set(
      allObjects(server)
        .filter((o) => o.metadata.namespace === ns || o.metadata.name === ns)
        .map((o) => o.metadata.labels?.[OWNER]),
    );

  it(
    "records the owner on every object; the other source neither updates nor prunes it and reports the conflict; " +
      "other clusters go on",
    async () => {
      expect((await apply(a, "team-a")).code).to.equal(0);
      const inventory = allObjects(server).filter((o) => o.metadata.labels?.[LABELS.inventory]);
      expect(inventory.length).to.be.greaterThan(20);
      expect(inventory.every((o) => o.metadata.labels![OWNER] === "team-a")).to.equal(true);

      server.resetRequests();
      const bRun = await apply(b, "team-b", "--prune", "--allow-mass-prune");
      expect(bRun.code).to.equal(1);
      expect(bRun.stdout)
        .to.include("! cluster minimal is held by source team-a (its record since")
        .and.include("this source (team-b) is refused");
      expect(bRun.stdout).to.include("vc adopt minimal --from team-a");
      expect(bRun.stdout).to.match(/cluster platform: \d+ created/);
      expect(bRun.stdout, "A's bookinfo is not B's to prune, nor to report").to.not.include("bookinfo");
      expect(writesIn(server, "vc-minimal")).to.equal(0);
      expect(deletes(server)).to.equal(0);
      expect((server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal") as any).spec.replicas).to.equal(1);
      expect(liveOwners("vc-platform")).to.deep.equal(new Set(["team-b"]));

      const diff = await runVc(["diff", b, ...kube, "--owner", "team-b", "--prune"]);
      expect(diff.stdout).to.include("cluster minimal is held by source team-a");

      // A, pruning with the mass-prune guard off, leaves B's platform alone.
      server.resetRequests();
      const aRun = await apply(a, "team-a", "--prune", "--allow-mass-prune");
      expect(aRun.code, aRun.stdout).to.equal(0);
      expect(deletes(server)).to.equal(0);
      expect(aRun.stdout).to.not.include("platform");
    },
  );

  it(
    "vc adopt hands a cluster over: B takes minimal from A (its version applied, every object relabelled); then A " +
      "leaves it alone, even with its folder removed",
    async () => {
      await apply(a, "team-a");
      await apply(b, "team-b");
      const wrong = await runVc(["adopt", "minimal", b, ...kube, "--owner", "team-b", "--from", "someone-else"]);
      expect(wrong.code).to.equal(1);
      expect(wrong.stdout).to.include("cluster minimal is held by source team-a");
      const adopted = await runVc(["adopt", "minimal", b, ...kube, "--owner", "team-b", "--from", "team-a", "--prune"]);
      expect(adopted.code, adopted.stdout + adopted.stderr).to.equal(0);
      expect(adopted.stdout).to.include("cluster minimal is now owned by team-b");
      expect(liveOwners("vc-minimal")).to.deep.equal(new Set(["team-b"]));
      expect((server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal") as any).spec.replicas).to.equal(2);

      const aRun = await apply(a, "team-a");
      expect(aRun.stdout).to.include("cluster minimal is held by source team-b");
      // The hand-over moved the record: team-a holds nothing of minimal any more, team-b its history too.
      expect(recordConfigMaps(server, "minimal").map((c) => c.metadata.labels![OWNER])).to.deep.equal(["team-b"]);
      rmSync(join(a, "clusters", "minimal"), { recursive: true });
      server.resetRequests();
      const pruned = await apply(a, "team-a", "--prune", "--allow-mass-prune");
      expect(pruned.code, pruned.stdout).to.equal(0);
      expect(deletes(server)).to.equal(0);
      expect(server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal")).to.not.equal(undefined);
    },
  );

  it(
    "objects applied before owners and records: vc's own are migrated into the record, a look-alike is neither " +
      "taken nor pruned",
    async () => {
      expect((await runVc(["apply", a, ...kube, "--cluster", "minimal"], { env: { VC_OWNER: "" } })).code).to.equal(0);
      // A host as an older vc left it: no records, no owner labels.
      for (const c of server.list("v1", "ConfigMap", "vc-system"))
        server.remove("v1", "ConfigMap", "vc-system", c.metadata.name);
      for (const o of allObjects(server).filter((x) => x.metadata.labels?.[LABELS.inventory] === "minimal")) {
        const { [OWNER]: _gone, ...labels } = o.metadata.labels!;
        server.put({ ...o, metadata: { ...o.metadata, labels } });
      }
      // Someone else's ConfigMap carrying the inventory label (vc's field manager never wrote it).
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "leftover",
          namespace: "vc-minimal",
          labels: { [LABELS.inventory]: "minimal", [LABELS.managedBy]: "minimal" },
        },
        data: {},
      });
      const run = await apply(a, "team-a", "--cluster", "minimal", "--prune");
      expect(run.code, run.stdout + run.stderr).to.equal(0);
      expect(run.stderr).to.include("cluster minimal: migrated vc's record from host namespace vc-minimal");
      expect(run.stdout).to.not.include("leftover");
      expect(server.get("v1", "ConfigMap", "vc-minimal", "leftover")).to.not.equal(undefined);
      expect(recordData(server, "minimal")!.inventory as string).to.not.include("leftover");
      expect(
        (server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal") as KubeObject).metadata.labels![OWNER],
      ).to.equal("team-a");
    },
  );

  it(
    "reconcilers of two sources: B's never rewrites A's status nor prunes A's clusters, and reports the " + "conflict",
    async () => {
      const cfg = (repo: string, owner: string) => ({
        repo,
        branch: "main",
        target: "kube",
        kubeconfig: server.kubeconfigPath,
        context: "test",
        intervalMs: 60_000,
        resyncMs: 60_000,
        leaderElect: false,
        allowMassPrune: true,
        owner,
        logger: silentLogger,
        cacheDir: join(repo, ".cache"),
      });
      const first = await reconcileOnce(cfg(a, "team-a"));
      expect(first.clusters.map((c) => `${c.cluster}:${c.result}`)).to.deep.equal([
        "bookinfo:applied",
        "minimal:applied",
      ]);
      const status = recordConfigMap(server, "minimal")!;
      expect(status.metadata.labels![OWNER]).to.equal("team-a");
      server.resetRequests();
      const second = await reconcileOnce(cfg(b, "team-b"));
      const by = new Map(second.clusters.map((c) => [c.cluster, c]));
      expect(by.get("minimal")!.result).to.equal("blocked");
      expect(by.get("minimal")!.message).to.include("cluster minimal is held by source team-a");
      expect(by.get("minimal")!.statusWritten).to.equal(false);
      expect(by.has("bookinfo"), "A's cluster is not B's: B has no record of it, so never prunes it").to.equal(false);
      expect(by.get("platform")!.result).to.equal("applied");
      expect(writesIn(server, "vc-minimal") + writesIn(server, "team-bookinfo")).to.equal(0);
      expect(recordConfigMap(server, "minimal")!.metadata.resourceVersion).to.equal(status.metadata.resourceVersion);
      expect(recordConfigMap(server, "platform")!.metadata.labels![OWNER]).to.equal("team-b");
    },
  );
});
