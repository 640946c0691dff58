// A rollout in a sharded fleet: the first shard's replica drives it for every shard, reading the other shards' clusters
// (where each is pinned, how the wave is doing) from their records; each replica applies its own shard's clusters.
import { expect } from "chai";
import { readClusterHealth } from "../../src/health/read.js";
import type { KubeClient } from "../../src/host/client.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { rolloutName } from "../../src/rollout/store.js";
import type { RolloutRecord } from "../../src/rollout/types.js";
import type { PassDeps, PassState } from "../../src/reconciler/pass.js";
import { inShard, type Shard } from "../../src/reconciler/shard.js";
import { Bed, name, newPassState, runPass } from "../reconciler/harness.js";
import { settle as settleCluster } from "./settle.js";

const N = 6;
const tagValues = (tag: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${tag}"\n`;
const ROLLOUT =
  'waves:\n  - name: canary\n    selector: {matchLabels: {canary: "true"}}\n  - name: rest\nmaxUnavailable: 10\nhealthGate: {timeout: 1h}\n';

describe("rollout: a sharded fleet", function () {
  this.timeout(120_000);
  let bed: Bed;
  let admin: KubeClient;
  const shards: Shard[] = [
    { index: 0, count: 2 },
    { index: 1, count: 2 },
  ];
  const all = Array.from({ length: N }, (_, i) => name(i));

  const record = (): RolloutRecord =>
    JSON.parse(
      (bed.kube.get("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE, rolloutName(""))!.data as Record<string, string>)
        .rollout!,
    ) as RolloutRecord;
  const tagOf = (c: string): string => /"image":"[^"]*:([^"]+)"/.exec(JSON.stringify(bed.statefulSet(c)!.spec))![1]!;
  const settle = (c: string): Promise<void> => settleCluster(bed, admin, c);

  before(async () => {
    bed = await Bed.start(N, 0);
    admin = bed.client();
  });
  after(() => bed?.close());

  it(
    "the driver (shard 0) rolls out every shard's clusters wave by wave, gated on the health another shard " +
      "recorded",
    async () => {
      // The canary lives in the other shard than the driver's: its health reaches the driver only through its record.
      const canary = all.find((c) => inShard(c, shards[1]))!;
      const own = all.filter((c) => inShard(c, shards[0]));
      expect(own.length, "both shards hold clusters").to.be.greaterThan(0);
      bed.repo.write({ "fleet/values.yaml": tagValues("1.0"), "fleet/rollout.yaml": ROLLOUT });
      bed.edit(`clusters/${canary}/cluster.yaml`, /$/, 'labels:\n  canary: "true"\n');
      bed.repo.commit("fleet base and rollout");
      const client = bed.client();
      const base = bed.deps({ health: (ns, desired) => readClusterHealth(client, ns, desired) });
      const replicas: Array<{ deps: PassDeps; state: PassState }> = shards.map((shard) => ({
        deps: { ...base, shard },
        state: newPassState(),
      }));
      const passAll = async (kind: "full" | "incremental" = "incremental") => {
        for (const r of replicas) await runPass(r.deps, r.state, { kind });
      };
      await passAll("full");
      for (const c of all) await settle(c);
      await passAll("full");
      expect(all.map(tagOf)).to.deep.equal(Array(N).fill("1.0"));

      bed.repo.write({ "fleet/values.yaml": tagValues("2.0") });
      bed.repo.commit("new control-plane tag");
      await passAll();
      // Every cluster of both shards is a member; only the canary (the other shard's) moved.
      const started = record();
      expect(started.waves.map((w) => [w.name, w.clusters.length])).to.deep.equal([
        ["canary", 1],
        ["rest", N - 1],
      ]);
      expect(started.waves[0]!.clusters).to.deep.equal([canary]);
      expect(all.map((c) => [c, tagOf(c)])).to.deep.equal(all.map((c) => [c, c === canary ? "2.0" : "1.0"]));

      // The canary comes up; its shard records it Healthy; the driver reads that and moves the rest wave.
      await settle(canary);
      await passAll();
      await passAll();
      expect(record().wave).to.equal(1);
      await passAll();
      for (const c of all) await settle(c);
      for (let i = 0; i < 4 && record().phase !== "Completed"; i++) await passAll();
      expect(record().phase).to.equal("Completed");
      expect(all.map(tagOf)).to.deep.equal(Array(N).fill("2.0"));
    },
  );
});
