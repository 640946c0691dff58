// `vc apply` on the record: the status and history the reconciler keeps, written by apply with who and which commit.
import { expect } from "chai";
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { hostname, userInfo } from "node:os";
import { APPLYING_ANNOTATION } from "../../src/records/lease.js";
import { join, resolve } from "node:path";
import type { ClusterStatus, Reconciliation } from "../../src/records/status.js";
import type { ListRow } from "../../src/ops/list.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { TestRepo } from "../support/git-server.js";
import { runVc } from "../support/vc.js";
import { fromRecordConfigMap, olderFirst, recordBase } from "../../src/records/record.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { RECORD_PATH, RECORDS_COLLECTION, recordConfigMap, recordConfigMaps } from "../support/records.js";

const FULL = [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }];
const MINIMAL_VALUES = "clusters/minimal/values.yaml";

describe("vc apply on the record (status and history, as the reconciler writes them)", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let repo: TestRepo;
  let kube: string[];

  // The host answers as the current release (SelfSubjectReview) unless a test asks for 1.20.
  async function start(opts: { profile?: "1.20" | "current" } = {}): Promise<void> {
    server = await startKubeServer({
      users: [{ token: "t-alice", rules: FULL, name: "alice" }],
      profile: "current",
      ...opts,
    });
    kube = ["--target", "kube", "--kubeconfig", server.writeKubeconfig({ token: "t-alice" }), "--context", "test"];
  }
  beforeEach(async () => {
    repo = new TestRepo();
    for (const c of ["minimal", "bookinfo"])
      cpSync(resolve("clusters", c), join(repo.work, "clusters", c), { recursive: true });
    repo.commit("fleet");
    await start();
  });
  afterEach(async () => {
    await server.close();
    repo.dispose();
  });

  /**
   * The status of the cluster living in host namespace `ns`, from its record in the records namespace (the oldest
   * claim).
   */
  const statusOf = (ns: string): ClusterStatus | undefined => recordOf(ns)?.status;
  const recordOf = (ns: string) =>
    server
      .list("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE)
      .map(fromRecordConfigMap)
      .filter((r) => r?.hostNamespace === ns)
      .sort((a, b) => olderFirst(a!, b!))[0];
  const recordWrites = () =>
    server.countRequests({ method: "PATCH", path: RECORD_PATH }) +
    server.countRequests({ method: "POST", path: /\/configmaps$/ });
  /** A commit that changes minimal's rendered StatefulSet (its CPU request). */
  const changeMinimal = (cpu: number, commit = true) => {
    repo.write({
      [MINIMAL_VALUES]:
        `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: ${cpu}m\n    ` +
        `    memory: 512Mi\n`,
    });
    return commit ? repo.commit(`minimal: cpu ${cpu}m`) : repo.head();
  };

  it(
    "records every cluster it applied, with the commit and the user the host names (SelfSubjectReview); vc " +
      "status, vc list and vc history show it",
    async () => {
      const head = repo.head();
      const res = await runVc(["apply", repo.work, ...kube]);
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      expect(res.stdout).to.include(
        `recorded 2 cluster(s) at revision ${head.slice(0, 12)} by alice (SelfSubjectReview)`,
      );
      for (const ns of ["vc-minimal", "team-bookinfo"]) {
        const s = statusOf(ns)!;
        expect(s).to.deep.include({
          result: "applied",
          lastAppliedRevision: head,
          lastAttemptedRevision: head,
          lastAppliedBy: "alice",
          lastAppliedVia: "apply",
        });
        expect(s.history).to.have.length(1);
        expect(s.history[0]).to.deep.include({
          revision: head,
          result: "applied",
          via: "apply",
          by: "alice",
          byFrom: "SelfSubjectReview",
        });
        expect(s.history[0]!.counts.created).to.be.greaterThan(5);
        expect(s.owner).to.be.a("string").and.not.equal("");
      }

      const status = await runVc(["status", ...kube]);
      expect(status.stdout).to.match(
        new RegExp(
          `minimal\\s+vc-minimal\\s+applied\\s+${head.slice(0, 12)}\\s+alice \\(vc apply\\)\\s+${head.slice(0, 12)}`,
        ),
      );
      const detail = await runVc(["status", ...kube, "--cluster", "minimal"]);
      expect(detail.stdout)
        .to.include("applied by:        alice (vc apply)")
        .and.match(/applied\s+alice \(vc apply\)\s+\d+\s+0\s+0\s+0\s+0/);

      const list = await runVc([
        "list",
        "--repo",
        repo.work,
        "--kubeconfig",
        kube[3]!,
        "--context",
        "test",
        "-o",
        "json",
      ]);
      expect(list.code, list.stderr).to.equal(0);
      const rows = JSON.parse(list.stdout) as ListRow[];
      expect(rows.find((r) => r.name === "minimal")).to.deep.include({
        lastAppliedRevision: head,
        lastAppliedBy: "alice (vc apply)",
        result: "applied",
      });
      const table = await runVc(["list", "--repo", repo.work, "--kubeconfig", kube[3]!, "--context", "test"]);
      expect(table.stdout).to.match(
        new RegExp(`minimal\\s+vc-minimal\\s+\\S+\\s+\\S+\\s+${head.slice(0, 12)}\\s+alice \\(vc apply\\)\\s+applied`),
      );

      const history = await runVc(["history", "minimal", "--repo", repo.work, ...kube]);
      expect(history.code, history.stderr).to.equal(0);
      expect(history.stdout).to.match(new RegExp(`${head.slice(0, 12)}.*LIVE applied \\S+ by alice \\(vc apply\\)`));
    },
  );

  it(
    "a run that changes nothing adds no record, even at a newer commit (as a full resync); one that changes " +
      "something does",
    async () => {
      const first = repo.head();
      await runVc(["apply", repo.work, ...kube]);
      server.resetRequests();
      repo.write({ "README.md": "a commit that changes no cluster\n" });
      repo.commit("readme");
      const again = await runVc(["apply", repo.work, ...kube]);
      expect(again.code).to.equal(0);
      expect(again.stdout).to.not.include("recorded");
      expect(recordWrites()).to.equal(0);
      expect(server.countRequests({ method: "POST", resource: "selfsubjectreviews" })).to.equal(0); // nobody to name
      expect(statusOf("vc-minimal")!.lastAppliedRevision).to.equal(first);

      const second = changeMinimal(300);
      const changed = await runVc(["apply", repo.work, ...kube]);
      expect(changed.stdout).to.include(`recorded 1 cluster(s) at revision ${second.slice(0, 12)}`);
      const s = statusOf("vc-minimal")!;
      expect(s.history.map((r) => [r.revision, r.counts.updated > 0])).to.deep.equal([
        [second, true],
        [first, false],
      ]);
      expect(statusOf("team-bookinfo")!.history).to.have.length(1);
    },
  );

  it(
    "a work tree that differs from HEAD is recorded as HEAD-dirty; vc history counts it for " + "HEAD's commit",
    async () => {
      await runVc(["apply", repo.work, ...kube]);
      const head = changeMinimal(250, false);
      const res = await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
      expect(res.stdout).to.include(`recorded 1 cluster(s) at revision ${head.slice(0, 12)}-dirty by alice`);
      const s = statusOf("vc-minimal")!;
      expect([s.lastAppliedRevision, s.history[0]!.revision]).to.deep.equal([`${head}-dirty`, `${head}-dirty`]);
      // The objects it wrote say so too.
      const sts = server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal")!;
      expect(sts.metadata.annotations?.["vc.orch.io/revision"]).to.equal(`${head}-dirty`);
      const hist = await runVc(["history", "minimal", "--repo", repo.work, ...kube, "-o", "json"]);
      const h = JSON.parse(hist.stdout) as {
        lastAppliedRevision: string;
        entries: Array<{ commit: string; live: boolean; reconciliations: Reconciliation[] }>;
      };
      expect(h.lastAppliedRevision).to.equal(`${head}-dirty`);
      expect(h.entries[0]).to.deep.include({ commit: head, live: true });
      expect(h.entries[0]!.reconciliations.map((r) => r.revision)).to.deep.equal([`${head}-dirty`, head]);
      const table = await runVc(["history", "minimal", "--repo", repo.work, ...kube]);
      expect(table.stdout)
        .to.include(`live revision ${head.slice(0, 12)}-dirty`)
        .and.include(`at ${head.slice(0, 12)}-dirty`);
    },
  );

  it(
    "on a host without SelfSubjectReview (Kubernetes before 1.27) that confirms nothing, records the kubeconfig's " +
      "user as unverified, and says so",
    async () => {
      await server.close();
      await start({ profile: "1.20" });
      const res = await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
      expect(res.code, res.stdout).to.equal(0);
      expect(res.stdout).to.include("by unverified: user-t-alice (kubeconfig user)");
      expect(statusOf("vc-minimal")!.history[0]).to.deep.include({
        by: "unverified: user-t-alice",
        byFrom: "kubeconfig user",
        via: "apply",
      });
    },
  );

  it("--dry-run writes no record, on a host or in a dir: target", async () => {
    const res = await runVc(["apply", repo.work, ...kube, "--dry-run"]);
    expect(res.code, res.stdout).to.equal(0);
    expect(res.stdout).to.not.include("recorded");
    expect(server.countRequests({ path: /\/configmaps\/vc-(status|history)$/ })).to.equal(0);
    expect(server.countRequests({ method: "POST", resource: "selfsubjectreviews" })).to.equal(0);
    const dir = await runVc(["apply", repo.work, "--target", `dir:${join(repo.work, "out")}`, "--dry-run"]);
    expect(dir.code).to.equal(0);
    expect(existsSync(join(repo.work, "out"))).to.equal(false);
  });

  it("a dir: target records the local account beside the manifests; vc status reads it", async () => {
    const out = join(repo.work, "out");
    const res = await runVc(["apply", repo.work, "--target", `dir:${out}`]);
    expect(res.code, res.stdout).to.equal(0);
    const me = userInfo().username;
    // The local account is no identity a server confirmed.
    expect(res.stdout).to.include(`by unverified: ${me} (local user)`);
    const s = JSON.parse(readFileSync(join(out, ".vc-status", "minimal.json"), "utf8")) as ClusterStatus;
    expect(s).to.deep.include({
      lastAppliedRevision: repo.head(),
      lastAppliedBy: `unverified: ${me}`,
      lastAppliedVia: "apply",
    });
    expect(s.history[0]).to.deep.include({ via: "apply", by: `unverified: ${me}`, byFrom: "local user" });
    const status = await runVc(["status", "--target", `dir:${out}`]);
    expect(status.stdout).to.match(
      new RegExp(`minimal\\s+vc-minimal\\s+applied\\s+[0-9a-f]{12}\\s+unverified: ${me} \\(vc apply\\)`),
    );
  });

  it(
    "never rewrites another owner's status: a cluster another source holds, or whose status it wrote; vc adopt " +
      "takes both over",
    async () => {
      expect((await runVc(["apply", repo.work, ...kube, "--owner", "src-a", "--cluster", "minimal"])).code).to.equal(0);
      const before = recordConfigMap(server, "minimal")!;
      expect(statusOf("vc-minimal")!.owner).to.equal("src-a");

      // B's run is blocked on A's objects: A's status stays as A wrote it.
      const b = await runVc(["apply", repo.work, ...kube, "--owner", "src-b", "--cluster", "minimal"]);
      expect(b.code).to.equal(1);
      expect(b.stdout).to.include("is held by source src-a").and.not.include("recorded");
      expect(recordConfigMap(server, "minimal")!.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);

      // A record C holds of bookinfo, none of whose objects are live: B is refused, C's record stays as C wrote it.
      const cHistory = [
        {
          revision: "c0ffee",
          time: "2030-01-01T00:00:00.000Z",
          durationMs: 1,
          result: "applied",
          counts: { created: 1, updated: 0, deleted: 0, unchanged: 0, failed: 0 },
        },
      ];
      const cRecord = recordBase(DEFAULT_RECORDS_NAMESPACE, "src-c", "bookinfo", "team-bookinfo");
      server.put({
        ...cRecord,
        data: {
          ...(cRecord.data as Record<string, string>),
          result: "applied",
          lastAppliedRevision: "c0ffee",
          history: JSON.stringify(cHistory),
        },
      });
      const rv = recordConfigMap(server, "bookinfo")!.metadata.resourceVersion;
      const onC = await runVc(["apply", repo.work, ...kube, "--owner", "src-b", "--cluster", "bookinfo"]);
      expect(onC.code, onC.stdout).to.equal(1);
      expect(onC.stdout).to.include("! cluster bookinfo is held by source src-c").and.not.include("recorded");
      expect(recordConfigMap(server, "bookinfo")!.metadata.resourceVersion).to.equal(rv);
      expect(server.get("v1", "Namespace", undefined, "team-bookinfo")).to.equal(undefined);

      // vc adopt hands minimal over, status included: recorded as the adoption it is.
      const adopt = await runVc(["adopt", "minimal", repo.work, ...kube, "--owner", "src-b", "--from", "src-a"]);
      expect(adopt.code, adopt.stdout).to.equal(0);
      const adopted = statusOf("vc-minimal")!;
      expect(adopted.owner).to.equal("src-b");
      expect(adopted.history[0]).to.deep.include({ via: "adopt", by: "alice" });
      expect(adopted.history[1]).to.deep.include({ via: "apply", by: "alice" });
      expect(recordConfigMaps(server, "minimal").map((c) => c.metadata.labels?.["vc.orch.io/owner"])).to.deep.equal([
        "src-b",
      ]);
    },
  );

  it(
    "a run that never ended (its apply lease left on the record, its process gone): the next run records the " +
      "revision as live even with nothing to change, and clears the lease",
    async () => {
      const old = repo.head();
      await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
      const head = changeMinimal(410);
      // The run of `head` wrote every object and was killed before its status: its lease is on the record.
      const applied = await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
      expect(applied.code).to.equal(0);
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
      const cm = recordConfigMap(server, "minimal")!;
      const lease = {
        holder: `${hostname()}/${dead}/gone`,
        host: hostname(),
        pid: dead,
        via: "vc apply",
        revision: head,
        renewTime: new Date().toISOString(),
        durationSeconds: 15,
      };
      const rewound = fromRecordConfigMap(cm)!.status!;
      server.put({
        ...cm,
        metadata: { ...cm.metadata, annotations: { [APPLYING_ANNOTATION]: JSON.stringify(lease) } },
        data: {
          ...(cm.data as Record<string, string>),
          lastAppliedRevision: old,
          lastAttemptedRevision: old,
          history: JSON.stringify(rewound.history.slice(1)),
        },
      });
      const rerun = await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
      expect(rerun.code, rerun.stdout + rerun.stderr).to.equal(0);
      expect(rerun.stdout).to.match(/0 created, 0 updated, 0 deleted/);
      const s = statusOf("vc-minimal")!;
      expect(s.lastAppliedRevision).to.equal(head);
      expect(s.history[0]).to.deep.include({ revision: head, result: "applied" });
      expect(s.history[0]!.message).to.match(/never ended \(vc apply of [0-9a-f]{12}.*\): the host is verified/);
      expect(recordConfigMap(server, "minimal")!.metadata.annotations?.[APPLYING_ANNOTATION]).to.equal(undefined);
    },
  );

  it("a record that cannot be written fails the run (exit 2) and says what to grant; nothing is applied", async () => {
    server.faults.add({ method: "PATCH", path: RECORD_PATH, status: 403 });
    server.faults.add({ method: "POST", path: RECORDS_COLLECTION, status: 403 });
    const res = await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
    expect(res.code).to.equal(2);
    // The record of what the run will create (with the run's apply lease) is written before any object: it fails, and
    // nothing is created.
    expect(res.stdout).to.match(
      /failed ConfigMap record of cluster minimal: vc's record of the cluster could not be written: .*403.*\(vc needs get, create and patch on ConfigMaps in the records namespace vc-system\)/,
    );
    expect(server.get("v1", "Namespace", undefined, "vc-minimal")).to.equal(undefined);
    expect(server.get("apps/v1", "StatefulSet", "vc-minimal", "minimal")).to.equal(undefined);
  });

  it(
    "an invalid folder is recorded where the cluster is live (its revision stays), and never creates a namespace " +
      "for a cluster with nothing on the host",
    async () => {
      await runVc(["apply", repo.work, ...kube, "--cluster", "minimal"]);
      const live = repo.head();
      repo.write({
        [MINIMAL_VALUES]: "controlPlane:\n  statefulSet:\n    resourcs: {}\n",
        "clusters/fresh/values.yaml": "controlPlane:\n  statefulSet:\n    resourcs: {}\n",
      });
      const res = await runVc(["apply", repo.work, ...kube]);
      expect(res.code).to.equal(1);
      const s = statusOf("vc-minimal")!;
      expect(s).to.deep.include({ result: "invalid", lastAppliedRevision: live, lastAppliedBy: "alice" });
      expect(s.message).to.match(/^invalid: clusters\/minimal\/values.yaml:3:5: .*; revision [0-9a-f]{12} stays live$/);
      expect(server.get("v1", "Namespace", undefined, "vc-fresh")).to.equal(undefined);
    },
  );

  it("--prune of a removed cluster forgets its record, as the reconciler does", async () => {
    await runVc(["apply", repo.work, ...kube]);
    expect(statusOf("team-bookinfo")).to.not.equal(undefined);
    rmSync(join(repo.work, "clusters", "bookinfo"), { recursive: true });
    repo.commit("remove bookinfo");
    const res = await runVc(["apply", repo.work, ...kube, "--prune", "--allow-mass-prune"]);
    expect(res.code, res.stdout).to.equal(0);
    expect(statusOf("team-bookinfo")).to.equal(undefined);
    expect(statusOf("vc-minimal")).to.not.equal(undefined);
  });

  it(
    "a reconciler pass after vc apply keeps the apply in the history and records its own run as the " + "reconciler's",
    async () => {
      const first = repo.head();
      await runVc(["apply", repo.work, ...kube]);
      const second = changeMinimal(400);
      const rec = await runVc(["reconcile", "--once", "--repo", repo.work, ...kube]);
      expect(rec.code, rec.stdout + rec.stderr).to.equal(0);
      const s = statusOf("vc-minimal")!;
      expect(s.history.map((r) => [r.revision, r.via ?? "reconciler", r.by ?? "-"])).to.deep.equal([
        [second, "reconciler", "-"],
        [first, "apply", "alice"],
      ]);
      expect([s.lastAppliedRevision, s.lastAppliedBy, s.lastAppliedVia]).to.deep.equal([second, undefined, undefined]);
      const status = await runVc(["status", ...kube]);
      expect(status.stdout).to.match(/minimal\s+vc-minimal\s+applied\s+[0-9a-f]{12}\s+reconciler\s/);
    },
  );
});
