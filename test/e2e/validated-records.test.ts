// On a real API server: a reconciler's pass keeps each folder's validation digest and summary on the cluster's record
// (a ConfigMap of the records namespace, written by server-side apply with the status), and a new reconciler's
// start-up pass takes its index from there (no unchanged folder validated again), writes nothing, and validates a
// folder changed meanwhile (issue #35).
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { KubeClient } from "../../src/host/client.js";
import { silentLogger } from "../../src/model/log.js";
import { defaultEngine, type LoadedCluster } from "../../src/pipeline/engine.js";
import { newPassState, runPass, type PassDeps } from "../../src/reconciler/pass.js";
import { FolderSource } from "../../src/reconciler/source.js";
import { recordName } from "../../src/records/record.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { installMeshCrds, useRealKube } from "../support/real-kube.js";

const NAMES = Array.from({ length: 4 }, (_, i) => fleetClusterName(i)).sort();

describe("e2e: a folder's validation kept on its record, read by a new reconciler, on a real API server", function () {
  this.timeout(300_000);
  const kube = useRealKube();
  let tmp: string;
  let repo: string;
  let client: KubeClient;
  before(async () => {
    await installMeshCrds(kube());
    client = KubeClient.open({ kubeconfig: kube().kubeconfigPath, context: "e2e" });
    tmp = mkdtempSync(join(tmpdir(), "vc-e2e-validated-"));
    repo = join(tmp, "repo");
    await generateFleet(repo, { clusters: NAMES.length, meshPerCluster: 1 });
  });
  after(() => {
    client?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** A new reconciler's pass dependencies; `index` collects its summary loads' folders. */
  const deps = (index: LoadedCluster[]): PassDeps => {
    const target = new KubeTarget(client);
    return {
      engine: {
        ...defaultEngine,
        load: async (root, opts) => {
          const res = await defaultEngine.load(root, opts);
          if (opts.detail === "summary") index.push(...res.clusters);
          return res;
        },
      },
      target,
      store: new KubeStatusStore(client, { source: target.source, records: target.records }),
      allowMassPrune: false,
      mayWrite: () => true,
      source: new FolderSource(repo),
      logger: silentLogger,
      chunkSize: 2,
    };
  };

  it("records each folder's digest, and a restart validates only the folder changed meanwhile", async () => {
    const first = await runPass(deps([]), newPassState(), { kind: "full" });
    expect(first.clusters.map((c) => c.result)).to.deep.equal(NAMES.map(() => "applied"));
    const record = async (cluster: string) =>
      (
        await kube().request<{ data: Record<string, string> }>(
          "GET",
          `/api/v1/namespaces/${DEFAULT_RECORDS_NAMESPACE}/configmaps/${recordName("", cluster)}`,
        )
      ).body.data;
    for (const n of NAMES) {
      const validated = JSON.parse((await record(n)).validated!) as { digest: string; settings: { namespace: string } };
      expect(validated.digest).to.match(/^[0-9a-f]{64}$/);
      expect(validated.settings.namespace).to.equal(`vc-${n}`);
    }
    const restartIndex: LoadedCluster[] = [];
    const writesBefore = kube().writes().length;
    const restart = await runPass(deps(restartIndex), newPassState(), { kind: "full" });
    expect(restartIndex.map((c) => [c.name, c.recorded])).to.deep.equal(NAMES.map((n) => [n, true]));
    expect(restart.clusters.every((c) => c.result === "applied" && !c.statusWritten)).to.equal(true);
    expect(kube().writes().length - writesBefore).to.equal(0);

    const changed = NAMES[2]!;
    const before = JSON.parse((await record(changed)).validated!).digest as string;
    const values = join(repo, "clusters", changed, "values.yaml");
    writeFileSync(values, readFileSync(values, "utf8").replace(/cpu: \d+m/, "cpu: 321m"));
    const index: LoadedCluster[] = [];
    await runPass(deps(index), newPassState(), { kind: "full" });
    expect(index.filter((c) => !c.recorded).map((c) => c.name)).to.deep.equal([changed]);
    expect(JSON.parse((await record(changed)).validated!).digest).to.not.equal(before);
  });
});
