// vc doctor's Gateway checks on a real API server: the ingress gateway pods a Gateway selects must be Ready (status
// written through the status subresource, as a kubelet would), a Service must expose them on the Gateway's ports with
// an external address, and the TLS Secret must be where the gateway pods read it, with a valid certificate for the
// hosts.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servingCertificate, tlsSecret } from "../support/certs.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

type Report = { findings: Array<{ check: string; severity: string; object: string; message: string }> };

const GATEWAY = `apiVersion: networking.mesh.io/v1beta1
kind: Gateway
metadata: {name: edge, namespace: default}
spec:
  selector: {istio: ingressgateway}
  servers:
    - port: {number: 443, name: https, protocol: HTTPS}
      hosts: [a.example.com]
      tls: {mode: SIMPLE, credentialName: a-cert}
`;
const SECRET = "a-cert-x-default-x-edge";

describe("e2e: vc doctor checks what serves a Gateway", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;
  const gatewayFindings = async (): Promise<string[]> => {
    const res = await runVc(["doctor", "edge", "-o", "json", "--kubeconfig", kube().kubeconfigPath, "--repo", repo]);
    expect(res.stderr).to.equal("");
    return (JSON.parse(res.stdout) as Report).findings
      .filter((f) => /^(gateway|tls)-/.test(f.check))
      .map((f) => `${f.check} ${f.severity}: ${f.message}`);
  };
  const post = async (path: string, body: unknown) => {
    const res = await kube().request("POST", path, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };
  const status = async (path: string, body: unknown) => {
    const res = await kube().request("PATCH", `${path}/status`, body, { contentType: "application/merge-patch+json" });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const INGRESS_POD = "/api/v1/namespaces/mesh-system/pods/ingress-1";

  before(async () => {
    await installMeshCrds(kube());
    repo = mkdtempSync(join(tmpdir(), "vc-doctor-gw-"));
    mkdirSync(join(repo, "clusters/edge/mesh"), { recursive: true });
    writeFileSync(join(repo, "clusters/edge/values.yaml"), "integrations:\n  mesh:\n    enabled: true\n");
    writeFileSync(join(repo, "clusters/edge/mesh/gateway.yaml"), GATEWAY);
    const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } });
    await post("/api/v1/namespaces/mesh-system/pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "ingress-1", labels: { istio: "ingressgateway" } },
      spec: { containers: [{ name: "proxy", image: "mesh/proxy:1" }] },
    });
    await status(INGRESS_POD, { status: { phase: "Pending" } });
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("a Pending gateway pod, no Service and no Secret where the pods run: each reported", async () => {
    expect(await gatewayFindings()).to.deep.equal([
      "gateway-pods-ready error: selector istio=ingressgateway matches 1 ingress gateway pod(s), none Ready " +
        "(mesh-system/ingress-1 Pending): nothing serves the Gateway",
      "gateway-service error: no Service in mesh-system selects the ingress gateway pods the selector " +
        "istio=ingressgateway matches: nothing routes traffic to them",
      `tls-secret error: tls.credentialName ${SECRET} (port 443) names a Secret that does not exist in mesh-system ` +
        `(the gateway pods run in mesh-system: the Secret must be there, a copy in vc-edge is not read)`,
    ]);
  });

  it(
    "the Secret in the cluster's namespace only does not count for a shared ingress; a Ready pod and a ClusterIP " +
      "Service leave no external address",
    async () => {
      await post(
        "/api/v1/namespaces/vc-edge/secrets",
        tlsSecret("vc-edge", SECRET, servingCertificate(["a.example.com"], 90)),
      );
      await status(INGRESS_POD, { status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } });
      await post("/api/v1/namespaces/mesh-system/services", {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "ingressgateway" },
        spec: {
          type: "ClusterIP",
          selector: { istio: "ingressgateway" },
          ports: [{ name: "http", port: 80, targetPort: 8080 }],
        },
      });
      expect(await gatewayFindings()).to.deep.equal([
        "gateway-service error: the ingress gateway Service mesh-system/ingressgateway exposes no port 443 of the " +
          "Gateway's servers",
        `tls-secret error: tls.credentialName ${SECRET} (port 443) names a Secret that does not exist in mesh-system ` +
          `(the gateway pods run in mesh-system: the Secret must be there, a copy in vc-edge is not read)`,
        "gateway-external-address warning: the ingress gateway Service mesh-system/ingressgateway has no external " +
          "address (ingressgateway is ClusterIP): only clients inside the cluster reach the Gateway",
      ]);
    },
  );

  it("a certificate for other names, close to expiry: an error for the hosts and a warning for the date", async () => {
    await post(
      "/api/v1/namespaces/mesh-system/secrets",
      tlsSecret("mesh-system", SECRET, servingCertificate(["b.example.com"], 5)),
    );
    const found = await gatewayFindings();
    expect(
      found.filter((f) => f.startsWith("tls-")),
      found.join("\n"),
    ).to.have.length(2);
    expect(found, found.join("\n")).to.include(
      `tls-certificate error: the certificate in Secret mesh-system/${SECRET} (port 443) does not name ` +
        `a.example.com (it names b.example.com): clients refuse the handshake`,
    );
    expect(found.find((f) => f.startsWith("tls-certificate warning"))).to.match(
      new RegExp(
        `^tls-certificate warning: the certificate in Secret mesh-system/${SECRET} \\(port 443\\) expires on \\S+, ` +
          `within 14 days$`,
      ),
    );
  });

  it(
    "quiet once the Service is a LoadBalancer with an address on the Gateway's port and the certificate " + "is right",
    async () => {
      const svc = "/api/v1/namespaces/mesh-system/services/ingressgateway";
      const patched = await kube().request(
        "PATCH",
        svc,
        { spec: { type: "LoadBalancer", ports: [{ name: "https", port: 443, targetPort: 8443 }] } },
        { contentType: "application/merge-patch+json" },
      );
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      await status(svc, { status: { loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } } });
      expect((await kube().request("DELETE", `/api/v1/namespaces/mesh-system/secrets/${SECRET}`)).status).to.equal(200);
      await post(
        "/api/v1/namespaces/mesh-system/secrets",
        tlsSecret("mesh-system", SECRET, servingCertificate(["a.example.com"], 90)),
      );
      expect(await gatewayFindings()).to.deep.equal([]);
    },
  );
});
