// vc apply, vc adopt and vc diff leave alone a cluster suspended at run time, as vc restore suspends it, unless
// --ignore-suspension.
import { expect } from "chai";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resumeCluster, suspendCluster } from "../../src/records/suspend.js";
import { RECORD_PATH, recordConfigMap, recordData } from "../support/records.js";
import { fromData, type ClusterStatus } from "../../src/records/status.js";
import { KubeClient } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const REASON = "vc restore oci://registry.example/backups/minimal:1 at 2030-01-01T00:00:00Z";
const LEFT_ALONE =
  `cluster minimal: suspended by ${REASON} (run-time), left alone; vc apply --ignore-suspension ` + `to apply anyway`;
const WRITES = new Set(["PATCH", "PUT", "POST", "DELETE"]);

describe("vc apply and a cluster suspended at run time (vc restore)", function () {
  this.timeout(30_000);
  let server: KubeServer;
  let repo: string;
  let kube: string[];
  let client: KubeClient;
  let bookinfoAsLive: string;

  /** Writes to a namespace or to the Namespace itself. */
  const writesTo = (ns: string) =>
    server.requests.filter(
      (r) => WRITES.has(r.method) && (r.namespace === ns || (r.resource === "namespaces" && r.name === ns)),
    );
  const statusOf = (cluster: string): ClusterStatus | undefined => fromData(recordData(server, cluster));
  const cpuOf = (ns: string, name: string) =>
    /"requests":\{"cpu":"(\w+)"/.exec(JSON.stringify(server.get("apps/v1", "StatefulSet", ns, name)?.spec))?.[1];
  /** Changes the CPU request of a cluster, so that an apply has something to write. */
  const setCpu = (cluster: string, cpu: string) => {
    const file = join(repo, "clusters", cluster, "values.yaml");
    const text = readFileSync(file, "utf8");
    // bookinfo takes its resources from the fleet's prod base (not copied here): it gets a request of its own.
    writeFileSync(
      file,
      /cpu: \d+m/.test(text)
        ? text.replace(/cpu: \d+m/, `cpu: ${cpu}`)
        : text.replace("  statefulSet:\n", `  statefulSet:\n    resources:\n      requests:\n        cpu: ${cpu}\n`),
    );
  };

  beforeEach(async () => {
    server = await startKubeServer();
    repo = exampleRepo(["minimal", "bookinfo"]);
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    const first = await runVc(["apply", repo, ...kube]);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test" });
    await suspendCluster(client, "minimal", "vc-minimal", REASON);
    bookinfoAsLive = readFileSync(join(repo, "clusters", "bookinfo", "values.yaml"), "utf8");
    setCpu("minimal", "310m");
    setCpu("bookinfo", "320m");
    server.resetRequests();
  });
  afterEach(async () => {
    client.close();
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it(
    "writes nothing to it (no apply, no prune, no record), says so and exits 1; the other clusters are " + "applied",
    async () => {
      const recordBefore = recordConfigMap(server, "minimal")!.metadata.resourceVersion;
      rmSync(join(repo, "clusters", "bookinfo", "mesh", "ratings.yaml"));
      const res = await runVc(["apply", repo, ...kube, "--prune"]);
      expect(res.code, res.stdout + res.stderr).to.equal(1);
      expect(res.stdout.split("\n")).to.include(LEFT_ALONE);
      expect(res.stdout).to.not.match(/^cluster minimal: \d+ created/m);
      expect(writesTo("vc-minimal"), "writes to the suspended cluster").to.deep.equal([]);
      expect(cpuOf("vc-minimal", "minimal")).to.not.equal("310m");
      const cm = recordConfigMap(server, "minimal")!;
      expect(cm.metadata.resourceVersion, "its record is the restore's").to.equal(recordBefore);
      expect(cm.metadata.annotations?.["vc.orch.io/suspended-by"]).to.equal(REASON);

      // bookinfo is applied, pruned and recorded as usual.
      expect(cpuOf("team-bookinfo", "bookinfo")).to.equal("320m");
      expect(res.stdout).to.include("deleted VirtualService team-bookinfo/ratings-x-bookinfo-x-bookinfo");
      expect(statusOf("bookinfo")!.history[0]).to.deep.include({ result: "applied", via: "apply" });
      expect(res.stdout).to.include("recorded 1 cluster(s)");

      // The statuses were read from the records (LISTs) before planning, and not again by the record step: whether
      // bookinfo has a record before its status is written is answered by the LIST that read its chunk's records (no
      // GET of a record at all); nothing in a host namespace is read as a status.
      expect(
        server.requests.filter((r) => r.method === "GET" && RECORD_PATH.test(r.path)).map((r) => r.name!),
      ).to.deep.equal([]);
      expect(server.requests.filter((r) => r.namespace === "vc-system" && r.verb === "list").length).to.be.greaterThan(
        0,
      );
      expect(server.countRequests({ method: "GET", path: /\/configmaps\/vc-status$/ })).to.equal(0);
    },
  );

  it("JSON output carries it", async () => {
    const res = await runVc(["apply", repo, ...kube, "-o", "json"]);
    expect(res.code).to.equal(1);
    const json = JSON.parse(res.stdout) as {
      clusters: Array<{ cluster: string }>;
      suspendedAtRunTime: unknown;
      suspended: string[];
      record: { clusters: Array<{ cluster: string }> };
    };
    expect(json.suspendedAtRunTime).to.deep.equal([{ cluster: "minimal", by: REASON }]);
    expect(json.suspended).to.deep.equal([]);
    expect(json.clusters.map((c) => c.cluster)).to.deep.equal(["bookinfo"]);
    expect(json.record.clusters.map((c) => c.cluster)).to.deep.equal(["bookinfo"]);
    expect(writesTo("vc-minimal")).to.deep.equal([]);
  });

  it(
    "records nothing for it when its folder is invalid or suspended in cluster.yaml either: its status is the " +
      "restore's",
    async () => {
      const recordBefore = recordConfigMap(server, "minimal")!.metadata.resourceVersion;
      writeFileSync(
        join(repo, "clusters", "minimal", "values.yaml"),
        "controlPlane:\n  statefulSet:\n    resourcs: {}\n",
      );
      const invalid = await runVc(["apply", repo, ...kube, "-o", "json"]);
      expect(invalid.code).to.equal(1);
      const left = {
        cluster: "minimal",
        outcome: "suspended",
        message: `suspended by ${REASON} (run-time): its status is left to that operation`,
      };
      expect((JSON.parse(invalid.stdout) as { record: { clusters: unknown[] } }).record.clusters).to.deep.include(left);
      writeFileSync(join(repo, "clusters", "minimal", "values.yaml"), "{}\n");
      writeFileSync(join(repo, "clusters", "minimal", "cluster.yaml"), "suspend: true\n");
      const suspended = await runVc(["apply", repo, ...kube, "-o", "json"]);
      expect(suspended.code, suspended.stdout).to.equal(0);
      expect((JSON.parse(suspended.stdout) as { record: { clusters: unknown[] } }).record.clusters).to.deep.include(
        left,
      );
      expect(recordConfigMap(server, "minimal")!.metadata.resourceVersion).to.equal(recordBefore);
      expect(writesTo("vc-minimal")).to.deep.equal([]);
    },
  );

  it("--cluster reads that cluster's status from its record, and a --dry-run leaves it alone too", async () => {
    const res = await runVc(["apply", repo, ...kube, "--cluster", "minimal", "--dry-run"]);
    expect(res.code, res.stdout + res.stderr).to.equal(1);
    expect(res.stdout.split("\n")).to.include(LEFT_ALONE);
    expect(server.countRequests({ method: "GET", path: /\/configmaps\/vc-status$/ })).to.equal(0);
    expect(server.requests.filter((r) => WRITES.has(r.method))).to.deep.equal([]);
  });

  it("--ignore-suspension applies it anyway, warns on stderr and records the run; the suspension stays", async () => {
    const res = await runVc(["apply", repo, ...kube, "--ignore-suspension"]);
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(res.stderr).to.include(
      `warning: cluster minimal is suspended by ${REASON} (run-time); applying it anyway (--ignore-suspension)`,
    );
    expect(res.stdout).to.not.include("left alone");
    expect(cpuOf("vc-minimal", "minimal")).to.equal("310m");
    expect(statusOf("minimal")!.history[0]).to.deep.include({ result: "applied", via: "apply" });
    // vc's record is written by another field manager than the suspension's: the annotation is still there.
    expect(recordConfigMap(server, "minimal")!.metadata.annotations?.["vc.orch.io/suspended-by"]).to.equal(REASON);
  });

  it("once resumed, vc apply applies and records it", async () => {
    await resumeCluster(client, "minimal", "vc-minimal");
    const res = await runVc(["apply", repo, ...kube]);
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(res.stdout).to.not.include("suspended");
    expect(cpuOf("vc-minimal", "minimal")).to.equal("310m");
    expect(res.stdout).to.include("recorded 2 cluster(s)");
  });

  it("a status that may not be read stops the run before anything is written, saying what to grant", async () => {
    server.faults.add({ method: "GET", path: /^\/api\/v1\/namespaces\/vc-system\/configmaps/, status: 403 });
    const res = await runVc(["apply", repo, ...kube, "--cluster", "minimal"]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(
      /cannot read vc's records \(ConfigMaps in namespace vc-system\): GET \S+: 403 .*vc needs get, list, create and patch on ConfigMaps in the records namespace/,
    );
    expect(server.requests.filter((r) => WRITES.has(r.method))).to.deep.equal([]);
  });

  it("vc adopt leaves it alone too", async () => {
    const res = await runVc(["adopt", "minimal", repo, ...kube, "--from", "someone-else"]);
    expect(res.code, res.stdout + res.stderr).to.equal(1);
    expect(res.stdout).to.include(
      `cluster minimal: suspended by ${REASON} (run-time), left alone; vc adopt --ignore-suspension to apply anyway`,
    );
    expect(res.stdout).to.not.include("is now owned by");
    expect(writesTo("vc-minimal")).to.deep.equal([]);
  });

  it("vc diff shows it as suspended and plans nothing of it: no drift is claimed", async () => {
    writeFileSync(join(repo, "clusters", "bookinfo", "values.yaml"), bookinfoAsLive); // bookinfo as live: only minimal differs from the host
    const res = await runVc(["diff", repo, ...kube, "--exit-code"]);
    expect(res.code, res.stdout + res.stderr).to.equal(0);
    expect(res.stdout.split("\n")).to.include(
      `cluster minimal: suspended by ${REASON} (run-time), not planned: vc apply leaves it alone`,
    );
    expect(res.stdout)
      .to.not.match(/^cluster minimal: \d+ to create/m)
      .and.not.include("310m");
    const json = JSON.parse((await runVc(["diff", repo, ...kube, "-o", "json"])).stdout) as {
      suspendedAtRunTime: unknown;
      clusters: Array<{ cluster: string }>;
    };
    expect(json.suspendedAtRunTime).to.deep.equal([{ cluster: "minimal", by: REASON }]);
    expect(json.clusters.map((c) => c.cluster)).to.deep.equal(["bookinfo"]);
    const md = await runVc(["diff", repo, ...kube, "-o", "markdown"]);
    expect(md.stdout).to.include(
      `> :pause_button: cluster \`minimal\`: suspended by ${REASON} (run-time), not planned: vc apply leaves it alone`,
    );
  });
});
