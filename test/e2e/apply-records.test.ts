// vc apply on the record against a real API server: who (a token user, a client certificate, a ServiceAccount), which
// commit, read back by vc history, vc list and vc status; the history beyond 10 runs; a reconciler pass after it; a
// cluster suspended at run time (as vc restore suspends it) left alone.
import type { KubeObject } from "../../src/kube/object.js";
import { fromRecordConfigMap, olderFirst } from "../../src/records/record.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { dump } from "js-yaml";
import type { ListRow } from "../../src/ops/list.js";
import type { ClusterStatus, Reconciliation } from "../../src/records/status.js";
import { resumeCluster, suspendCluster } from "../../src/records/suspend.js";
import { KubeClient } from "../../src/host/client.js";
import { TestRepo } from "../support/git-server.js";
import { servesSelfSubjectReview, useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

const USERS = ["alice", "bob"];

describe("e2e: vc apply on the record, on a real API server", function () {
  this.timeout(180_000);
  const kube = useRealKube({ users: USERS.map((name) => ({ name })) });
  let repo: TestRepo;
  /** Whether the server's discovery lists SelfSubjectReview (1.27+): then every identity is the server's answer. */
  let selfReview = false;

  const grantAdmin = async (kind: "User" | "ServiceAccount", name: string, namespace?: string) => {
    const subject = kind === "User" ? { apiGroup: "rbac.authorization.k8s.io", kind, name } : { kind, name, namespace };
    const res = await kube().request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `e2e-admin-${name.replace(/[^a-z0-9-]/g, "-")}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [subject],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };
  /** The status of the cluster in host namespace `ns`: its record in the records namespace (the oldest claim). */
  const statusOf = async (ns: string): Promise<ClusterStatus | undefined> => {
    const res = await kube().request<{ items: KubeObject[] }>(
      "GET",
      `/api/v1/namespaces/vc-system/configmaps?labelSelector=${encodeURIComponent(`vc.orch.io/record=record,vc.orch.io/host-namespace=${ns}`)}`,
    );
    if (res.status !== 200) return undefined;
    const records = res.body.items.map(fromRecordConfigMap).filter((r) => r !== undefined);
    return records.sort(olderFirst)[0]?.status;
  };
  const apply = (kubeconfig: string, ...args: string[]) =>
    runVc(["apply", repo.work, "--target", "kube", "--kubeconfig", kubeconfig, ...args]);
  const changeMinimal = (cpu: number) =>
    repo.write({
      "clusters/minimal/values.yaml":
        `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        ` + `cpu: ${cpu}m\n`,
    });

  before(async () => {
    for (const u of USERS) await grantAdmin("User", u);
    selfReview = await servesSelfSubjectReview(kube());
    repo = new TestRepo();
    cpSync(resolve("clusters/minimal"), join(repo.work, "clusters/minimal"), { recursive: true });
    repo.commit("fleet");
  });
  after(() => repo?.dispose());

  it(
    "vc apply as a token user records the user and the commit; vc history, vc list and vc status " + "show them",
    async () => {
      const head = repo.head();
      const res = await apply(kube().kubeconfigFor("alice"));
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      // Kubernetes 1.20 serves no SelfSubjectReview: alice (cluster-admin) may create a TokenReview of her own token.
      const from = selfReview ? "SelfSubjectReview" : "TokenReview";
      expect(res.stdout).to.include(`recorded 1 cluster(s) at revision ${head.slice(0, 12)} by alice (${from})`);
      const s = (await statusOf("vc-minimal"))!;
      expect(s).to.deep.include({
        result: "applied",
        lastAppliedRevision: head,
        lastAppliedBy: "alice",
        lastAppliedVia: "apply",
      });
      expect(s.history[0]).to.deep.include({ revision: head, via: "apply", by: "alice", byFrom: from });
      // Discovery first: no self-review is sent to a server that does not serve one (it would be a 403 for alice).
      const reviews = kube()
        .writes("alice")
        .filter((w) => w.resource === "selfsubjectreviews");
      expect(reviews.map((w) => w.code)).to.deep.equal(selfReview ? [201] : []);
      // And nothing refused on the way: the TokenReview was sent because a SelfSubjectAccessReview said it is allowed.
      expect(
        kube()
          .writes("alice")
          .filter((w) => /review/.test(w.resource ?? "") && w.code >= 400),
      ).to.deep.equal([]);

      const history = await runVc([
        "history",
        "minimal",
        "--repo",
        repo.work,
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigPath,
      ]);
      expect(history.code, history.stderr).to.equal(0);
      expect(history.stdout).to.match(new RegExp(`${head.slice(0, 12)} .*LIVE applied \\S+ by alice \\(vc apply\\)`));
      const list = await runVc(["list", "--repo", repo.work, "--kubeconfig", kube().kubeconfigPath, "-o", "json"]);
      expect(list.code, list.stderr).to.equal(0);
      expect((JSON.parse(list.stdout) as ListRow[]).find((r) => r.name === "minimal")).to.deep.include({
        lastAppliedRevision: head,
        lastAppliedBy: "alice (vc apply)",
      });
      const table = await runVc(["list", "--repo", repo.work, "--kubeconfig", kube().kubeconfigPath]);
      expect(table.stdout).to.match(
        new RegExp(`minimal\\s+vc-minimal\\s+.*${head.slice(0, 12)}\\s+alice \\(vc apply\\)\\s+applied`),
      );
      const status = await runVc(["status", "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
      expect(status.stdout).to.match(/minimal\s+vc-minimal\s+applied\s+[0-9a-f]{12}\s+alice \(vc apply\)/);
    },
  );

  it("a differing work tree is recorded as HEAD-dirty; another source's run leaves the record as it is", async () => {
    changeMinimal(250);
    const res = await apply(kube().kubeconfigFor("bob"));
    expect(res.code, res.stdout).to.equal(0);
    const s = (await statusOf("vc-minimal"))!;
    expect(s.history[0]).to.deep.include({ revision: `${repo.head()}-dirty`, by: "bob" });
    expect(s.lastAppliedRevision).to.equal(`${repo.head()}-dirty`);

    const before = kube().writes("bob").length;
    changeMinimal(260);
    const other = await apply(kube().kubeconfigFor("bob"), "--owner", "someone-else");
    expect(other.code).to.equal(1);
    expect(other.stdout).to.include("is held by source");
    expect(
      kube()
        .writes("bob")
        .slice(before)
        .filter((w) => w.resource === "configmaps"),
      "no record written",
    ).to.deep.equal([]);
    repo.write({ "clusters/minimal/values.yaml": readFileSync(resolve("clusters/minimal/values.yaml"), "utf8") });
  });

  it("names a client certificate's CN (accepted by the server) and a ServiceAccount (its TokenReview)", async () => {
    // A client certificate signed by the server's CA: CN is the user name, O a group.
    const pki = join(kube().dir, "pki");
    const p = (f: string) => join(pki, f);
    execFileSync(
      "openssl",
      [
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        p("carol.key"),
        "-out",
        p("carol.csr"),
        "-subj",
        "/O=devs/CN=carol",
      ],
      { stdio: "pipe" },
    );
    execFileSync(
      "openssl",
      [
        "x509",
        "-req",
        "-in",
        p("carol.csr"),
        "-CA",
        p("ca.crt"),
        "-CAkey",
        p("ca.key"),
        "-CAcreateserial",
        "-out",
        p("carol.crt"),
        "-days",
        "1",
        "-extfile",
        p("client.cnf"),
      ],
      { stdio: "pipe" },
    );
    const carol = join(kube().dir, "kubeconfig-carol");
    writeFileSync(
      carol,
      dump({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "e2e",
            cluster: { server: kube().url, "certificate-authority-data": readFileSync(p("ca.crt")).toString("base64") },
          },
        ],
        users: [
          {
            name: "carol-entry",
            user: {
              "client-certificate-data": readFileSync(p("carol.crt")).toString("base64"),
              "client-key-data": readFileSync(p("carol.key")).toString("base64"),
            },
          },
        ],
        contexts: [{ name: "e2e", context: { cluster: "e2e", user: "carol-entry" } }],
        "current-context": "e2e",
      }),
    );
    await grantAdmin("User", "carol");
    changeMinimal(270);
    const byCert = await apply(carol, "--cluster", "minimal");
    expect(byCert.code, byCert.stdout + byCert.stderr).to.equal(0);
    expect((await statusOf("vc-minimal"))!.history[0]).to.deep.include({
      by: "carol",
      byFrom: selfReview ? "SelfSubjectReview" : "client certificate",
    });

    expect((await kube().kubectl(["create", "namespace", "ci"])).code).to.equal(0);
    const sa = await kube().serviceAccountKubeconfig("ci", "deployer");
    await grantAdmin("ServiceAccount", "deployer", "ci");
    changeMinimal(280);
    const bySa = await apply(sa, "--cluster", "minimal");
    expect(bySa.code, bySa.stdout + bySa.stderr).to.equal(0);
    expect((await statusOf("vc-minimal"))!.history[0]).to.deep.include({
      by: "system:serviceaccount:ci:deployer",
      byFrom: selfReview ? "SelfSubjectReview" : "TokenReview",
    });
  });

  it(
    "keeps the history beyond 10 runs beside the record, within --history-limit; vc status --cluster " + "reads it all",
    async () => {
      const before = (await statusOf("vc-minimal"))!.history.length;
      for (let i = 0; i < 12 - before; i++) {
        changeMinimal(300 + i);
        repo.commit(`cpu ${300 + i}m`);
        const res = await apply(kube().kubeconfigFor("alice"), "--history-limit", "11");
        expect(res.code, res.stdout).to.equal(0);
      }
      const archives = await kube().request<{ items: Array<{ data: Record<string, string> }> }>(
        "GET",
        `/api/v1/namespaces/vc-system/configmaps?labelSelector=${encodeURIComponent("vc.orch.io/record=history,vc.orch.io/managed-by=minimal")}`,
      );
      expect(archives.status).to.equal(200);
      expect(archives.body.items).to.have.length(1);
      expect(JSON.parse(archives.body.items[0]!.data.history!) as Reconciliation[]).to.have.length(1);
      // Nothing of vc's record in the host namespace, where the syncer writes.
      expect((await kube().request("GET", "/api/v1/namespaces/vc-minimal/configmaps/vc-history")).status).to.equal(404);
      const status = await runVc([
        "status",
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigPath,
        "--cluster",
        "minimal",
        "-o",
        "json",
      ]);
      const s = JSON.parse(status.stdout) as ClusterStatus;
      expect(s.history).to.have.length(11);
      expect(s.history[0]).to.deep.include({ revision: repo.head(), by: "alice" });
    },
  );

  it("a reconciler pass after vc apply keeps the history and adds its own run", async () => {
    const before = (
      await runVc([
        "status",
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigPath,
        "--cluster",
        "minimal",
        "-o",
        "json",
      ])
    ).stdout;
    const kept = (JSON.parse(before) as ClusterStatus).history;
    changeMinimal(400);
    const commit = repo.commit("cpu 400m");
    const rec = await runVc([
      "reconcile",
      "--once",
      "--repo",
      repo.work,
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigPath,
      "--history-limit",
      "11",
    ]);
    expect(rec.code, rec.stdout + rec.stderr).to.equal(0);
    const after = JSON.parse(
      (
        await runVc([
          "status",
          "--target",
          "kube",
          "--kubeconfig",
          kube().kubeconfigPath,
          "--cluster",
          "minimal",
          "-o",
          "json",
        ])
      ).stdout,
    ) as ClusterStatus;
    expect(after.history[0]).to.deep.include({ revision: commit, result: "applied" });
    expect(after.history[0]!.via).to.equal(undefined);
    expect(after.history.slice(1)).to.deep.equal(kept.slice(0, 10));
    const history = await runVc([
      "history",
      "minimal",
      "--repo",
      repo.work,
      "--target",
      "kube",
      "--kubeconfig",
      kube().kubeconfigPath,
    ]);
    expect(history.stdout)
      .to.match(new RegExp(`${commit.slice(0, 12)} .*LIVE applied \\S+ by reconciler`))
      .and.match(/by alice \(vc apply\)/);
  });

  it(
    "leaves a cluster suspended at run time (as vc restore does) alone: no write at all, exit 1; once resumed, vc " +
      "apply applies it",
    async () => {
      const reason = "vc restore oci://registry.example/backups/minimal:1 at 2030-01-01T00:00:00Z";
      const client = KubeClient.open({ kubeconfig: kube().kubeconfigPath });
      try {
        await suspendCluster(client, "minimal", "vc-minimal", reason);
        changeMinimal(450);
        const commit = repo.commit("cpu 450m");
        const before = kube().writes("alice").length;
        const res = await apply(kube().kubeconfigFor("alice"));
        expect(res.code, res.stdout + res.stderr).to.equal(1);
        expect(res.stdout).to.include(
          `cluster minimal: suspended by ${reason} (run-time), left alone; vc apply --ignore-suspension to apply anyway`,
        );
        expect(kube().writes("alice").slice(before), "writes of a run that left the cluster alone").to.deep.equal([]);
        const diff = await runVc([
          "diff",
          repo.work,
          "--target",
          "kube",
          "--kubeconfig",
          kube().kubeconfigFor("alice"),
          "--exit-code",
        ]);
        expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
        expect(diff.stdout).to.include(`cluster minimal: suspended by ${reason} (run-time), not planned`);

        await resumeCluster(client, "minimal", "vc-minimal");
        const resumed = await apply(kube().kubeconfigFor("alice"));
        expect(resumed.code, resumed.stdout + resumed.stderr).to.equal(0);
        const written = kube().writes("alice").slice(before);
        expect(
          written.filter((w) => w.resource === "statefulsets" && w.namespace === "vc-minimal" && w.code === 200),
        ).to.have.length(1);
        expect((await statusOf("vc-minimal"))!.history[0]).to.deep.include({
          revision: commit,
          result: "applied",
          by: "alice",
        });
      } finally {
        client.close();
      }
    },
  );
});
