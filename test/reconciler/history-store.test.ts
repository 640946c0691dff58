// A cluster's history beyond the status's 10: kept in vc-history, bounded by --history-limit and by bytes, read by vc status and vc history.
import { expect } from "chai";
import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { HISTORY_BYTES, nextArchive } from "../../src/reconciler/archive.js";
import { fromData, HISTORY_LIMIT, record, ZERO_COUNTS, type ClusterStatus, type Reconciliation } from "../../src/reconciler/status.js";
import { HISTORY_CONFIGMAP, historyConfigMap, KubeStatusStore, STATUS_CONFIGMAP, statusConfigMap } from "../../src/reconciler/status-store.js";
import { KubeClient } from "../../src/target/kube/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { TestRepo } from "../support/git-server.js";
import { runVc } from "../support/vc.js";

const dataBytes = (cm: KubeObject | undefined) => Object.values((cm?.data as Record<string, string>) ?? {}).reduce((n, v) => n + Buffer.byteLength(v, "utf8"), 0);
const at = (i: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString();

describe("history beyond the status: vc-history, bounded by count and bytes", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let kube: string[];
  beforeEach(async () => {
    server = await startKubeServer({ profile: "current" }); // the user is the server's answer (SelfSubjectReview)
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
  });
  afterEach(async () => server.close());

  const cm = (name: string) => server.get("v1", "ConfigMap", "vc-minimal", name);
  const readStatus = async () => {
    const res = await runVc(["status", ...kube, "--cluster", "minimal", "-o", "json"]);
    expect(res.code, res.stderr).to.be.oneOf([0, 1]); // 1: the last result is failed
    return JSON.parse(res.stdout) as ClusterStatus;
  };

  it("vc apply keeps --history-limit runs across vc-status and vc-history; vc status --cluster and vc history read both", async () => {
    const repo = new TestRepo();
    try {
      cpSync(resolve("clusters/minimal"), join(repo.work, "clusters/minimal"), { recursive: true });
      const commits: string[] = [];
      for (let i = 0; i < 12; i++) {
        repo.write({ "clusters/minimal/values.yaml": `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: ${200 + i}m\n` });
        commits.unshift(repo.commit(`cpu ${200 + i}m`));
        const res = await runVc(["apply", repo.work, ...kube, "--history-limit", "11"]);
        expect(res.code, res.stdout).to.equal(0);
      }
      const kept = commits.slice(0, 11);
      // The status keeps its 10; the one before them went to vc-history; the oldest is gone.
      expect(fromData(cm(STATUS_CONFIGMAP)!.data as Record<string, string>)!.history.map((r) => r.revision)).to.deep.equal(kept.slice(0, HISTORY_LIMIT));
      expect((JSON.parse((cm(HISTORY_CONFIGMAP)!.data as Record<string, string>).history!) as Reconciliation[]).map((r) => r.revision)).to.deep.equal(kept.slice(10));
      expect(cm(HISTORY_CONFIGMAP)!.metadata.labels).to.deep.include({ "vc.orch.io/managed-by": "minimal" }).and.not.have.property("vc.orch.io/status");

      expect((await readStatus()).history.map((r) => r.revision)).to.deep.equal(kept);
      const hist = await runVc(["history", "minimal", "--repo", repo.work, ...kube, "--limit", "30", "-o", "json"]);
      expect(hist.code, hist.stderr).to.equal(0);
      const h = JSON.parse(hist.stdout) as { entries: Array<{ commit: string; reconciliations: Reconciliation[] }> };
      expect(h.entries.filter((e) => e.reconciliations.length > 0).map((e) => e.commit)).to.deep.equal(kept);
      expect(h.entries.flatMap((e) => e.reconciliations).every((r) => r.via === "apply" && r.by === "admin")).to.equal(true);

      // A bad limit is a usage error, not a run.
      const bad = await runVc(["apply", repo.work, ...kube, "--history-limit", "5"]);
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.include('invalid --history-limit "5": use an integer of at least 10');
    } finally {
      repo.dispose();
    }
  });

  it("a long history of large entries stays within its byte budget, far from a ConfigMap's 1 MiB, on a server that enforces the limit", async () => {
    // 100 KB of a server's error text in 3-byte characters: cut to MESSAGE_LIMIT characters (about 6 KiB an entry).
    const failed = (i: number): Reconciliation => ({ revision: `r${i}`, time: at(i), durationMs: 1, result: "failed", counts: { ...ZERO_COUNTS, failed: 1 }, message: "\u20ac".repeat(100_000), via: "apply", by: "alice" });
    // The first 95 runs folded here and stored as the store keeps them (the in-memory server is slow with 500 KB bodies) ...
    let s: ClusterStatus | undefined;
    let archive: Reconciliation[] = [];
    for (let i = 1; i <= 95; i++) {
      s = record(s, "minimal", "vc-minimal", failed(i));
      if (s.spilled) archive = nextArchive(archive, s.spilled, 100_000);
    }
    s = { ...s!, owner: "fleet", spilled: undefined };
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-minimal" } });
    server.put(statusConfigMap(s));
    server.put(historyConfigMap("minimal", "vc-minimal", archive, "fleet"));
    // ... and 15 more written by the store itself.
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    const store = new KubeStatusStore(client, { historyLimit: 100_000 });
    try {
      for (let i = 96; i <= 110; i++) {
        s = record(s, "minimal", "vc-minimal", failed(i));
        await store.write(s);
        s = { ...s, spilled: undefined };
      }
    } finally {
      client.close();
    }
    const archived = JSON.parse((cm(HISTORY_CONFIGMAP)!.data as Record<string, string>).history!) as Reconciliation[];
    expect(Buffer.byteLength(JSON.stringify(archived), "utf8")).to.be.at.most(HISTORY_BYTES);
    expect(dataBytes(cm(HISTORY_CONFIGMAP))).to.be.lessThan(HISTORY_BYTES + 1024);
    expect(dataBytes(cm(STATUS_CONFIGMAP))).to.be.lessThan(100 * 1024);
    // The newest that fit, without a gap below the status's 10; the oldest dropped.
    expect(archived.length).to.be.within(60, 90);
    expect(archived.map((r) => r.revision)).to.deep.equal(Array.from({ length: archived.length }, (_, k) => `r${100 - k}`));
    const read = await readStatus();
    expect(read.history.map((r) => r.revision)).to.deep.equal(Array.from({ length: HISTORY_LIMIT + archived.length }, (_, k) => `r${110 - k}`));
  });

  it("reads and continues a status the reconciler wrote before histories were kept beside it", async () => {
    const repo = new TestRepo();
    try {
      cpSync(resolve("clusters/minimal"), join(repo.work, "clusters/minimal"), { recursive: true });
      const head = repo.commit("minimal");
      expect((await runVc(["apply", repo.work, ...kube])).code).to.equal(0);
      // Ten reconciler entries in the format of the reconciler before this change: no via, no by, no vc-history.
      const old = Array.from({ length: 10 }, (_, k) => ({ revision: head, time: at(100 - k), durationMs: 3, result: "applied", counts: { ...ZERO_COUNTS, unchanged: 20 } }));
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: STATUS_CONFIGMAP, namespace: "vc-minimal", labels: { "vc.orch.io/managed-by": "minimal", "vc.orch.io/status": "true", "vc.orch.io/owner": (cm(STATUS_CONFIGMAP)!.metadata.labels as Record<string, string>)["vc.orch.io/owner"]! } },
        data: { cluster: "minimal", hostNamespace: "vc-minimal", lastAppliedRevision: head, lastAppliedTime: at(100), lastAttemptedRevision: head, lastAttemptTime: at(100), result: "applied", message: "0 created, 0 updated, 0 deleted, 20 unchanged", history: JSON.stringify(old) },
      });
      server.remove("v1", "ConfigMap", "vc-minimal", HISTORY_CONFIGMAP);
      const before = await readStatus();
      expect(before.history).to.have.length(10);
      expect((await runVc(["status", ...kube, "--cluster", "minimal"])).stdout).to.match(/applied by:\s+reconciler/).and.match(/applied\s+reconciler\s+0\s+0\s+0\s+20\s+0/);

      repo.write({ "clusters/minimal/values.yaml": "controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: 300m\n" });
      const next = repo.commit("cpu");
      expect((await runVc(["apply", repo.work, ...kube])).code).to.equal(0);
      const after = await readStatus();
      expect(after.history.map((r) => [r.revision, r.via ?? "reconciler"])).to.deep.equal([[next, "apply"], ...old.map((r) => [r.revision, "reconciler"])]);
      expect((JSON.parse((cm(HISTORY_CONFIGMAP)!.data as Record<string, string>).history!) as Reconciliation[]).map((r) => r.time)).to.deep.equal([old[9]!.time]);
    } finally {
      repo.dispose();
    }
  });

  it("a history write that loses a race reads again and keeps both writers' entries", async () => {
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    const store = new KubeStatusStore(client);
    try {
      let s: ClusterStatus | undefined;
      for (let i = 1; i <= 12; i++) {
        s = record(s, "minimal", "vc-minimal", { revision: `r${i}`, time: at(i), durationMs: 1, result: "applied", counts: { ...ZERO_COUNTS, updated: 1 } });
        if (i === 12) server.faults.add({ method: "PATCH", path: /\/configmaps\/vc-history$/, nth: 1, status: 409 });
        await store.write(s);
        s = { ...s, spilled: undefined };
      }
      expect(server.countRequests({ method: "PATCH", path: /\/configmaps\/vc-history$/ })).to.equal(2);
      expect((await store.history((await store.read("minimal", "vc-minimal"))!)).map((r) => r.revision)).to.deep.equal(Array.from({ length: 12 }, (_, k) => `r${12 - k}`));
    } finally {
      client.close();
    }
  });
});
