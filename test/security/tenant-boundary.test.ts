// The tenant boundary on the in-memory API server (the same cases as test/e2e/tenant-boundary.test.ts, fast): what a
// tenant writes, with its syncer's RBAC (the rendered Role, enforced per namespace) or in a folder, never changes a
// decision of vc, never gets a foreign object written or pruned, and never reaches vc's records; other clusters go on.
import { expect } from "chai";
import { rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { KubeClient, KubeApiError } from "../../src/host/client.js";
import { LABELS } from "../../src/translate/keys.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import type { Rule } from "../support/kube-server/auth.js";
import { recordConfigMap, recordData } from "../support/records.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

describe("the tenant boundary (in-memory API server, the syncer's RBAC enforced)", function () {
  this.timeout(120_000);
  let server: KubeServer;
  let repo: string;
  let kube: string[];
  let syncer: KubeClient;
  const apply = (r: string, owner: string, ...extra: string[]) =>
    runVc(["apply", r, ...kube, "--owner", owner, ...extra]);
  /** Writes vc (the admin token) made in a namespace, or to the Namespace itself. */
  const writesTo = (ns: string) =>
    server.requests.filter(
      (r) => WRITES.has(r.method) && (r.namespace === ns || (r.resource === "namespaces" && r.name === ns)),
    );
  const deletes = () => server.requests.filter((r) => r.method === "DELETE");

  beforeEach(async () => {
    server = await startKubeServer();
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    repo = exampleRepo(["minimal", "bookinfo"]);
    const first = await apply(repo, "team-a");
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    // The attacker: minimal's syncer, with exactly the rules of the Role vc rendered for it, in its host namespace
    // only.
    const role = server.get("rbac.authorization.k8s.io/v1", "Role", "vc-minimal", "vc-minimal")!;
    const rules = (role.rules as Array<{ verbs: string[]; apiGroups?: string[]; resources?: string[] }>).map(
      (r): Rule => ({
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? [""],
        resources: r.resources ?? [],
        namespaces: ["vc-minimal"],
      }),
    );
    server.addUser("syncer-token", rules, "system:serviceaccount:vc-minimal:vc-minimal");
    syncer = KubeClient.open({
      kubeconfig: server.writeKubeconfig({ token: "syncer-token", context: "syncer" }),
      context: "syncer",
      retry: { attempts: 1 },
    });
  });
  afterEach(async () => {
    syncer.close();
    await server.close();
    rmSync(repo, { recursive: true, force: true });
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

  it("the syncer cannot read or write vc's records or the reconciler's namespace", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/namespaces/vc-system/configmaps"],
      ["GET", "/api/v1/namespaces/vc-system/secrets"],
      ["POST", "/api/v1/namespaces/vc-system/configmaps"],
    ] as const) {
      const err = await syncer
        .request(method, path, method === "POST" ? { body: configMap("forged", {}) } : {})
        .catch((e: unknown) => e);
      expect(err, `${method} ${path}`).to.be.instanceOf(KubeApiError);
      expect((err as KubeApiError).status, `${method} ${path}`).to.equal(403);
    }
  });

  it(
    "planted inventory/owner ConfigMaps and a forged suspension and history change no decision; nothing foreign " +
      "is written or pruned",
    async () => {
      const before = recordData(server, "minimal")!;
      // Another cluster's inventory label with a foreign owner (once: "owned by another source"), forty of them (once:
      // its prune guard), forty more of its own cluster's (once: pruned), a forged suspension and history.
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
      server.resetRequests();

      const res = await apply(repo, "team-a", "--prune");
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      expect(res.stdout).to.not.match(/owned by another source|prune guard|suspended|planted/);
      expect(deletes(), "foreign prunes").to.deep.equal([]);
      expect(writesTo("vc-minimal"), "foreign writes").to.deep.equal([]);
      for (let i = 0; i < 40; i++)
        expect(server.get("v1", "ConfigMap", "vc-minimal", `planted-m-${i}`)).to.not.equal(undefined);
      // Its record is vc's: not suspended, the history as vc wrote it.
      const after = recordConfigMap(server, "minimal")!;
      expect(after.metadata.annotations?.["vc.orch.io/suspended-by"]).to.equal(undefined);
      expect((after.data as Record<string, string>).history).to.equal(before.history);
      const status = await runVc(["status", ...kube, "--cluster", "minimal", "-o", "json"]);
      expect(JSON.parse(status.stdout)).to.deep.include({ result: "applied" }).and.not.have.property("suspendedBy");
    },
  );

  it(
    "a pre-existing foreign Service is a conflict naming its manager: vc apply exits 1 and writes nothing of that " +
      "cluster; vc adopt --take-ownership takes it",
    async () => {
      mkdirSync(join(repo, "clusters", "fresh"), { recursive: true });
      writeFileSync(join(repo, "clusters", "fresh", "values.yaml"), "{}\n");
      const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-fresh" } };
      const svc = {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "fresh", namespace: "vc-fresh" },
        spec: { ports: [{ name: "other", port: 1 }] },
      };
      const admin = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
      try {
        await admin.apply(ns, { fieldManager: "someone-else" });
        await admin.apply(svc, { fieldManager: "someone-else" });
      } finally {
        admin.close();
      }
      const svcBefore = JSON.stringify(server.get("v1", "Service", "vc-fresh", "fresh"));
      server.resetRequests();
      const res = await apply(repo, "team-a");
      expect(res.code, res.stdout).to.equal(1);
      // (The in-memory server keeps no managedFields of a Namespace; the real one names its manager: test/e2e.)
      expect(res.stdout).to.match(
        /! conflict: Namespace vc-fresh \(managed by [^)]+\), Service vc-fresh\/fresh \(managed by someone-else\) already exist on the host and are not in cluster fresh's record/,
      );
      expect(res.stdout).to.include("vc adopt fresh --take-ownership Namespace/vc-fresh Service/vc-fresh/fresh");
      expect(writesTo("vc-fresh"), "foreign writes").to.deep.equal([]);
      expect(JSON.stringify(server.get("v1", "Service", "vc-fresh", "fresh"))).to.equal(svcBefore);
      expect(res.stdout)
        .to.match(/cluster minimal: 0 created/)
        .and.match(/cluster bookinfo: 0 created/);

      const adopted = await runVc([
        "adopt",
        "fresh",
        repo,
        ...kube,
        "--owner",
        "team-a",
        "--take-ownership",
        "Namespace/vc-fresh",
        "Service/vc-fresh/fresh",
      ]);
      expect(adopted.code, adopted.stdout + adopted.stderr).to.equal(0);
      expect(adopted.stdout).to.include("updated Service vc-fresh/fresh").and.include("updated Namespace vc-fresh");
      expect(JSON.parse(recordData(server, "fresh")!.inventory!)).to.include.members([
        "Namespace//vc-fresh",
        "Service/vc-fresh/fresh",
      ]);
      expect((await apply(repo, "team-a")).code).to.equal(0);
    },
  );

  it(
    "a second source claiming a namespace or a cluster is blocked naming the holder; its other " + "clusters go on",
    async () => {
      const b = exampleRepo(["platform"], {
        "clusters/intruder/values.yaml": "{}\n",
        "clusters/intruder/cluster.yaml": "namespace: vc-minimal\n",
        "clusters/bookinfo/values.yaml": "{}\n",
      });
      try {
        server.resetRequests();
        const res = await apply(b, "team-b", "--prune", "--allow-mass-prune");
        expect(res.code, res.stdout).to.equal(1);
        expect(res.stdout).to.include("! host namespace vc-minimal (as cluster minimal) is held by source team-a");
        expect(res.stdout).to.include("! cluster bookinfo is held by source team-a");
        expect(res.stdout).to.match(/cluster platform: \d+ created/);
        expect(writesTo("vc-minimal"), "foreign writes").to.deep.equal([]);
        expect(writesTo("team-bookinfo"), "foreign writes").to.deep.equal([]);
        expect(deletes()).to.deep.equal([]);
      } finally {
        rmSync(b, { recursive: true, force: true });
      }
    },
  );

  it(
    "a new folder claiming a live cluster's namespace: vc validate refuses both, vc apply keeps the live one and " +
      "refuses the newcomer",
    async () => {
      mkdirSync(join(repo, "clusters", "copycat"), { recursive: true });
      writeFileSync(join(repo, "clusters", "copycat", "values.yaml"), "{}\n");
      writeFileSync(join(repo, "clusters", "copycat", "cluster.yaml"), "namespace: vc-minimal\n");
      const validate = await runVc(["validate", repo]);
      expect(validate.code).to.equal(1);
      expect(validate.stdout + validate.stderr).to.match(
        /clusters\/copycat\/cluster.yaml:1:1: error: host namespace "vc-minimal" is also used by cluster minimal/,
      );
      server.resetRequests();
      const res = await apply(repo, "team-a");
      expect(res.code, res.stdout).to.equal(1);
      expect(res.stdout).to.match(/cluster minimal: 0 created, 0 updated, 0 deleted, \d+ unchanged/);
      expect(res.stdout).to.include(
        '! cluster copycat: clusters/copycat/cluster.yaml:1:1: error: host namespace "vc-minimal" is also used by cluster minimal',
      );
      expect(writesTo("vc-minimal")).to.deep.equal([]);
      // Named alone (the repository no longer shows the conflict), the newcomer is refused by the record.
      const alone = await apply(repo, "team-a", "--cluster", "copycat");
      expect(alone.code).to.equal(1);
      expect(alone.stdout).to.include("host namespace vc-minimal is held by cluster minimal of this source");
    },
  );

  it(
    "folders naming the reconciler's, the integrations' or the default namespace are refused with a located " +
      "error; the others are applied",
    async () => {
      for (const [name, ns] of [
        ["sys", "vc-system"],
        ["mesh", "istio-system"],
        ["certs", "cert-manager"],
        ["dflt", "default"],
      ]) {
        mkdirSync(join(repo, "clusters", name!), { recursive: true });
        writeFileSync(join(repo, "clusters", name!, "values.yaml"), "{}\n");
        writeFileSync(join(repo, "clusters", name!, "cluster.yaml"), `namespace: ${ns}\n`);
      }
      server.resetRequests();
      const res = await apply(repo, "team-a");
      expect(res.code).to.equal(1);
      for (const [name, ns] of [
        ["sys", "vc-system"],
        ["mesh", "istio-system"],
        ["certs", "cert-manager"],
        ["dflt", "default"],
      ]) {
        expect(res.stdout).to.include(
          `! cluster ${name}: clusters/${name}/cluster.yaml:1:1: error: host namespace "${ns}"`,
        );
        expect(writesTo(ns!)).to.deep.equal([]);
      }
      expect(server.list("rbac.authorization.k8s.io/v1", "RoleBinding", "vc-system")).to.deep.equal([]);
    },
  );
});
