// vc doctor's permission checks on a real API server: each asked of the server's authorizer (SubjectAccessReview) for
// the exact service account and verb. Grants the old local RBAC reading missed (a binding to system:authenticated, a
// ServiceAccount subject without namespace) are quiet; a denial is found; a caller who may not ask is told so.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { breakDoctorHost, writeDoctorRepo } from "../ops/doctor-host.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

type Report = {
  findings: Array<{ check: string; severity: string; object: string; message: string }>;
  notChecked: Record<string, string>;
};

describe("e2e: vc doctor asks the server's authorizer", function () {
  this.timeout(120_000);
  const kube = useRealKube({ users: [{ name: "reader" }] });
  let repo: string;
  const doctor = async (kubeconfig = kube().kubeconfigPath): Promise<Report> => {
    const res = await runVc(["doctor", "shop", "-o", "json", "--kubeconfig", kubeconfig, "--repo", repo]);
    expect(res.stderr).to.equal("");
    return JSON.parse(res.stdout) as Report;
  };
  const k = async (args: string[]) => {
    const res = await kube().kubectl(args);
    expect(res.code, res.stderr).to.equal(0);
  };
  const checks = (r: Report) => r.findings.map((f) => f.check);

  before(async () => {
    await installMeshCrds(kube());
    repo = writeDoctorRepo();
    await breakDoctorHost(kube().kubeconfigPath, repo);
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it(
    "a metrics reader denied by the server is reported; granted through a binding to system:authenticated " +
      "it is not",
    async () => {
      const before = await doctor();
      expect(before.findings.filter((f) => f.check === "metrics-forbidden").map((f) => f.message)).to.deep.equal([
        "HTTP 403 Forbidden: system:serviceaccount:vc-system:vc-metrics-proxy may not get, list pods.metrics.k8s.io " +
          "in vc-shop",
      ]);
      // kubectl validates resources by discovery and this host serves no metrics.k8s.io: the role is posted as it is.
      const role = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "any-metrics" },
        rules: [{ apiGroups: ["metrics.k8s.io"], resources: ["pods", "nodes"], verbs: ["get", "list"] }],
      };
      expect((await kube().request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)).status).to.equal(
        201,
      );
      await k([
        "create",
        "clusterrolebinding",
        "any-metrics",
        "--clusterrole=any-metrics",
        "--group=system:authenticated",
      ]);
      expect(checks(await doctor())).to.not.include("metrics-forbidden");
    },
  );

  it(
    "the syncer without pod rights is reported; a RoleBinding naming its ServiceAccount without namespace " +
      "grants them",
    async () => {
      const bindings = await kube().kubectl([
        "-n",
        "vc-shop",
        "get",
        "rolebindings",
        "-o",
        'jsonpath={range .items[*]}{.metadata.name} {.subjects[0].name}{"\\n"}{end}',
      ]);
      const syncer = bindings.stdout
        .split("\n")
        .filter((l) => l.endsWith(" vc-shop"))
        .map((l) => l.split(" ")[0]!);
      expect(syncer, bindings.stdout).to.not.be.empty;
      await k(["-n", "vc-shop", "delete", "rolebinding", ...syncer]);
      const denied = (await doctor()).findings.filter((f) => f.check === "syncer-rbac");
      expect(denied.map((f) => f.message)).to.deep.equal([
        "system:serviceaccount:vc-shop:vc-shop may not create, delete, get, list pods in vc-shop: pod sync cannot work",
      ]);
      await k(["-n", "vc-shop", "create", "role", "pods-by-hand", "--verb=create,delete,get,list", "--resource=pods"]);
      const binding = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "pods-by-hand", namespace: "vc-shop" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pods-by-hand" },
        subjects: [{ kind: "ServiceAccount", name: "vc-shop" }],
      };
      const created = await kube().request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/vc-shop/rolebindings",
        binding,
      );
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(checks(await doctor())).to.not.include("syncer-rbac");
    },
  );

  it(
    "a caller who may not create SubjectAccessReviews is told the permission checks could not be made, and no 403 " +
      "is guessed",
    async () => {
      await k(["delete", "clusterrolebinding", "any-metrics"]); // the server would deny the metrics reader again
      await k([
        "create",
        "clusterrole",
        "doctor-reader",
        "--verb=get,list",
        "--resource=pods,events,persistentvolumeclaims,statefulsets,deployments,services,serviceaccounts,secrets,configmaps,namespaces",
      ]);
      await k(["create", "clusterrolebinding", "doctor-reader", "--clusterrole=doctor-reader", "--user=reader"]);
      const report = await doctor(kube().kubeconfigFor("reader"));
      expect(report.notChecked.access).to.equal(
        "you may not create SubjectAccessReviews, so the permission checks could not be made",
      );
      expect(checks(report)).to.not.include("metrics-forbidden");
      expect(checks(report)).to.not.include("syncer-rbac");
    },
  );
});
