// Server `Warning` headers in the reconciler: one line of its JSON log per warning (object and cluster), never stderr,
// and never another in-process run's log.
import { expect } from "chai";
import { join } from "node:path";
import { jsonLogger } from "../../src/model/log.js";
import { reconcileOnce } from "../../src/reconciler/service.js";
import { resetServerWarnings, serverWarnings } from "../../src/host/warnings.js";
import { Bed, name } from "./harness.js";

describe("reconciler: server warnings in its JSON log", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(2);
    resetServerWarnings();
  });
  afterEach(async () => {
    resetServerWarnings();
    await bed.close();
  });

  const run = async (tag: string) => {
    const lines: string[] = [];
    const logger = jsonLogger({ out: { write: (l: string) => lines.push(l) }, min: "warn" });
    const res = await reconcileOnce({
      repo: bed.url,
      branch: "main",
      target: "kube",
      kubeconfig: bed.kube.kubeconfigPath,
      context: "test",
      intervalMs: 60_000,
      resyncMs: 60_000,
      leaderElect: false,
      allowMassPrune: false,
      logger,
      cacheDir: join(bed.tmp, `cache-${tag}`),
    });
    const warnings = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === "API server warning");
    return { res, lines, warnings };
  };

  it(
    "logs each warning of a cluster's write as one warn line naming the object and the cluster, nothing on the " +
      "process sink",
    async () => {
      bed.kube.faults.add({
        method: "PATCH",
        path: /\/statefulsets\//,
        warning: "spec.template: the host says mind the gap",
      });
      const first = await run("a");
      expect(first.res.clusters.map((c) => c.result)).to.deep.equal(["applied", "applied"]);
      const got = first.warnings.map((w) => ({
        cluster: w.cluster,
        object: w.object,
        warning: w.warning,
        level: w.level,
      }));
      expect(got).to.have.deep.members(
        [0, 1].map((i) => ({
          cluster: name(i),
          object: `statefulsets vc-${name(i)}/${name(i)}`,
          warning: "spec.template: the host says mind the gap",
          level: "warn",
        })),
      );
      expect(first.warnings).to.have.length(2);
      expect(String(first.warnings[0]!.request)).to.match(/^PATCH \/apis\/apps\/v1\/namespaces\//);
      expect(serverWarnings(), "the process sink (stderr) told nothing").to.deep.equal([]);

      // A second run in the same process tells its own warnings to its own log; the first run's log gets none of them.
      bed.edit(`clusters/${name(0)}/values.yaml`, /cpu: \d+m/, "cpu: 300m");
      bed.repo.commit("a change that patches name(0)'s StatefulSet again");
      const linesBefore = first.lines.length;
      const second = await run("b");
      expect(second.warnings.map((w) => `${w.cluster} ${w.object}`)).to.deep.equal([
        `${name(0)} statefulsets vc-${name(0)}/${name(0)}`,
      ]);
      expect(first.lines).to.have.length(linesBefore);
      expect(serverWarnings()).to.deep.equal([]);
    },
  );
});
