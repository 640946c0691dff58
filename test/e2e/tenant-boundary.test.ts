// The tenant boundary on a real API server (issue #20, items 1-4), acting as the attacker: minimal's syncer with a
// TokenRequest token of its real ServiceAccount (the Role vc rendered), and a second source with its own reconciler
// ServiceAccount. Each case shows the refusal, that no foreign object changed (the server's audit log), and that the
// fleet's other clusters were reconciled. The in-memory twin: test/security/tenant-boundary.test.ts.
import { expect } from "chai";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { KubeApiError, KubeClient } from "../../src/host/client.js";
import { LABELS } from "../../src/translate/keys.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const ROOT = join(import.meta.dirname, "..", "..");
const SOURCE_A = "system:serviceaccount:vc-system:vc-reconciler";
const SOURCE_B = "system:serviceaccount:vc-system:vc-reconciler-b";

describe("e2e: the tenant boundary on a real API server", function () {
  this.timeout(240_000);
  const kube = useRealKube();
  let repo: string;
  let kcA: string;
  let kcB: string;
  let syncer: KubeClient;
  const vc = (kc: string, command: string, r: string, owner: string, ...args: string[]) =>
    runVc([command, r, "--target", "kube", "--kubeconfig", kc, "--owner", owner, ...args]);
  /** Writes `user` made in namespace `ns` (or to that Namespace) since `mark`. */
  const writesIn = (user: string, mark: number, ns: string) =>
    kube()
      .writes()
      .slice(mark)
      .filter((w) => w.user === user && (w.namespace === ns || (w.resource === "namespaces" && w.name === ns)));
  const deletesSince = (mark: number) =>
    kube()
      .writes()
      .slice(mark)
      .filter((w) => w.verb === "delete");
  const get = async (args: string[]) => (await kube().kubectl(["get", ...args, "-o", "json"])).stdout;

  before(async () => {
    await installExampleCrds(kube());
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
    // The reconciler's git credentials, what a tenant must never read.
    await kube().kubectl([
      "-n",
      "vc-system",
      "create",
      "secret",
      "generic",
      "vc-git-credentials",
      "--from-literal=token=s3cr3t",
    ]);
    // A second source: its own reconciler ServiceAccount with the same roles.
    await kube().kubectl(["-n", "vc-system", "create", "serviceaccount", "vc-reconciler-b"]);
    await kube().kubectl([
      "create",
      "clusterrolebinding",
      "vc-reconciler-b",
      "--clusterrole=vc-reconciler",
      "--serviceaccount=vc-system:vc-reconciler-b",
    ]);
    await kube().kubectl([
      "create",
      "clusterrolebinding",
      "vc-reconciler-b-grants",
      "--clusterrole=vc-reconciler-grants",
      "--serviceaccount=vc-system:vc-reconciler-b",
    ]);
    kcA = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
    kcB = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler-b");
    repo = exampleRepo(["minimal", "bookinfo"]);
    const first = await vc(kcA, "apply", repo, "team-a");
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    // The attacker: minimal's syncer, through a TokenRequest token of its real ServiceAccount.
    syncer = KubeClient.open({
      kubeconfig: await kube().serviceAccountKubeconfig("vc-minimal", "vc-minimal"),
      retry: { attempts: 1 },
    });
  });
  after(() => {
    syncer?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  const configMap = (
    name: string,
    labels: Record<string, string>,
    data: Record<string, string> = {},
    annotations?: Record<string, string>,
  ): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "vc-minimal", labels, ...(annotations ? { annotations } : {}) },
    data,
  });

  it("the syncer's identity reads none of the reconciler's credentials and cannot touch vc's records", async () => {
    for (const [method, path, body] of [
      ["GET", "/api/v1/namespaces/vc-system/secrets/vc-git-credentials", undefined],
      ["GET", "/api/v1/namespaces/vc-system/secrets", undefined],
      ["GET", "/api/v1/namespaces/vc-system/configmaps", undefined],
      [
        "POST",
        "/api/v1/namespaces/vc-system/configmaps",
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "forged", namespace: "vc-system" } },
      ],
      ["GET", "/apis/coordination.k8s.io/v1/namespaces/vc-system/leases", undefined],
    ] as const) {
      const err = await syncer.request(method, path, body ? { body } : {}).catch((e: unknown) => e);
      expect(err, `${method} ${path}`).to.be.instanceOf(KubeApiError);
      expect((err as KubeApiError).status, `${method} ${path}`).to.equal(403);
    }
    // Its own namespace it may write (that is what the next case plants with).
    await syncer.apply(configMap("probe", {}));
  });

  it(
    "planted inventory/owner ConfigMaps and a forged suspension and history change no decision; no foreign write " +
      "or prune",
    async () => {
      const recordBefore = JSON.parse(
        await get(["-n", "vc-system", "configmaps", "-l", `${LABELS.managedBy}=minimal,vc.orch.io/record=record`]),
      ).items[0].data.history;
      for (let i = 0; i < 40; i++) {
        await syncer.apply(configMap(`planted-b-${i}`, { [LABELS.inventory]: "bookinfo", [LABELS.owner]: "evil" }));
        await syncer.apply(configMap(`planted-m-${i}`, { [LABELS.inventory]: "minimal", [LABELS.owner]: "team-a" }));
      }
      await syncer.apply(
        configMap(
          "vc-status",
          { [LABELS.managedBy]: "minimal", [LABELS.status]: "true" },
          { cluster: "minimal", hostNamespace: "vc-minimal", result: "failed", history: "[]" },
          { "vc.orch.io/suspended-by": "the tenant" },
        ),
      );
      await syncer.apply(
        configMap("vc-history", { [LABELS.managedBy]: "minimal" }, { cluster: "minimal", history: "[]" }),
      );
      const mark = kube().writes().length;
      const res = await vc(kcA, "apply", repo, "team-a", "--prune");
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      expect(res.stdout).to.not.match(/owned by another source|prune guard|suspended|planted/);
      expect(writesIn(SOURCE_A, mark, "vc-minimal"), "foreign writes").to.deep.equal([]);
      expect(deletesSince(mark), "foreign prunes").to.deep.equal([]);
      const planted = JSON.parse(await get(["-n", "vc-minimal", "configmaps", "-l", LABELS.inventory])).items.filter(
        (c: KubeObject) => c.metadata.name.startsWith("planted-"),
      );
      expect(planted).to.have.length(80);
      const record = JSON.parse(
        await get(["-n", "vc-system", "configmaps", "-l", `${LABELS.managedBy}=minimal,vc.orch.io/record=record`]),
      ).items[0];
      expect(record.metadata.annotations?.["vc.orch.io/suspended-by"]).to.equal(undefined);
      expect(record.data.history).to.equal(recordBefore);
      // The whole-fleet diff, which reads every labelled object with one paged LIST per kind, plans nothing for them
      // (no prune, no drift: only what a record holds is planned on) and reads its LISTs to the end without falling
      // back.
      const diff = await vc(kcA, "diff", repo, "team-a", "--prune", "--exit-code");
      expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
      expect(diff.stdout + diff.stderr).to.not.match(/planted|warning/);
    },
  );

  it(
    "folders naming vc-system, istio-system, cert-manager or default: located vc validate errors; vc apply writes " +
      "nothing there, the others go on",
    async () => {
      const named = [
        ["sys", "vc-system"],
        ["mesh", "istio-system"],
        ["certs", "cert-manager"],
        ["dflt", "default"],
      ] as const;
      for (const [name, ns] of named) {
        mkdirSync(join(repo, "clusters", name), { recursive: true });
        writeFileSync(join(repo, "clusters", name, "values.yaml"), "{}\n");
        writeFileSync(join(repo, "clusters", name, "cluster.yaml"), `namespace: ${ns}\n`);
      }
      try {
        const validate = await runVc(["validate", repo]);
        expect(validate.code).to.equal(1);
        for (const [name, ns] of named)
          expect(validate.stdout + validate.stderr).to.include(
            `clusters/${name}/cluster.yaml:1:1: error: host namespace "${ns}"`,
          );
        const mark = kube().writes().length;
        const res = await vc(kcA, "apply", repo, "team-a");
        expect(res.code).to.equal(1);
        for (const [name, ns] of named) {
          expect(res.stdout).to.include(
            `! cluster ${name}: clusters/${name}/cluster.yaml:1:1: error: host namespace "${ns}"`,
          );
          if (ns !== "vc-system") expect(writesIn(SOURCE_A, mark, ns)).to.deep.equal([]);
        }
        // In vc-system only vc's records (none for the refused folders): no Role, no binding for a syncer.
        expect(writesIn(SOURCE_A, mark, "vc-system").filter((w) => w.resource !== "configmaps")).to.deep.equal([]);
        expect(
          JSON.parse(await get(["-n", "vc-system", "rolebindings"])).items.map((b: KubeObject) => b.metadata.name),
        ).to.not.include("vc-sys");
        expect(res.stdout)
          .to.match(/cluster minimal: 0 created/)
          .and.match(/cluster bookinfo: 0 created/);
      } finally {
        for (const [name] of named) rmSync(join(repo, "clusters", name), { recursive: true, force: true });
      }
    },
  );

  it(
    "a pre-existing foreign Service and Namespace: a conflict naming their managers, nothing written; vc adopt " +
      "--take-ownership takes them",
    async () => {
      await kube().kubectl(["create", "namespace", "vc-fresh"]);
      await kube().kubectl(["apply", "-f", "-"], {
        input: JSON.stringify({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "fresh", namespace: "vc-fresh" },
          spec: { ports: [{ name: "other", port: 1 }] },
        }),
      });
      const svcBefore = JSON.parse(await get(["-n", "vc-fresh", "service", "fresh"])).metadata.resourceVersion;
      mkdirSync(join(repo, "clusters", "fresh"), { recursive: true });
      writeFileSync(join(repo, "clusters", "fresh", "values.yaml"), "{}\n");
      const mark = kube().writes().length;
      const res = await vc(kcA, "apply", repo, "team-a");
      expect(res.code, res.stdout).to.equal(1);
      expect(res.stdout).to.match(
        /! conflict: Namespace vc-fresh \(managed by kubectl-create\), Service vc-fresh\/fresh \(managed by kubectl-client-side-apply\) already exist on the host and are not in cluster fresh's record/,
      );
      expect(res.stdout).to.include("vc adopt fresh --take-ownership Namespace/vc-fresh Service/vc-fresh/fresh");
      expect(writesIn(SOURCE_A, mark, "vc-fresh"), "foreign writes").to.deep.equal([]);
      expect(JSON.parse(await get(["-n", "vc-fresh", "service", "fresh"])).metadata.resourceVersion).to.equal(
        svcBefore,
      );
      expect(res.stdout)
        .to.match(/cluster minimal: 0 created/)
        .and.match(/cluster bookinfo: 0 created/);
      const diff = await vc(kcA, "diff", repo, "team-a");
      expect(diff.stdout).to.include("conflict: Namespace vc-fresh");

      const adopted = await runVc([
        "adopt",
        "fresh",
        repo,
        "--target",
        "kube",
        "--kubeconfig",
        kcA,
        "--owner",
        "team-a",
        "--take-ownership",
        "Namespace/vc-fresh",
        "Service/vc-fresh/fresh",
      ]);
      expect(adopted.code, adopted.stdout + adopted.stderr).to.equal(0);
      expect(adopted.stdout).to.include("updated Service vc-fresh/fresh");
      expect((await vc(kcA, "apply", repo, "team-a")).code).to.equal(0);
    },
  );

  it(
    "a second source claiming a host namespace or a cluster is blocked naming the holder; its other cluster is " +
      "applied",
    async () => {
      const b = exampleRepo(["platform"], {
        "clusters/intruder/values.yaml": "{}\n",
        "clusters/intruder/cluster.yaml": "namespace: vc-minimal\n",
        "clusters/bookinfo/values.yaml": "{}\n",
      });
      try {
        const mark = kube().writes().length;
        const res = await vc(kcB, "apply", b, "team-b", "--prune", "--allow-mass-prune");
        expect(res.code, res.stdout + res.stderr).to.equal(1);
        expect(res.stdout).to.include("! host namespace vc-minimal (as cluster minimal) is held by source team-a");
        expect(res.stdout).to.include("! cluster bookinfo is held by source team-a");
        expect(res.stdout).to.match(/cluster platform: \d+ created/);
        expect(writesIn(SOURCE_B, mark, "vc-minimal"), "foreign writes").to.deep.equal([]);
        expect(writesIn(SOURCE_B, mark, "team-bookinfo"), "foreign writes").to.deep.equal([]);
        expect(writesIn(SOURCE_B, mark, "vc-platform").length).to.be.greaterThan(3);
        expect(deletesSince(mark), "foreign prunes").to.deep.equal([]);
        const ns = JSON.parse(await get(["namespace", "vc-minimal"]));
        expect(ns.metadata.labels[LABELS.owner]).to.equal("team-a");
      } finally {
        rmSync(b, { recursive: true, force: true });
      }
    },
  );

  it(
    "a new folder claiming a live cluster's namespace: the live cluster stays valid, only the newcomer is " + "refused",
    async () => {
      mkdirSync(join(repo, "clusters", "copycat"), { recursive: true });
      writeFileSync(join(repo, "clusters", "copycat", "values.yaml"), "{}\n");
      writeFileSync(join(repo, "clusters", "copycat", "cluster.yaml"), "namespace: vc-minimal\n");
      try {
        const mark = kube().writes().length;
        const res = await vc(kcA, "apply", repo, "team-a");
        expect(res.code, res.stdout).to.equal(1);
        expect(res.stdout).to.match(/cluster minimal: 0 created, 0 updated, 0 deleted, \d+ unchanged/);
        expect(res.stdout).to.include(
          '! cluster copycat: clusters/copycat/cluster.yaml:1:1: error: host namespace "vc-minimal" is also used by cluster minimal',
        );
        expect(writesIn(SOURCE_A, mark, "vc-minimal")).to.deep.equal([]);
      } finally {
        rmSync(join(repo, "clusters", "copycat"), { recursive: true, force: true });
      }
      // Everything else still reconciles: a clean run of the fleet.
      const clean = await vc(kcA, "apply", repo, "team-a", "--prune");
      expect(clean.code, clean.stdout).to.equal(0);
    },
  );
});
