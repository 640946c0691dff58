// Health on a real API server (no kubelet, no controllers): the test sets each kind's status through its status
// subresource as a controller would, and vc reads health from it; vc apply --wait's exit codes: healthy, degraded,
// timeout.
import { expect } from "chai";
import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { objectHealth } from "../../src/health/object.js";
import { readClusterHealth } from "../../src/health/read.js";
import { KubeClient } from "../../src/host/client.js";
import { TestRepo } from "../support/git-server.js";
import { createObject, runningPodStatus, setStatus as setStatusOf } from "../support/kube-status.js";
import { installCertManagerCrds, useRealKube, waitFor } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";

describe("e2e: health and vc apply --wait, on a real API server", function () {
  this.timeout(180_000);
  const kube = useRealKube();
  let repo: TestRepo;

  const setStatus = (path: string, status: (live: KubeObject) => unknown) => setStatusOf(kube(), path, status);
  const create = async (path: string, body: unknown): Promise<void> => void (await createObject(kube(), path, body));
  const apply = (...args: string[]) =>
    runVc(["apply", repo.work, "--target", "kube", "--kubeconfig", kube().kubeconfigPath, ...args]);
  const STS = "/apis/apps/v1/namespaces/vc-minimal/statefulsets/minimal";
  const POD = "/api/v1/namespaces/vc-minimal/pods/minimal-0";
  const runningPod = (waiting?: string) => runningPodStatus(waiting);

  before(async () => {
    await installCertManagerCrds(kube());
    repo = new TestRepo();
    cpSync(resolve("clusters/minimal"), join(repo.work, "clusters/minimal"), { recursive: true });
    repo.commit("fleet");
  });
  after(() => repo?.dispose());

  it(
    "vc apply --wait times out (exit 1, naming the cluster and why) while no controller reports the " + "StatefulSet",
    async () => {
      const res = await apply("--wait", "--timeout", "2s");
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stderr).to.match(
        /timed out after 2s waiting for cluster minimal \(Progressing: StatefulSet vc-minimal\/minimal: /,
      );
      const json = await apply("--wait", "--timeout", "1s", "-o", "json");
      expect(json.code).to.equal(1);
      expect((JSON.parse(json.stdout) as { wait: unknown }).wait).to.deep.include({
        result: "timeout",
        cluster: "minimal",
      });
    },
  );

  it(
    "is Healthy once the StatefulSet reports every replica ready on its update revision and its pod is " +
      "Ready: exit 0",
    async () => {
      const sts = await setStatus(STS, (live) => ({
        observedGeneration: live.metadata.generation,
        replicas: 1,
        readyReplicas: 1,
        currentReplicas: 1,
        updatedReplicas: 1,
        currentRevision: "minimal-1",
        updateRevision: "minimal-1",
      }));
      expect(objectHealth(sts).status).to.equal("Healthy");
      await create("/api/v1/namespaces/vc-minimal/pods", {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: "minimal-0",
          labels: { app: "vc", release: "minimal", "controller-revision-hash": "minimal-1" },
          ownerReferences: [
            { apiVersion: "apps/v1", kind: "StatefulSet", name: "minimal", uid: sts.metadata.uid, controller: true },
          ],
        },
        spec: { containers: [{ name: "syncer", image: "registry.invalid/syncer:1" }] },
      });
      // A pod nobody reports on is Pending: the cluster is still progressing.
      const client = KubeClient.open({ kubeconfig: kube().kubeconfigPath });
      const desired = JSON.parse((await runVc(["render", repo.work, "-o", "json"])).stdout) as { items: KubeObject[] };
      expect((await readClusterHealth(client, "vc-minimal", desired.items)).reason).to.equal("pod minimal-0 Pending");
      await setStatus(POD, () => runningPod());
      const h = await readClusterHealth(client, "vc-minimal", desired.items);
      expect(h.status, JSON.stringify(h)).to.equal("Healthy");
      expect(h.objects.map((o) => o.object)).to.include.members([
        "Namespace vc-minimal",
        "StatefulSet vc-minimal/minimal",
        "Pod vc-minimal/minimal-0",
      ]);

      const res = await apply("--wait", "--timeout", "30s");
      expect(res.code, res.stdout + res.stderr).to.equal(0);
      expect(res.stdout).to.include("cluster minimal: Healthy");
    },
  );

  it(
    "a pod of the update revision in CrashLoopBackOff makes vc apply --wait exit 1 naming the cluster and " + "the pod",
    async () => {
      await setStatus(POD, () => runningPod("CrashLoopBackOff"));
      const res = await apply("--wait", "--timeout", "30s");
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stderr).to.include("cluster minimal is Degraded: pod minimal-0 CrashLoopBackOff");
      // vc list and vc describe read the same health from the host.
      const list = await runVc(["list", "--repo", repo.work, "--kubeconfig", kube().kubeconfigPath, "-o", "json"]);
      expect(list.code, list.stderr).to.equal(0);
      expect((JSON.parse(list.stdout) as Array<{ name: string }>).find((r) => r.name === "minimal")).to.deep.include({
        health: "Degraded",
        healthReason: "pod minimal-0 CrashLoopBackOff",
      });
      const describe = await runVc(["describe", "minimal", "--repo", repo.work, "--kubeconfig", kube().kubeconfigPath]);
      expect(describe.stdout).to.include("Health:          Degraded: pod minimal-0 CrashLoopBackOff");
    },
  );

  it(
    "reads each kind's health from the status the real server stores: Deployment, APIService, Certificate, claim, " +
      "Namespace",
    async () => {
      const ns = "health-kinds";
      await create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      expect(objectHealth((await kube().request<KubeObject>("GET", `/api/v1/namespaces/${ns}`)).body).status).to.equal(
        "Healthy",
      );

      await create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "proxy" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "proxy" } },
          template: {
            metadata: { labels: { app: "proxy" } },
            spec: { containers: [{ name: "p", image: "registry.invalid/p:1" }] },
          },
        },
      });
      const dpath = `/apis/apps/v1/namespaces/${ns}/deployments/proxy`;
      const stuck = await setStatus(dpath, (l) => ({
        observedGeneration: l.metadata.generation,
        replicas: 1,
        updatedReplicas: 1,
        conditions: [
          {
            type: "Progressing",
            status: "False",
            reason: "ProgressDeadlineExceeded",
            message: "timed out progressing",
          },
        ],
      }));
      expect(objectHealth(stuck).status).to.equal("Degraded");
      const fine = await setStatus(dpath, (l) => ({
        observedGeneration: l.metadata.generation,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [
          { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
          { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
        ],
      }));
      expect(objectHealth(fine).status).to.equal("Healthy");

      await create("/apis/apiregistration.k8s.io/v1/apiservices", {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: "v1beta1.health.example.io" },
        spec: {
          group: "health.example.io",
          version: "v1beta1",
          service: { namespace: ns, name: "proxy", port: 443 },
          groupPriorityMinimum: 100,
          versionPriority: 100,
          insecureSkipTLSVerify: true,
        },
      });
      // This server's own availability controller reports the APIService (its service does not exist): vc judges what
      // it stored.
      const apiPath = "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.health.example.io";
      let stored: KubeObject | undefined;
      await waitFor(async () => {
        stored = (await kube().request<KubeObject>("GET", apiPath)).body;
        return (stored.status as { conditions?: unknown[] } | undefined)?.conditions !== undefined;
      }, "the aggregator to report the APIService");
      const available = (
        stored!.status as { conditions: Array<{ type: string; status: string; message?: string }> }
      ).conditions.find((c) => c.type === "Available")!;
      expect(available.status).to.equal("False");
      expect(objectHealth(stored!)).to.deep.equal({
        status: "Progressing",
        reason: `not available: ${available.message}`,
      });
      // Available=True as the aggregator writes it once the backend answers.
      expect(
        objectHealth({ ...stored!, status: { conditions: [{ ...available, status: "True", reason: "Passed" }] } })
          .status,
      ).to.equal("Healthy");

      await create(`/apis/cert-manager.io/v1/namespaces/${ns}/certificates`, {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: { name: "gw" },
        spec: { secretName: "gw-tls", dnsNames: ["a.example.io"], issuerRef: { name: "ca" } },
      });
      const cpath = `/apis/cert-manager.io/v1/namespaces/${ns}/certificates/gw`;
      expect(
        objectHealth(
          await setStatus(cpath, () => ({
            conditions: [{ type: "Ready", status: "False", reason: "IssuerNotFound", message: "issuer ca not found" }],
          })),
        ),
      ).to.deep.equal({ status: "Degraded", reason: "not ready: issuer ca not found" });
      expect(
        objectHealth(
          await setStatus(cpath, () => ({ conditions: [{ type: "Ready", status: "True", reason: "Ready" }] })),
        ).status,
      ).to.equal("Healthy");

      await create(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      });
      const ppath = `/api/v1/namespaces/${ns}/persistentvolumeclaims/data`;
      expect(objectHealth((await kube().request<KubeObject>("GET", ppath)).body).status).to.equal("Progressing");
      expect(
        objectHealth(
          await setStatus(ppath, () => ({
            phase: "Bound",
            accessModes: ["ReadWriteOnce"],
            capacity: { storage: "1Gi" },
          })),
        ).status,
      ).to.equal("Healthy");
    },
  );
});
