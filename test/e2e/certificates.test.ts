// cert-manager Certificates on a real API server (the Certificate CRD installed as cert-manager would): applied with
// the Secret name the Gateway reads, no drift afterwards (status included), the syncer allowed to manage them, and vc
// doctor reporting a Gateway whose certificate is not Ready.
import { expect } from "chai";
import { rmSync } from "node:fs";
import { installExampleCrds, useRealKube, type RealKube } from "../support/real-kube.js";
import { exampleRepo, getJson, kubectl, runVc, vcOn } from "./plan-support.js";

const NS = "team-bookinfo";
const CERT = "bookinfo-cert-x-bookinfo-x-bookinfo";
const GATEWAY = "bookinfo-gateway-x-bookinfo-x-bookinfo";

describe("e2e: cert-manager Certificates", function () {
  this.timeout(180_000);
  const kube = useRealKube();
  let host: RealKube;
  let repo: string;

  const setReady = async (status: "True" | "False", reason: string, message: string): Promise<void> => {
    const res = await host.request(
      "PATCH",
      `/apis/cert-manager.io/v1/namespaces/${NS}/certificates/${CERT}/status`,
      { status: { conditions: [{ type: "Ready", status, reason, message }] } },
      { contentType: "application/merge-patch+json" },
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const doctor = () => runVc(["doctor", "bookinfo", "--kubeconfig", host.kubeconfigPath, "--repo", repo]);

  before(async () => {
    host = kube();
    repo = exampleRepo(["bookinfo"]);
    await installExampleCrds(host);
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it(
    "applies the Certificate with the Secret name the Gateway reads; diff --exit-code is clean " + "afterwards",
    async () => {
      const apply = await vcOn(host, "apply", repo);
      expect(apply.code, apply.stdout + apply.stderr).to.equal(0);
      const cert = await getJson(host, ["-n", NS, "certificates.cert-manager.io", CERT]);
      const gw = await getJson(host, ["-n", NS, "gateways.networking.mesh.io", GATEWAY]);
      expect(cert.spec.secretName).to.equal("bookinfo-cert-x-bookinfo-x-bookinfo");
      expect(gw.spec.servers.find((s: { tls?: unknown }) => s.tls).tls.credentialName).to.equal(cert.spec.secretName);
      expect(cert.spec.issuerRef).to.deep.equal({
        name: "letsencrypt",
        kind: "ClusterIssuer",
        group: "cert-manager.io",
      });
      expect(cert.metadata.labels["vc.orch.io/inventory"]).to.equal("bookinfo");
      const diff = await vcOn(host, "diff", repo, "--exit-code");
      expect(diff.code, diff.stdout).to.equal(0);
    },
  );

  it("the syncer's ServiceAccount may manage certificates, in its host namespace only", async () => {
    const sa = `system:serviceaccount:${NS}:vc-bookinfo`;
    for (const verb of ["create", "get", "list", "watch", "update", "patch", "delete"]) {
      expect(
        (await kubectl(host, ["auth", "can-i", verb, "certificates.cert-manager.io", "-n", NS, "--as", sa])).trim(),
        verb,
      ).to.equal("yes");
    }
    const elsewhere = await host.kubectl([
      "auth",
      "can-i",
      "create",
      "certificates.cert-manager.io",
      "-n",
      "default",
      "--as",
      sa,
    ]);
    expect(elsewhere.stdout.trim()).to.equal("no");
  });

  it(
    "vc doctor reports the Gateway while its certificate is not Ready (status is not drift), and not once it " +
      "is Ready",
    async () => {
      await setReady("False", "Pending", "Issuing certificate as Secret does not exist");
      const diff = await vcOn(host, "diff", repo, "--exit-code");
      expect(diff.code, diff.stdout).to.equal(0);
      const notReady = await doctor();
      expect(notReady.code, notReady.stdout + notReady.stderr).to.equal(1);
      expect(notReady.stdout).to.include(
        `ERROR [certificate-not-ready] Gateway ${NS}/${GATEWAY}: the Certificate ${NS}/${CERT} that issues ` +
          `tls.credentialName ${CERT} (port 443) is not Ready: Ready is False (Pending): Issuing certificate as ` +
          `Secret does not exist`,
      );
      expect(notReady.stdout).to.include(
        "fix: verify the secret named in `tls.credentialName` exists; enable `integrations.certManager`; recreate " +
          "the gateway after the certificate is ready; ",
      );
      expect(notReady.stdout).to.include(
        `kubectl -n ${NS} describe certificate ${CERT} shows why cert-manager has not issued it`,
      );

      await setReady("True", "Ready", "Certificate is up to date and has not expired");
      const ready = await doctor();
      expect(ready.stdout).to.not.include("[certificate-not-ready]");
    },
  );
});
