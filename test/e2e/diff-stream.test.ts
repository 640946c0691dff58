// On a real API server: `vc diff` of a whole fleet read with one paged LIST per kind, handed out a chunk at a time in
// the store's key order (the server lists in that order across pages: the reader never has to fall back), and read
// chunk by chunk (one LIST per kind selecting a chunk's clusters, from the watch cache) report what planning the fleet
// at once reports: drift, a removed cluster, an invalid one, a namespace claimed across chunks.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { loadDesiredIndex } from "../../src/pipeline/load.js";
import { applyFleet, planFleet } from "../../src/pipeline/fleet.js";
import { KubeClient } from "../../src/host/client.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { formatPlanReport } from "../../src/plan/format.js";
import { installExampleCrds, useRealKube } from "../support/real-kube.js";

const REV = "0123456789abcdef0123456789abcdef01234567";
const sorted = Array.from({ length: 9 }, (_, i) => fleetClusterName(i)).sort();

describe("e2e: a whole-fleet diff read by paged fleet-wide LISTs and chunk by chunk on a real API server", function () {
  this.timeout(300_000);
  const kube = useRealKube();
  let tmp: string;
  let repo: string;
  const target = () => new KubeTarget(KubeClient.open({ kubeconfig: kube().kubeconfigPath, context: "e2e" }));

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-e2e-diff-stream-"));
    repo = join(tmp, "repo");
    await installExampleCrds(kube());
    expect((await kube().kubectl(["create", "namespace", "vc-system"])).code).to.equal(0);
    expect(
      (await kube().kubectl(["label", "namespace", "vc-system", "vc.orch.io/platform-namespace=true"])).code,
    ).to.equal(0);
    await generateFleet(repo, { clusters: 9, meshPerCluster: 1 });
    const applied = await applyFleet(target(), await loadDesiredIndex(repo, REV), {
      prune: true,
      allowMassPrune: false,
      dryRun: false,
    });
    expect(applied.results.filter((r) => !r.ok).map((r) => r.cluster)).to.deep.equal([]);
    const values = join(repo, "clusters", sorted[3]!, "values.yaml");
    writeFileSync(values, readFileSync(values, "utf8").replace(/cpu: \d+m/, "cpu: 999m"));
    rmSync(join(repo, "clusters", sorted[5]!), { recursive: true });
    writeFileSync(join(repo, "clusters", sorted[6]!, "values.yaml"), "controlPlane: [not, a, mapping]\n");
    writeFileSync(join(repo, "clusters", sorted[8]!, "cluster.yaml"), `namespace: vc-${sorted[0]}\n`);
  });
  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("plans what the fleet at once plans (with --prune), the fleet's LISTs read in pages of 2 to the end", async () => {
    const opts = { prune: true, allowMassPrune: true, selected: [] };
    const whole = formatPlanReport(
      await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: Number.MAX_SAFE_INTEGER }),
      "json",
    );
    const fellBack: string[] = [];
    const fleetWide = formatPlanReport(
      await planFleet(target(), await loadDesiredIndex(repo, REV), opts, {
        chunkSize: 2,
        pageSize: 2,
        onFallBack: (why) => fellBack.push(why),
      }),
      "json",
    );
    const chunked = formatPlanReport(
      await planFleet(target(), await loadDesiredIndex(repo, REV), opts, { chunkSize: 2, liveReads: "chunk" }),
      "json",
    );
    expect(fellBack, "the server lists each kind in its key order, page after page").to.deep.equal([]);
    expect(fleetWide).to.equal(whole);
    expect(chunked).to.equal(whole);
    const clusters = (JSON.parse(chunked) as { clusters: Array<{ cluster: string; counts: Record<string, number> }> })
      .clusters;
    // The drifted cluster has an update; the removed one is pruned.
    expect(clusters.find((c) => c.cluster === sorted[3])!.counts.update).to.be.greaterThan(0);
    expect(clusters.find((c) => c.cluster === sorted[5])!.counts.delete).to.be.greaterThan(0);
  });
});
