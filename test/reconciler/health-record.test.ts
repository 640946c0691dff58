// The reconciler records each cluster's health with its run (status and history entry), exports it per cluster, and
// warns when a change leaves a cluster Degraded; a settled, Healthy fleet's resync reads no health.
import { expect } from "chai";
import { readClusterHealth } from "../../src/health/read.js";
import type { Logger } from "../../src/model/log.js";
import { fromData, record, toData, type Reconciliation } from "../../src/records/status.js";
import { worthWriting } from "../../src/records/outcome.js";
import { formatDetail, formatTable } from "../../src/cli/status.js";
import { Bed, name, newPassState, runPass } from "./harness.js";

const entry = (over: Partial<Reconciliation> = {}): Reconciliation => ({
  revision: "a",
  time: "2026-01-01T00:00:00Z",
  durationMs: 1,
  result: "applied",
  counts: { created: 0, updated: 0, deleted: 0, unchanged: 3, failed: 0 },
  ...over,
});

describe("reconciler: health on the record", function () {
  this.timeout(60_000);

  it("folds health into the status, keeps it through the ConfigMap's data, and writes only when it changes", () => {
    const s = record(
      undefined,
      "shop",
      "vc-shop",
      entry({ health: "Degraded", healthReason: "pod shop-0 CrashLoopBackOff" }),
    );
    expect(s).to.include({ health: "Degraded", healthReason: "pod shop-0 CrashLoopBackOff" });
    const back = fromData(toData(s))!;
    expect(back).to.include({ health: "Degraded", healthReason: "pod shop-0 CrashLoopBackOff" });
    expect(back.history[0]).to.include({ health: "Degraded" });
    expect(fromData({ ...toData(s), health: "Splendid" })!.health).to.equal(undefined);
    // Healthy drops the old reason.
    expect(record(s, "shop", "vc-shop", entry({ health: "Healthy" })).healthReason).to.equal(undefined);
    expect(worthWriting(s, entry({ health: "Degraded", healthReason: "pod shop-0 CrashLoopBackOff" }), false)).to.equal(
      false,
    );
    expect(worthWriting(s, entry({ health: "Healthy" }), false)).to.equal(true);
    expect(worthWriting(s, entry({ health: "Degraded", healthReason: "pod shop-1 ImagePullBackOff" }), false)).to.equal(
      true,
    );
  });

  it(
    "records Progressing, then Healthy once the host reports it, exports the gauge, and warns on a change left " +
      "Degraded",
    async () => {
      const bed = await Bed.start(1, 0);
      try {
        const warnings: Array<Record<string, unknown>> = [];
        const logger: Logger = {
          debug() {},
          info() {},
          error() {},
          warn: (msg, fields) => void (msg === "cluster degraded" && warnings.push(fields ?? {})),
        };
        const client = bed.client();
        const deps = bed.deps({ logger, health: (ns, desired) => readClusterHealth(client, ns, desired) });
        const state = newPassState();
        const c = name(0);
        await runPass(deps, state, { kind: "full" });
        expect(bed.statusData(c)).to.include({ health: "Progressing" });
        expect(await deps.metrics!.registry.metrics()).to.include(
          `vc_cluster_health{cluster="${c}",health="Progressing"} 1`,
        );

        // A controller reports the StatefulSet ready and its pod Ready: the next resync records Healthy (a new entry).
        const sts = bed.statefulSet(c)!;
        bed.kube.put({
          ...sts,
          status: {
            observedGeneration: sts.metadata.generation,
            replicas: 1,
            readyReplicas: 1,
            currentReplicas: 1,
            updatedReplicas: 1,
            currentRevision: "r1",
            updateRevision: "r1",
          },
        });
        const pod = {
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            name: `${c}-0`,
            namespace: `vc-${c}`,
            labels: { app: "vc", release: c, "controller-revision-hash": "r1" },
            ownerReferences: [
              { apiVersion: "apps/v1", kind: "StatefulSet", name: c, uid: sts.metadata.uid!, controller: true },
            ],
          },
          spec: { containers: [{ name: "syncer", image: "x" }] },
        };
        bed.kube.put({ ...pod, status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } });
        await runPass(deps, state, { kind: "full" });
        const data = bed.statusData(c)!;
        expect(data).to.include({ health: "Healthy" });
        expect(JSON.parse(data.history!)[0]).to.include({ health: "Healthy" });
        const metrics = await deps.metrics!.registry.metrics();
        expect(metrics)
          .to.include(`vc_cluster_health{cluster="${c}",health="Healthy"} 1`)
          .and.include(`vc_cluster_health{cluster="${c}",health="Progressing"} 0`);

        // Settled and Healthy: a resync reads no pods.
        bed.kube.resetRequests();
        await runPass(deps, state, { kind: "full" });
        expect(bed.kube.requests.filter((r) => r.resource === "pods")).to.deep.equal([]);

        // A change whose new pod crashes: Degraded, recorded with the run and warned about.
        bed.kube.put({
          ...pod,
          status: {
            phase: "Running",
            containerStatuses: [
              { name: "syncer", restartCount: 2, state: { waiting: { reason: "CrashLoopBackOff" } } },
            ],
          },
        });
        bed.edit(`clusters/${c}/values.yaml`, /cpu: \d+m/, "cpu: 300m");
        bed.repo.commit("more cpu");
        await runPass(deps, state, { kind: "incremental" });
        expect(bed.statusData(c)).to.include({ health: "Degraded", healthReason: `pod ${c}-0 CrashLoopBackOff` });
        // vc status shows it: the table's HEALTH column, the detail's health line and each entry's health.
        const [status] = await deps.store.list();
        expect(formatTable([status!])).to.match(new RegExp(`${c}\\s+vc-${c}\\s+applied\\s+.*\\s+Degraded\\s+`));
        status!.history = await deps.store.history(status!);
        const detail = formatDetail(status!);
        expect(detail).to.include(`health:            Degraded: pod ${c}-0 CrashLoopBackOff`);
        expect(detail.split("\n").filter((l) => /\s(Healthy|Progressing|Degraded)\s/.test(l))).to.have.length(3);
        expect(warnings).to.have.length(1);
        expect(warnings[0]).to.include({ cluster: c, reason: `pod ${c}-0 CrashLoopBackOff` });
      } finally {
        await bed.close();
      }
    },
  );
});
