// Test bed for the reconciler: a fleet repository behind the real git server, the Kubernetes API test server as host.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { KubeClient } from "../../src/host/client.js";
import { KubeTarget } from "../../src/sinks/kube/target.js";
import { defaultEngine } from "../../src/pipeline/engine.js";
import { silentLogger } from "../../src/model/log.js";
import { createMetrics } from "../../src/reconciler/metrics.js";
import { newPassState, runPass, type PassDeps } from "../../src/reconciler/pass.js";
import { GitSource } from "../../src/reconciler/source.js";
import { KubeStatusStore } from "../../src/records/status-store.js";
import { recordName } from "../../src/records/record.js";
import { DEFAULT_RECORDS_NAMESPACE } from "../../src/translate/keys.js";
import { startGitServer, TestRepo, type GitServer } from "../support/git-server.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

export const name = fleetClusterName;

export class Bed {
  repo!: TestRepo;
  git!: GitServer;
  kube!: KubeServer;
  tmp!: string;
  clients: KubeClient[] = [];

  static async start(clusters: number, meshPerCluster = 3): Promise<Bed> {
    const b = new Bed();
    b.repo = new TestRepo();
    await generateFleet(b.repo.work, { clusters, meshPerCluster });
    b.repo.commit("fleet");
    b.git = await startGitServer(b.repo.root);
    b.kube = await startKubeServer();
    b.tmp = mkdtempSync(join(tmpdir(), "vc-rec-"));
    return b;
  }

  get url(): string {
    return `${this.git.url}/${this.repo.path}`;
  }

  client(): KubeClient {
    const c = KubeClient.open({
      kubeconfig: this.kube.kubeconfigPath,
      context: "test",
      retry: { baseDelayMs: 5, maxDelayMs: 20, attempts: 2 },
    });
    this.clients.push(c);
    return c;
  }

  /** Pass dependencies over a fresh mirror (its own folder) and a fresh client. */
  deps(over: Partial<PassDeps> = {}, mirror = "mirror"): PassDeps {
    const client = this.client();
    // The reconciler's target reads and writes this source's records (service.ts does the same).
    const target = new KubeTarget(client);
    target.source = over.owner ?? "";
    return {
      engine: defaultEngine,
      target,
      store: new KubeStatusStore(client, { source: target.source, records: target.records }),
      allowMassPrune: false,
      mayWrite: () => true,
      source: new GitSource({ url: this.url, dir: join(this.tmp, mirror) }),
      logger: silentLogger,
      metrics: createMetrics({ defaults: false }),
      keepPlans: true,
      ...over,
    };
  }

  /** Edits a file of the work tree with a string replacement (must match). */
  edit(file: string, from: string | RegExp, to: string): void {
    const p = join(this.repo.work, file);
    const text = readFileSync(p, "utf8");
    const next = text.replace(from, to);
    if (next === text) throw new Error(`edit of ${file} changed nothing`);
    writeFileSync(p, next);
  }

  writes(): number {
    return ["PATCH", "PUT", "POST", "DELETE"].reduce((n, method) => n + this.kube.countRequests({ method }), 0);
  }

  statefulSet(cluster: string) {
    return this.kube.get("apps/v1", "StatefulSet", `vc-${cluster}`, cluster);
  }

  /** The status data of a cluster's record (records namespace vc-system; the source "" of a run without an owner). */
  statusData(cluster: string, source = ""): Record<string, string> | undefined {
    return this.record(cluster, source)?.data as Record<string, string> | undefined;
  }

  /** The record ConfigMap of (source, cluster) in the records namespace. */
  record(cluster: string, source = "") {
    return this.kube.get("v1", "ConfigMap", DEFAULT_RECORDS_NAMESPACE, recordName(source, cluster));
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.close();
    await this.git.close();
    await this.kube.close();
    this.repo.dispose();
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

export { newPassState, runPass };
