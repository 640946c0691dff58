// A progressive rollout on a real API server (no kubelet: the test reports status through the status subresource as a
// controller would): three clusters, the reconciler as its real ServiceAccount; the canary moves alone, a Degraded
// canary halts the rollout with the two later clusters not written at all, and a syncer cannot write the rollout
// record.
import { expect } from "chai";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { readClusterHealth } from "../../src/health/read.js";
import { silentLogger } from "../../src/model/log.js";
import { defaultEngine } from "../../src/pipeline/engine.js";
import { newPassState, runPass, type PassDeps } from "../../src/reconciler/pass.js";
import { FolderSource } from "../../src/reconciler/source.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { rolloutName } from "../../src/rollout/store.js";
import type { RolloutRecord } from "../../src/rollout/types.js";
import { KubeApiError, KubeClient } from "../../src/host/client.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { TestRepo } from "../support/git-server.js";
import { useRealKube } from "../support/real-kube.js";

const ROOT = join(import.meta.dirname, "..", "..");
const tag = (v: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${v}"\n`;
const RECORD = `/api/v1/namespaces/vc-system/configmaps/${rolloutName("")}`;

describe("e2e: a progressive rollout on a real API server", function () {
  this.timeout(240_000);
  const kube = useRealKube();
  let repo: TestRepo;
  let client: KubeClient;
  let deps: PassDeps;
  const later = ["east", "west"];

  const sts = (c: string) => `/apis/apps/v1/namespaces/vc-${c}/statefulsets/${c}`;
  const get = async <T = KubeObject>(path: string): Promise<T> => {
    const res = await kube().request<T>("GET", path);
    expect(res.status, path).to.equal(200);
    return res.body;
  };
  const setStatus = async (path: string, status: (live: KubeObject) => unknown): Promise<void> => {
    const live = await get(path);
    const res = await kube().request("PUT", `${path}/status`, { ...live, status: status(live) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const record = async (): Promise<RolloutRecord> =>
    JSON.parse(((await get<KubeObject>(RECORD)).data as Record<string, string>).rollout!) as RolloutRecord;
  const tagOf = async (c: string) => /"image":"[^"]*:([^"]+)"/.exec(JSON.stringify((await get(sts(c))).spec))![1];

  before(async () => {
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
    repo = new TestRepo();
    for (const c of ["canary", ...later])
      cpSync(resolve(ROOT, "clusters/minimal"), join(repo.work, "clusters", c), { recursive: true });
    writeFileSync(join(repo.work, "clusters/canary/cluster.yaml"), 'labels:\n  canary: "true"\n');
    mkdirSync(join(repo.work, "fleet"));
    writeFileSync(join(repo.work, "fleet/values.yaml"), tag("0.1.0"));
    writeFileSync(
      join(repo.work, "fleet/rollout.yaml"),
      'waves:\n  - name: canary\n    selector: {matchLabels: {canary: "true"}}\n  - name: rest\nhealthGate: {timeout: 10m}\n',
    );
    repo.commit("three clusters, a base and a rollout");
    // The reconciler as deployed: its own ServiceAccount and ClusterRole.
    client = KubeClient.open({ kubeconfig: await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler") });
    const target = new KubeTarget(client);
    target.source = "";
    deps = {
      engine: defaultEngine,
      target,
      store: new KubeStatusStore(client, { source: "", records: target.records }),
      allowMassPrune: false,
      mayWrite: () => true,
      source: new FolderSource(repo.work),
      logger: silentLogger,
      health: (ns, desired) => readClusterHealth(client, ns, desired),
    };
  });
  after(() => {
    client?.close();
    repo?.dispose();
  });

  it("moves the canary alone and halts on its Degraded pod, the later clusters not written at all", async () => {
    const state = newPassState();
    const first = await runPass(deps, state, { kind: "full" });
    expect(first.clusters.map((c) => c.result)).to.deep.equal(["applied", "applied", "applied"]);
    expect((await record()).phase).to.equal("Completed"); // the first pass only pins: nothing to roll out

    const before = await Promise.all(later.map((c) => get(sts(c))));
    writeFileSync(join(repo.work, "fleet/values.yaml"), tag("0.2.0"));
    repo.commit("new control-plane tag");
    const mark = kube().writes().length;
    await runPass(deps, state, { kind: "full" });
    let r = await record();
    expect(r).to.deep.include({ phase: "Progressing", wave: 0 });
    expect(r.waves).to.deep.equal([
      { name: "canary", clusters: ["canary"] },
      { name: "rest", clusters: ["east", "west"] },
    ]);
    expect(await tagOf("canary")).to.equal("0.2.0");

    // The canary's controller reports its new revision, and its pod crashes.
    await setStatus(sts("canary"), (live) => ({
      observedGeneration: live.metadata.generation,
      replicas: 1,
      readyReplicas: 0,
      currentReplicas: 1,
      updatedReplicas: 1,
      currentRevision: "canary-2",
      updateRevision: "canary-2",
    }));
    const pod = await kube().request("POST", "/api/v1/namespaces/vc-canary/pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "canary-0",
        labels: { app: "vc", release: "canary", "controller-revision-hash": "canary-2" },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            name: "canary",
            uid: (await get(sts("canary"))).metadata.uid,
            controller: true,
          },
        ],
      },
      spec: { containers: [{ name: "syncer", image: "registry.invalid/syncer:1" }] },
    });
    expect(pod.status, JSON.stringify(pod.body)).to.equal(201);
    await setStatus("/api/v1/namespaces/vc-canary/pods/canary-0", () => ({
      phase: "Running",
      conditions: [{ type: "Ready", status: "False" }],
      containerStatuses: [
        {
          name: "syncer",
          ready: false,
          restartCount: 4,
          image: "x",
          imageID: "",
          state: { waiting: { reason: "CrashLoopBackOff" } },
        },
      ],
    }));
    for (let i = 0; i < 3 && (await record()).phase !== "Halted"; i++) await runPass(deps, state, { kind: "full" });
    r = await record();
    expect(r.phase).to.equal("Halted");
    expect(r.message).to.equal("wave canary halted: cluster canary is Degraded: pod canary-0 CrashLoopBackOff");

    // The later clusters: byte for byte as before (same resourceVersion), and no write in their namespaces.
    const after = await Promise.all(later.map((c) => get(sts(c))));
    expect(after.map((s) => s.metadata.resourceVersion)).to.deep.equal(before.map((s) => s.metadata.resourceVersion));
    expect(after.map((s) => JSON.stringify(s.spec))).to.deep.equal(before.map((s) => JSON.stringify(s.spec)));
    expect(
      kube()
        .writes()
        .slice(mark)
        .filter((w) => later.some((c) => w.namespace === `vc-${c}`)),
    ).to.deep.equal([]);
  });

  it(
    "the canary's syncer (a TokenRequest token of its real ServiceAccount) gets 403 reading or writing the " +
      "rollout record",
    async () => {
      const syncer = KubeClient.open({
        kubeconfig: await kube().serviceAccountKubeconfig("vc-canary", "vc-canary"),
        retry: { attempts: 1 },
      });
      try {
        const record = await get<KubeObject>(RECORD);
        const forged = {
          ...record,
          data: {
            ...(record.data as object),
            request: JSON.stringify({ action: "resume", by: "tenant", at: "2026-01-01T00:00:00Z" }),
          },
        };
        const tries: Array<[string, string, unknown, string?]> = [
          ["GET", RECORD, undefined],
          ["PUT", RECORD, forged],
          [
            "PATCH",
            `${RECORD}?fieldManager=vc-rollout&force=true`,
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: record.metadata.name, namespace: "vc-system" },
              data: { request: "{}" },
            },
            "application/apply-patch+yaml",
          ],
          ["DELETE", RECORD, undefined],
          [
            "POST",
            "/api/v1/namespaces/vc-system/configmaps",
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "vc-base-0000000000000000", labels: { "vc.orch.io/record": "base" } },
              data: {},
            },
          ],
        ];
        for (const [method, path, body, contentType] of tries) {
          const err = await syncer
            .request(method, path, { ...(body ? { body } : {}), ...(contentType ? { contentType } : {}) })
            .catch((e: unknown) => e);
          expect(err, `${method} ${path}`).to.be.instanceOf(KubeApiError);
          expect((err as KubeApiError).status, `${method} ${path}`).to.equal(403);
        }
        expect((await record).metadata.resourceVersion).to.equal(
          (await get<KubeObject>(RECORD)).metadata.resourceVersion,
        );
      } finally {
        syncer.close();
      }
    },
  );
});
