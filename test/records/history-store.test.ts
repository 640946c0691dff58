// A cluster's history beyond the status's 10: kept beside its record in the records namespace, bounded by
// --history-limit and by bytes, read by vc status and vc history.
import { expect } from "chai";
import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { HISTORY_BYTES, nextArchive } from "../../src/records/archive.js";
import {
  fromData,
  HISTORY_LIMIT,
  record,
  ZERO_COUNTS,
  type ClusterStatus,
  type Reconciliation,
} from "../../src/records/status.js";
import { HISTORY_CONFIGMAP, KubeStatusStore, STATUS_CONFIGMAP } from "../../src/records/status-store.js";
import { historyName, RECORD_LABEL, recordBase, recordLabels, statusData } from "../../src/records/record.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { TestRepo } from "../support/git-server.js";
import { runVc } from "../support/vc.js";

const dataBytes = (cm: KubeObject | undefined) =>
  Object.values((cm?.data as Record<string, string>) ?? {}).reduce((n, v) => n + Buffer.byteLength(v, "utf8"), 0);
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

  // The record of cluster minimal (whichever source's) and its history, in the records namespace.
  const cm = (which: typeof STATUS_CONFIGMAP | typeof HISTORY_CONFIGMAP) =>
    server
      .list("v1", "ConfigMap")
      .find(
        (c) =>
          c.metadata.namespace === DEFAULT_RECORDS_NAMESPACE &&
          c.metadata.labels?.[RECORD_LABEL] === (which === STATUS_CONFIGMAP ? "record" : "history") &&
          c.metadata.labels?.["vc.orch.io/managed-by"] === "minimal",
      );
  const readStatus = async () => {
    const res = await runVc(["status", ...kube, "--cluster", "minimal", "-o", "json"]);
    expect(res.code, res.stderr).to.be.oneOf([0, 1]); // 1: the last result is failed
    return JSON.parse(res.stdout) as ClusterStatus;
  };

  it(
    "vc apply keeps --history-limit runs across vc-status and vc-history; vc status --cluster and vc history " +
      "read both",
    async () => {
      const repo = new TestRepo();
      try {
        cpSync(resolve("clusters/minimal"), join(repo.work, "clusters/minimal"), { recursive: true });
        const commits: string[] = [];
        for (let i = 0; i < 12; i++) {
          repo.write({
            "clusters/minimal/values.yaml":
              `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        ` + `cpu: ${200 + i}m\n`,
          });
          commits.unshift(repo.commit(`cpu ${200 + i}m`));
          const res = await runVc(["apply", repo.work, ...kube, "--history-limit", "11"]);
          expect(res.code, res.stdout).to.equal(0);
        }
        const kept = commits.slice(0, 11);
        // The status keeps its 10; the one before them went to the record's history; the oldest is gone.
        expect(
          fromData(cm(STATUS_CONFIGMAP)!.data as Record<string, string>)!.history.map((r) => r.revision),
        ).to.deep.equal(kept.slice(0, HISTORY_LIMIT));
        expect(
          (JSON.parse((cm(HISTORY_CONFIGMAP)!.data as Record<string, string>).history!) as Reconciliation[]).map(
            (r) => r.revision,
          ),
        ).to.deep.equal(kept.slice(10));
        expect(cm(HISTORY_CONFIGMAP)!.metadata.labels).to.deep.include({
          "vc.orch.io/managed-by": "minimal",
          [RECORD_LABEL]: "history",
        });
        // Nothing of vc's record is in the host namespace, where the cluster's syncer may write.
        expect(server.get("v1", "ConfigMap", "vc-minimal", STATUS_CONFIGMAP)).to.equal(undefined);
        expect(server.get("v1", "ConfigMap", "vc-minimal", HISTORY_CONFIGMAP)).to.equal(undefined);

        expect((await readStatus()).history.map((r) => r.revision)).to.deep.equal(kept);
        const hist = await runVc(["history", "minimal", "--repo", repo.work, ...kube, "--limit", "30", "-o", "json"]);
        expect(hist.code, hist.stderr).to.equal(0);
        const h = JSON.parse(hist.stdout) as { entries: Array<{ commit: string; reconciliations: Reconciliation[] }> };
        expect(h.entries.filter((e) => e.reconciliations.length > 0).map((e) => e.commit)).to.deep.equal(kept);
        expect(
          h.entries.flatMap((e) => e.reconciliations).every((r) => r.via === "apply" && r.by === "admin"),
        ).to.equal(true);

        // A bad limit is a usage error, not a run.
        const bad = await runVc(["apply", repo.work, ...kube, "--history-limit", "5"]);
        expect(bad.code).to.equal(2);
        expect(bad.stderr).to.include('invalid --history-limit "5": use an integer of at least 10');
      } finally {
        repo.dispose();
      }
    },
  );

  it(
    "a long history of large entries stays within its byte budget, far from a ConfigMap's 1 MiB, on a server that " +
      "enforces the limit",
    async () => {
      // 100 KB of a server's error text in 3-byte characters: cut to MESSAGE_LIMIT characters (about 6 KiB an entry).
      const failed = (i: number): Reconciliation => ({
        revision: `r${i}`,
        time: at(i),
        durationMs: 1,
        result: "failed",
        counts: { ...ZERO_COUNTS, failed: 1 },
        message: "\u20ac".repeat(100_000),
        via: "apply",
        by: "alice",
      });
      // The first 95 runs folded here and stored as the store keeps them (the in-memory server is slow with 500 KB
      // bodies) ...
      let s: ClusterStatus | undefined;
      let archive: Reconciliation[] = [];
      for (let i = 1; i <= 95; i++) {
        s = record(s, "minimal", "vc-minimal", failed(i));
        if (s.spilled) archive = nextArchive(archive, s.spilled, 100_000);
      }
      s = { ...s!, owner: "fleet", spilled: undefined };
      server.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: DEFAULT_RECORDS_NAMESPACE, labels: { "vc.orch.io/platform-namespace": "true" } },
      });
      const base = recordBase(DEFAULT_RECORDS_NAMESPACE, "fleet", "minimal", "vc-minimal");
      server.put({ ...base, data: { ...(base.data as Record<string, string>), ...statusData(s) } });
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: historyName("fleet", "minimal"),
          namespace: DEFAULT_RECORDS_NAMESPACE,
          labels: recordLabels("fleet", "minimal", "history"),
        },
        data: { source: "fleet", cluster: "minimal", history: JSON.stringify(archive) },
      });
      // ... and 15 more written by the store itself.
      const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
      const store = new KubeStatusStore(client, { historyLimit: 100_000, source: "fleet" });
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
      expect(archived.map((r) => r.revision)).to.deep.equal(
        Array.from({ length: archived.length }, (_, k) => `r${100 - k}`),
      );
      const read = await readStatus();
      expect(read.history.map((r) => r.revision)).to.deep.equal(
        Array.from({ length: HISTORY_LIMIT + archived.length }, (_, k) => `r${110 - k}`),
      );
    },
  );

  it(
    "migrates a status and history kept in the host namespace before records: they read the same after, and the " +
      "run goes on from them",
    async () => {
      const repo = new TestRepo();
      try {
        cpSync(resolve("clusters/minimal"), join(repo.work, "clusters/minimal"), { recursive: true });
        const head = repo.commit("minimal");
        expect((await runVc(["apply", repo.work, ...kube])).code).to.equal(0);
        const owner = cm(STATUS_CONFIGMAP)!.metadata.labels!["vc.orch.io/owner"]!;
        // The host as vc left it before records: vc-status (ten reconciler entries, no via, no by) and vc-history in
        // the host namespace, the inventory on labels only, no record.
        const old = Array.from({ length: 10 }, (_, k) => ({
          revision: head,
          time: at(100 - k),
          durationMs: 3,
          result: "applied",
          counts: { ...ZERO_COUNTS, unchanged: 20 },
        }));
        const older = Array.from({ length: 3 }, (_, k) => ({
          revision: head,
          time: at(50 - k),
          durationMs: 2,
          result: "applied",
          counts: { ...ZERO_COUNTS, unchanged: 20 },
        }));
        const legacyStatus = {
          cluster: "minimal",
          hostNamespace: "vc-minimal",
          lastAppliedRevision: head,
          lastAppliedTime: at(100),
          lastAttemptedRevision: head,
          lastAttemptTime: at(100),
          result: "applied",
          message: "0 created, 0 updated, 0 deleted, 20 unchanged",
          history: JSON.stringify(old),
        };
        for (const c of server
          .list("v1", "ConfigMap")
          .filter((c) => c.metadata.namespace === DEFAULT_RECORDS_NAMESPACE))
          server.remove("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE, c.metadata.name);
        server.put({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: STATUS_CONFIGMAP,
            namespace: "vc-minimal",
            labels: { "vc.orch.io/managed-by": "minimal", "vc.orch.io/status": "true", "vc.orch.io/owner": owner },
          },
          data: legacyStatus,
        });
        server.put({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: HISTORY_CONFIGMAP,
            namespace: "vc-minimal",
            labels: { "vc.orch.io/managed-by": "minimal" },
          },
          data: { cluster: "minimal", history: JSON.stringify(older) },
        });
        // What vc read before: the status and, after its 10, the history beside it.
        const before = { ...fromData(legacyStatus)!, history: [...old, ...older] };

        // A dry run says what it would migrate and moves nothing.
        const dry = await runVc(["apply", repo.work, ...kube, "--dry-run"]);
        expect(dry.code, dry.stderr).to.equal(0);
        expect(dry.stderr).to.include("cluster minimal: would migrate vc's record from host namespace vc-minimal");
        expect(cm(STATUS_CONFIGMAP)).to.equal(undefined);

        const diff = await runVc(["diff", repo.work, ...kube, "--exit-code"]);
        expect(diff.code, diff.stdout + diff.stderr).to.equal(0); // the migrated inventory is the same: no conflict, no drift
        const migrated = await runVc(["apply", repo.work, ...kube]);
        expect(migrated.code, migrated.stdout + migrated.stderr).to.equal(0);
        expect(migrated.stderr).to.match(
          /cluster minimal: migrated vc's record from host namespace vc-minimal \(vc-status, vc-history, inventory labels: \d+ object\(s\), 13 reconciliation\(s\)\) to the records namespace/,
        );
        expect(server.get("v1", "ConfigMap", "vc-minimal", STATUS_CONFIGMAP)).to.equal(undefined);
        expect(server.get("v1", "ConfigMap", "vc-minimal", HISTORY_CONFIGMAP)).to.equal(undefined);
        const after = await readStatus();
        for (const k of [
          "lastAppliedRevision",
          "lastAppliedTime",
          "lastAttemptedRevision",
          "result",
          "message",
        ] as const)
          expect(after[k], k).to.equal(before[k]);
        expect(after.history).to.deep.equal(before.history);
        expect((await runVc(["status", ...kube, "--cluster", "minimal"])).stdout).to.match(/applied by:\s+reconciler/);

        // The next run goes on from the migrated record.
        repo.write({
          "clusters/minimal/values.yaml":
            "controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: 300m\n",
        });
        const next = repo.commit("cpu");
        const again = await runVc(["apply", repo.work, ...kube]);
        expect(again.code, again.stdout + again.stderr).to.equal(0);
        expect(again.stderr).to.not.include("migrat");
        const later = await readStatus();
        expect(later.history.map((r) => [r.revision, r.via ?? "reconciler"])).to.deep.equal([
          [next, "apply"],
          ...before.history.map((r) => [r.revision, "reconciler"]),
        ]);
      } finally {
        repo.dispose();
      }
    },
  );

  it("a history write that loses a race reads again and keeps both writers' entries", async () => {
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    const store = new KubeStatusStore(client, { source: "fleet" });
    try {
      let s: ClusterStatus | undefined;
      for (let i = 1; i <= 12; i++) {
        s = record(s, "minimal", "vc-minimal", {
          revision: `r${i}`,
          time: at(i),
          durationMs: 1,
          result: "applied",
          counts: { ...ZERO_COUNTS, updated: 1 },
        });
        if (i === 12)
          server.faults.add({
            method: "PATCH",
            path: /\/configmaps\/vc-record-minimal-[0-9a-f]+-history$/,
            nth: 1,
            status: 409,
          });
        await store.write(s);
        s = { ...s, spilled: undefined };
      }
      expect(
        server.countRequests({ method: "PATCH", path: /\/configmaps\/vc-record-minimal-[0-9a-f]+-history$/ }),
      ).to.equal(2);
      expect((await store.history((await store.read("minimal", "vc-minimal"))!)).map((r) => r.revision)).to.deep.equal(
        Array.from({ length: 12 }, (_, k) => `r${12 - k}`),
      );
    } finally {
      client.close();
    }
  });
});
