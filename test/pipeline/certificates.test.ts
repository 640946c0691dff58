// Certificates through plan and apply on the API test server: created before the Gateways, no drift after, pruned when
// removed, and a host without cert-manager's CRDs one clear error for that cluster.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const CERT = ["cert-manager.io/v1", "Certificate", "team-bookinfo", "bookinfo-cert-x-bookinfo-x-bookinfo"] as const;

describe("pipeline: cert-manager Certificates", function () {
  this.timeout(60_000);
  let server: KubeServer | undefined;
  let repo: string;
  const kube = () => ["--target", "kube", "--kubeconfig", server!.kubeconfigPath, "--context", "test"];

  beforeEach(() => {
    repo = exampleRepo(["bookinfo", "minimal"]);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(repo, { recursive: true, force: true });
  });

  it(
    "applies the Certificate before the Gateway, diff is clean afterwards, a removed Certificate " + "is pruned",
    async () => {
      server = await startKubeServer();
      const apply = await runVc(["apply", repo, ...kube()]);
      expect(apply.code, apply.stdout + apply.stderr).to.equal(0);
      const cert = server.get(...CERT) as { spec: { secretName: string } } | undefined;
      expect(cert?.spec.secretName).to.equal("bookinfo-cert-x-bookinfo-x-bookinfo");
      const gw = server.get(
        "networking.mesh.io/v1beta1",
        "Gateway",
        "team-bookinfo",
        "bookinfo-gateway-x-bookinfo-x-bookinfo",
      ) as unknown as { spec: { servers: Array<{ tls?: { credentialName: string } }> } };
      expect(gw.spec.servers[1]!.tls!.credentialName).to.equal(cert!.spec.secretName);
      const writes = server.requests.filter((r) => r.method === "PATCH");
      const at = (resource: string) => writes.findIndex((r) => r.resource === resource);
      expect(at("certificates")).to.be.greaterThan(at("statefulsets")).and.lessThan(at("gateways"));

      // cert-manager writes the status; that is not drift.
      server.put({ ...server.get(...CERT)!, status: { conditions: [{ type: "Ready", status: "True" }] } });
      const diff = await runVc(["diff", repo, ...kube(), "--exit-code"]);
      expect(diff.code, diff.stdout).to.equal(0);

      rmSync(join(repo, "clusters/bookinfo/certificates"), { recursive: true });
      const plan = await runVc(["diff", repo, ...kube(), "--prune"]);
      expect(plan.stdout).to.include("- delete Certificate team-bookinfo/bookinfo-cert-x-bookinfo-x-bookinfo");
      const prune = await runVc(["apply", repo, ...kube(), "--prune"]);
      expect(prune.code, prune.stdout).to.equal(0);
      expect(server.get(...CERT)).to.equal(undefined);
    },
  );

  it(
    "a host without cert-manager's CRDs: one error for the cluster naming them and what to do; nothing of it " +
      "applied, the others are",
    async () => {
      server = await startKubeServer({ unservedGroups: ["cert-manager.io"] });
      const res = await runVc(["apply", repo, ...kube()]);
      expect(res.code).to.equal(1);
      const errors = res.stdout.split("\n").filter((l) => l.startsWith("! "));
      expect(errors).to.have.length(1);
      expect(errors[0])
        .to.include("cluster bookinfo")
        .and.include(
          "the host does not serve Certificate (cert-manager.io/v1): cert-manager's custom resource definitions are " +
            "missing",
        );
      expect(errors[0]).to.include(
        "set integrations.certManager.enabled: false in clusters/bookinfo/values.yaml and remove " +
          "clusters/bookinfo/certificates/",
      );
      expect(res.stdout + res.stderr).to.not.include("404");
      expect(server.list("v1", "Namespace").map((n) => n.metadata.name))
        .to.include("vc-minimal")
        .and.not.include("team-bookinfo");
    },
  );
});
