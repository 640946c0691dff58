import { expect } from "chai";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";
import { KubeClient } from "../../src/host/client.js";
import { Discovery } from "../../src/host/discovery.js";
import { recordData } from "../support/records.js";

const writes = (s: KubeServer) =>
  ["PATCH", "PUT", "POST", "DELETE"].reduce((n, method) => n + s.countRequests({ method }), 0);

describe("plan with server semantics, on the test API server", () => {
  let server: KubeServer;
  let repo: string;
  let kube: string[];

  beforeEach(async () => {
    server = await startKubeServer();
    repo = exampleRepo(["minimal", "bookinfo", "platform"]);
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    const first = await runVc(["apply", repo, ...kube]);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    server.resetRequests();
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  const patchSts = (manager: string, body: unknown) =>
    KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" }).request(
      "PATCH",
      "/apis/apps/v1/namespaces/vc-platform/statefulsets/platform",
      {
        query: { fieldManager: manager, force: true },
        contentType: "application/apply-patch+yaml",
        body,
      },
    );

  it("an env var, an annotation and a container of other field managers are not drift and cost no write", async () => {
    const sts = server.get("apps/v1", "StatefulSet", "vc-platform", "platform")! as any;
    const selector = sts.spec.selector;
    await patchSts("kubectl-set", {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "platform" },
      spec: {
        selector,
        serviceName: sts.spec.serviceName,
        template: {
          metadata: { labels: selector.matchLabels },
          spec: { containers: [{ name: "syncer", env: [{ name: "FOO", value: "bar" }] }] },
        },
      },
    });
    await patchSts("other", {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "platform", annotations: { "example.com/x": "y" } },
      spec: {
        selector,
        serviceName: sts.spec.serviceName,
        template: {
          metadata: { labels: selector.matchLabels },
          spec: { containers: [{ name: "sidecar", image: "busybox" }] },
        },
      },
    });
    const live = server.get("apps/v1", "StatefulSet", "vc-platform", "platform")! as any;
    expect(live.spec.template.spec.containers.map((c: any) => c.name)).to.include("sidecar");
    expect(
      live.spec.template.spec.containers.find((c: any) => c.name === "syncer").env.map((e: any) => e.name),
    ).to.include("FOO");
    server.resetRequests();
    const diff = await runVc(["diff", repo, ...kube, "--exit-code"]);
    expect(diff.code, diff.stdout).to.equal(0);
    const apply = await runVc(["apply", repo, ...kube]);
    expect(apply.code, apply.stdout).to.equal(0);
    expect(writes(server)).to.equal(0);
  });

  it("a scaled replica count is drift and converges", async () => {
    await server.put({
      ...(server.get("apps/v1", "StatefulSet", "vc-platform", "platform") as any),
      spec: { ...(server.get("apps/v1", "StatefulSet", "vc-platform", "platform") as any).spec, replicas: 3 },
    });
    const diff = await runVc(["diff", repo, ...kube, "--exit-code"]);
    expect(diff.code).to.equal(1);
    expect(diff.stdout).to.match(/-\s+replicas: 3/);
    expect((await runVc(["apply", repo, ...kube])).code).to.equal(0);
    expect((server.get("apps/v1", "StatefulSet", "vc-platform", "platform") as any).spec.replicas).to.equal(1);
  });

  it(
    "a persistence.size change is refused before any write of the cluster; other clusters go on; --force " +
      "recreates with an orphan delete",
    async () => {
      const values = join(repo, "clusters/platform/values.yaml");
      writeFileSync(values, readFileSync(values, "utf8").replace("size: 10Gi", "size: 20Gi"));
      const minimal = join(repo, "clusters/minimal/values.yaml");
      writeFileSync(minimal, readFileSync(minimal, "utf8").replace("cpu: 200m", "cpu: 300m"));
      const diff = await runVc(["diff", repo, ...kube]);
      expect(diff.stdout).to.include(
        "~ update StatefulSet vc-platform/platform (refused in place: immutable spec.volumeClaimTemplates; needs " +
          "--force)",
      );
      expect(diff.stdout).to.include(
        "! cannot update in place: the API server refuses changes of immutable fields of StatefulSet " +
          "vc-platform/platform (spec.volumeClaimTemplates)",
      );
      server.resetRequests();
      const blocked = await runVc(["apply", repo, ...kube]);
      expect(blocked.code).to.equal(1);
      expect(blocked.stdout)
        .to.include("Run vc apply --force")
        .and.include("cluster platform: 0 created, 0 updated, 0 deleted, 14 unchanged, 0 failed, 2 skipped");
      expect(blocked.stdout).to.include("updated StatefulSet vc-minimal/minimal");
      // Only the other cluster was written: nothing of platform (not even its config Secret) half-applied; its record
      // says blocked.
      expect(
        server.requests
          .filter((r) => ["PATCH", "DELETE"].includes(r.method) && r.namespace !== "vc-system")
          .every((r) => r.namespace === "vc-minimal"),
      ).to.equal(true);
      expect(recordData(server, "platform")!.result).to.equal("blocked");
      expect(writes(server)).to.be.greaterThan(0);
      // The config Secret was not updated either: nothing of the cluster half-applied.
      const uid = server.get("apps/v1", "StatefulSet", "vc-platform", "platform")!.metadata.uid;

      const forced = await runVc(["apply", repo, ...kube, "--cluster", "platform", "--force"]);
      expect(forced.code, forced.stdout).to.equal(0);
      expect(forced.stdout).to.match(
        /updated StatefulSet vc-platform\/platform: recreated \(immutable spec.volumeClaimTemplates\); deleted with propagationPolicy=Orphan/,
      );
      const del = server.requests.find((r) => r.method === "DELETE")!;
      expect(del.resource).to.equal("statefulsets");
      const sts = server.get("apps/v1", "StatefulSet", "vc-platform", "platform")! as any;
      expect(sts.metadata.uid).to.not.equal(uid);
      expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).to.equal("20Gi");
      expect((await runVc(["diff", repo, ...kube, "--exit-code", "--cluster", "platform"])).code).to.equal(0);
    },
  );

  it("cluster.yaml force: true lets the plan recreate without the flag", async () => {
    const values = join(repo, "clusters/platform/values.yaml");
    writeFileSync(values, readFileSync(values, "utf8").replace("size: 10Gi", "size: 20Gi"));
    writeFileSync(join(repo, "clusters/platform/cluster.yaml"), "namespace: vc-platform\nprune: true\nforce: true\n");
    const diff = await runVc(["diff", repo, ...kube, "--cluster", "platform"]);
    expect(diff.stdout)
      .to.include("(recreate: immutable spec.volumeClaimTemplates)")
      .and.not.include("! cannot update");
  });

  it(
    "missing mesh CRDs give one error per cluster naming the group and the prerequisite; nothing of that cluster " +
      "is applied, others are",
    async () => {
      await server.close();
      server = await startKubeServer();
      kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
      server.faults.add({ path: /^\/apis\/networking\.mesh\.io\//, status: 404 });
      const res = await runVc(["apply", repo, ...kube]);
      expect(res.code).to.equal(1);
      const errors = res.stdout.split("\n").filter((l) => l.startsWith("! "));
      expect(errors).to.have.length(1);
      expect(errors[0])
        .to.include("the host does not serve DestinationRule, Gateway, VirtualService (networking.mesh.io/v1beta1)")
        .and.include("CRDs (group suffix mesh.io)")
        .and.include("cluster bookinfo");
      expect(res.stdout).to.not.include("404");
      expect(server.list("v1", "Namespace").map((n) => n.metadata.name))
        .to.include("vc-minimal")
        .and.include("vc-platform")
        .and.not.include("team-bookinfo");
      // Discovery is asked once for the run, not per cluster or per object.
      expect(server.requests.filter((r) => r.path === "/apis")).to.have.length(1);
    },
  );

  it("a no-op diff asks no discovery at all", async () => {
    const res = await runVc(["diff", repo, ...kube, "--exit-code"]);
    expect(res.code).to.equal(0);
    expect(
      server.requests.filter((r) => r.path.startsWith("/apis") && !r.query.includes("labelSelector")),
    ).to.have.length(0);
  });
});

describe("host/discovery", () => {
  it("caches answers for its TTL and asks again after it", async () => {
    const server = await startKubeServer();
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    try {
      let now = 0;
      const d = new Discovery(client, 1000, () => now);
      const kinds = [
        { apiVersion: "networking.mesh.io/v1beta1", kind: "VirtualService" },
        { apiVersion: "apps/v1", kind: "StatefulSet" },
        { apiVersion: "networking.mesh.io/v1beta1", kind: "Nope" },
        { apiVersion: "nope.io/v1", kind: "X" },
      ];
      expect(await d.missing(kinds)).to.deep.equal([kinds[2], kinds[3]]);
      const n = server.requests.length;
      await d.missing(kinds);
      expect(server.requests.length).to.equal(n);
      now = 2000;
      await d.missing(kinds);
      expect(server.requests.length).to.be.greaterThan(n);
    } finally {
      client.close();
      await server.close();
    }
  });
});
