// vc doctor on a real API server, for what it says beside the checks: init containers that loop or run out of memory
// (status written through the status subresource, as a kubelet would), a pod recreated under an embedded store, a
// cluster suspended for a restore, and repository values that are invalid. Each with its quiet counterpart.
import { expect } from "chai";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openHost } from "../../src/ops/host.js";
import { P } from "../../src/ops/paths.js";
import { resumeCluster, suspendCluster } from "../../src/records/suspend.js";
import { breakDoctorHost, writeDoctorRepo } from "../ops/doctor-host.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

type Report = {
  remarks: string[];
  findings: Array<{ check: string; severity: string; object: string; message: string }>;
};

describe("e2e: vc doctor's states and remarks", function () {
  this.timeout(120_000);
  const kube = useRealKube();
  let repo: string;
  const doctor = async (name: string): Promise<Report> => {
    const res = await runVc(["doctor", name, "-o", "json", "--kubeconfig", kube().kubeconfigPath, "--repo", repo]);
    expect(res.stderr).to.equal("");
    return JSON.parse(res.stdout) as Report;
  };
  const withHost = async <T>(fn: (host: ReturnType<typeof openHost>) => Promise<T>): Promise<T> => {
    const host = openHost({ kubeconfig: kube().kubeconfigPath });
    try {
      return await fn(host);
    } finally {
      host.close();
    }
  };

  before(async () => {
    await installMeshCrds(kube());
    repo = writeDoctorRepo();
    await breakDoctorHost(kube().kubeconfigPath, repo);
  });
  after(() => repo && rmSync(repo, { recursive: true, force: true }));

  it("an init container in CrashLoopBackOff after an OOM kill is found; once it completed, nothing", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "init-x-default-x-calm", labels: { "vc.orch.io/managed-by": "calm" } },
      spec: {
        initContainers: [{ name: "migrate", image: "migrate:1", resources: { limits: { memory: "64Mi" } } }],
        containers: [{ name: "app", image: "app:1", resources: { requests: { cpu: "10m", memory: "16Mi" } } }],
      },
    };
    await withHost(async (host) => {
      await host.create(P.pods("vc-calm"), pod);
      const status = (initContainerStatuses: unknown[], phase: string) =>
        host.mergePatch(`${P.pods("vc-calm", "init-x-default-x-calm")}/status`, {
          status: { phase, initContainerStatuses },
        });
      await status(
        [
          {
            name: "migrate",
            image: "migrate:1",
            imageID: "",
            ready: false,
            restartCount: 6,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
          },
        ],
        "Pending",
      );
      const looping = (await doctor("calm")).findings.filter((f) => f.object === "Pod vc-calm/init-x-default-x-calm");
      expect(looping.map((f) => `${f.check} ${f.severity} ${f.message}`)).to.deep.equal([
        "crash-loop error init container migrate in CrashLoopBackOff after 6 restarts, last terminated OOMKilled",
      ]);
      await status(
        [
          {
            name: "migrate",
            image: "migrate:1",
            imageID: "",
            ready: true,
            restartCount: 0,
            state: { terminated: { reason: "Completed", exitCode: 0 } },
          },
        ],
        "Running",
      );
      expect(
        (await doctor("calm")).findings.filter((f) => f.object === "Pod vc-calm/init-x-default-x-calm"),
      ).to.deep.equal([]);
    });
  });

  it(
    "the persistence note blames lost state only once the StatefulSet created the pod again, not on container " +
      "restarts",
    async () => {
      await withHost(async (host) => {
        await host.mergePatch(`${P.pods("vc-calm", "calm-0")}/status`, {
          status: {
            phase: "Running",
            conditions: [{ type: "Ready", status: "True" }],
            containerStatuses: [
              {
                name: "syncer",
                image: "vc/syncer:1",
                imageID: "",
                ready: true,
                restartCount: 3,
                state: { running: {} },
              },
            ],
          },
        });
        const restarted = (await doctor("calm")).findings.find((f) => f.check === "persistence")!;
        expect(restarted.severity).to.equal("note");
        expect(restarted.message).to.contain("its container restarted 3 time(s), which keeps the store");
        for (const n of [1, 2]) {
          const event = {
            metadata: { name: `calm.create${n}` },
            involvedObject: { kind: "StatefulSet", name: "calm", namespace: "vc-calm" },
            reason: "SuccessfulCreate",
            message: "create Pod calm-0 in StatefulSet calm successful",
            type: "Normal",
            lastTimestamp: `2026-01-01T1${n}:00:00Z`,
            source: { component: "statefulset-controller" },
          };
          await host.create(P.events("vc-calm"), { apiVersion: "v1", kind: "Event", ...event });
        }
        const recreated = (await doctor("calm")).findings.find((f) => f.check === "persistence")!;
        expect(recreated.severity).to.equal("warning");
        expect(recreated.message).to.contain(
          "the control plane's pod was recreated (the StatefulSet created calm-0 2 times)",
        );
      });
    },
  );

  it(
    "a cluster suspended for a restore says so, and its missing control-plane pod is an expected note; resumed, " +
      "an error again",
    async () => {
      const client = () => openHost({ kubeconfig: kube().kubeconfigPath });
      const host = client();
      try {
        await suspendCluster(host.client, "shop", "vc-shop", "vc restore shop registry.local/shop:1");
        const during = await doctor("shop");
        expect(during.remarks[0]).to.match(/^suspended for a restore \(vc restore shop registry\.local\/shop:1\): /);
        const pod = during.findings.find((f) => f.check === "control-plane-pod")!;
        expect(pod.severity).to.equal("note");
        expect(pod.message).to.match(/^expected during the restore: /);
        await resumeCluster(host.client, "shop", "vc-shop");
        const after = await doctor("shop");
        expect(after.remarks).to.deep.equal([]);
        expect(after.findings.find((f) => f.check === "control-plane-pod")!.severity).to.equal("error");
      } finally {
        host.close();
      }
    },
  );

  it(
    "NetworkPolicies selecting the control plane that block its API port and the host API server are found; " +
      "admitting both is quiet",
    async () => {
      const netpol = (name: string, spec: unknown) =>
        kube().request("POST", "/apis/networking.k8s.io/v1/namespaces/vc-calm/networkpolicies", {
          apiVersion: "networking.k8s.io/v1",
          kind: "NetworkPolicy",
          metadata: { name },
          spec,
        });
      const policyFindings = async () =>
        (await doctor("calm")).findings
          .filter((f) => f.check === "network-policy")
          .map((f) => `${f.severity} ${f.message}`);
      expect(await policyFindings()).to.deep.equal([]);
      expect((await netpol("deny-all", { podSelector: {}, policyTypes: ["Ingress", "Egress"] })).status).to.equal(201);
      // This server advertises 127.0.0.1, which Endpoints may not hold: the address a cluster's API server publishes is
      // written as it would be, where discovery says the server lists it (EndpointSlices from 1.21, else Endpoints).
      const [ip, port] = ["192.0.2.10", 6443];
      const slices = await kube().request<{ resources?: Array<{ name: string }> }>("GET", "/apis/discovery.k8s.io/v1");
      const written = slices.body.resources?.some((r) => r.name === "endpointslices")
        ? await kube().request("POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
            apiVersion: "discovery.k8s.io/v1",
            kind: "EndpointSlice",
            metadata: {
              name: "kubernetes",
              namespace: "default",
              labels: { "kubernetes.io/service-name": "kubernetes" },
            },
            addressType: "IPv4",
            endpoints: [{ addresses: [ip], conditions: { ready: true } }],
            ports: [{ name: "https", port, protocol: "TCP" }],
          })
        : await kube().request("PUT", "/api/v1/namespaces/default/endpoints/kubernetes", {
            apiVersion: "v1",
            kind: "Endpoints",
            metadata: { name: "kubernetes", namespace: "default" },
            subsets: [{ addresses: [{ ip }], ports: [{ name: "https", port, protocol: "TCP" }] }],
          });
      expect(written.status, JSON.stringify(written.body)).to.be.oneOf([200, 201]);
      expect(await policyFindings()).to.deep.equal([
        `error NetworkPolicies deny-all select the control plane's pod and admit no connection to the host API ` +
          `server (${ip}:${port}): the syncer cannot sync, and its calls hang`,
        "error NetworkPolicies deny-all select the control plane's pod and admit no connection to the virtual API " +
          "server's port 8443: vc connect, kubectl and the metrics proxy hang",
      ]);
      const allow = {
        podSelector: { matchLabels: { release: "calm", app: "vc" } },
        policyTypes: ["Ingress", "Egress"],
        ingress: [{ ports: [{ port: 8443, protocol: "TCP" }] }],
        egress: [{ to: [{ ipBlock: { cidr: `${ip}/32` } }], ports: [{ port, protocol: "TCP" }] }],
      };
      expect((await netpol("control-plane", allow)).status).to.equal(201);
      expect(await policyFindings()).to.deep.equal([]);
    },
  );

  it("invalid values in the repository: says it went by the live configuration", async () => {
    writeFileSync(join(repo, "clusters/shop/values.yaml"), "integrations:\n  mesh:\n    enabled: maybe\n");
    const report = await doctor("shop");
    expect(report.remarks).to.have.length(1);
    expect(report.remarks[0]).to.match(
      /^the repository's values of clusters\/shop are invalid \(.*values\.yaml:3:\d+.*\): checked against the configuration the control plane runs with \(Secret vc-config-shop\) instead$/,
    );
    // The live configuration (the mesh conflict in it) is what the checks went by.
    expect(report.findings.map((f) => f.check)).to.include("mesh-custom-resource");
  });
});
