import { expect } from "chai";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { LABELS } from "../../src/translate/keys.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";
import { generateFleet } from "../../bench/fleet.js";
import { RECORD_PATH, RECORDS_COLLECTION, recordData } from "../support/records.js";

const writes = (s: KubeServer) =>
  ["PATCH", "PUT", "POST", "DELETE"].reduce((n, method) => n + s.countRequests({ method }), 0);
/**
 * Writes of anything but the clusters' records (in the records namespace, and the self-review that says who wrote
 * them).
 */
const objectWrites = (s: KubeServer) =>
  writes(s) -
  s.countRequests({ method: "PATCH", path: RECORD_PATH }) -
  s.countRequests({ method: "POST", path: RECORDS_COLLECTION }) -
  s.countRequests({ method: "POST", resource: "selfsubjectreviews" });
const TOTAL = /^(\d+) created, (\d+) updated, (\d+) deleted, (\d+) unchanged, (\d+) failed, (\d+) skipped/;

function total(stdout: string): number[] {
  return TOTAL.exec(stdout.trimEnd().split("\n").at(-1)!)!.slice(1).map(Number);
}

describe("vc apply", () => {
  let server: KubeServer;
  let repo: string;
  let kube: string[];

  beforeEach(async () => {
    server = await startKubeServer();
    repo = exampleRepo(["minimal", "bookinfo"]);
    kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
  });
  afterEach(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it("creates every object, reports each and a summary; a second run writes nothing", async () => {
    const first = await runVc(["apply", repo, ...kube]);
    expect(first.code, first.stderr).to.equal(0);
    const [created, ...rest] = total(first.stdout);
    expect(created).to.be.greaterThan(10);
    expect(rest).to.deep.equal([0, 0, 0, 0, 0]);
    expect(first.stdout)
      .to.include("created Namespace vc-minimal")
      .and.match(/cluster minimal: \d+ created/);
    // One server-side apply per object, and two writes per cluster for its record: created with the run's apply lease
    // and what it will create (a POST), then its status, the lease given up (a PATCH); before the first record write
    // the records namespace is looked up, found missing and made with the platform mark (a POST).
    expect(server.countRequests({ method: "PATCH" })).to.equal(created + 2);
    expect(server.countRequests({ method: "PATCH", path: RECORD_PATH })).to.equal(2);
    expect(server.countRequests({ method: "POST", path: RECORDS_COLLECTION })).to.equal(2);
    expect(server.countRequests({ method: "POST", resource: "namespaces" })).to.equal(1);
    expect(server.get("v1", "Namespace", undefined, "vc-system")?.metadata.labels).to.deep.include({
      [LABELS.platformNamespace]: "true",
    });
    expect(server.list("v1", "Namespace").filter((n) => n.metadata.labels?.[LABELS.inventory])).to.have.length(2);
    server.resetRequests();
    const second = await runVc(["apply", repo, ...kube]);
    expect(total(second.stdout)).to.deep.equal([0, 0, 0, created, 0, 0]);
    expect(writes(server)).to.equal(0);
  });

  it("--dry-run sends dryRun=All and stores nothing", async () => {
    const res = await runVc(["apply", repo, ...kube, "--dry-run", "--cluster", "minimal"]);
    expect(res.code).to.equal(0);
    expect(res.stdout).to.match(/\(dry run: nothing was changed\)\n$/);
    expect(server.list("v1", "Namespace").map((n) => n.metadata.name)).to.not.include("vc-minimal");
    expect(server.requests.filter((r) => r.method === "PATCH").every((r) => /dryRun=All/.test(r.query))).to.equal(true);
  });

  it(
    "--dry-run asks the server about every object, and says which it could not check because their namespace does " +
      "not exist yet",
    async () => {
      const res = await runVc(["apply", repo, ...kube, "--dry-run", "--cluster", "minimal"]);
      expect(res.code, res.stdout).to.equal(0);
      const lines = res.stdout.trimEnd().split("\n");
      const objects = lines.filter((l) => /^would (create|update|fail) |would be created/.test(l));
      expect(objects).to.include("would create Namespace vc-minimal");
      // A dry run never prints a line that reads as done.
      expect(
        lines.filter(
          (l) => /^(created|updated|deleted|recreated) /.test(l) || /\b\d+ (created|updated|deleted)\b/.test(l),
        ),
      ).to.deep.equal([]);
      const unchecked = objects.filter((l) => l.includes("would be created"));
      expect(unchecked.length).to.be.greaterThan(5);
      for (const l of unchecked)
        expect(l).to.match(
          /^\S+ vc-minimal\/\S+ would be created \(namespace vc-minimal does not exist yet, not checked by the server\)$/,
        );
      // Every object of the cluster was sent with dryRun=All; none was reported created without an answer.
      const patches = server.requests.filter((r) => r.method === "PATCH");
      expect(patches.every((r) => /dryRun=All/.test(r.query))).to.equal(true);
      expect(patches.length).to.equal(objects.length);
      expect(lines.find((l) => l.startsWith("cluster minimal:"))).to.equal(
        `cluster minimal: ${objects.length} to create, 0 to update, 0 to delete, 0 unchanged, 0 refused, 0 to skip ` +
          `(dry run; ${unchecked.length} not checked by the server: namespace vc-minimal does not exist yet)`,
      );
      const json = JSON.parse(
        (await runVc(["apply", repo, ...kube, "--dry-run", "--cluster", "minimal", "-o", "json"])).stdout,
      );
      const results = json.clusters[0].results as Array<{ kind: string; checked?: boolean; message?: string }>;
      expect(results.filter((r) => r.checked === false)).to.have.length(unchecked.length);
      expect(results.find((r) => r.kind === "Namespace")).to.not.have.property("checked");

      // A namespace someone else made is not vc's to fill: the dry run reports the conflict and checks nothing.
      server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "vc-minimal" } });
      const foreign = await runVc(["apply", repo, ...kube, "--dry-run", "--cluster", "minimal"]);
      expect(foreign.code, foreign.stdout).to.equal(1);
      expect(foreign.stdout).to.include("! conflict: Namespace vc-minimal (managed by");
      server.remove("v1", "Namespace", undefined, "vc-minimal");

      // Once vc made the namespace (its record holds it), every object is checked by the server.
      expect((await runVc(["apply", repo, ...kube, "--cluster", "minimal"])).code).to.equal(0);
      const again = await runVc(["apply", repo, ...kube, "--dry-run", "--cluster", "minimal"]);
      expect(again.code, again.stdout).to.equal(0);
      expect(again.stdout).to.not.include("not checked");
    },
  );

  it("prunes with --prune only, and the prune guard stops a removed cluster unless --allow-mass-prune", async () => {
    await runVc(["apply", repo, ...kube]);
    rmSync(join(repo, "clusters", "bookinfo", "mesh", "ratings.yaml"));
    expect(total((await runVc(["apply", repo, ...kube])).stdout)[2]).to.equal(0);
    const pruned = await runVc(["apply", repo, ...kube, "--prune"]);
    expect(pruned.code).to.equal(0);
    expect(pruned.stdout).to.include("deleted VirtualService team-bookinfo/ratings-x-bookinfo-x-bookinfo");
    expect(total(pruned.stdout)[2]).to.equal(2);

    rmSync(join(repo, "clusters", "minimal"), { recursive: true });
    server.resetRequests();
    const guarded = await runVc(["apply", repo, ...kube, "--prune"]);
    expect(guarded.code).to.equal(1);
    expect(guarded.stdout).to.match(
      /! prune guard: cluster minimal would delete all \d+ of the objects vc applied for it; nothing was changed/,
    );
    // Nothing but the record that says so.
    expect(objectWrites(server)).to.equal(0);
    expect(recordData(server, "minimal")!.result).to.equal("blocked");
    expect(server.get("v1", "Namespace", undefined, "vc-minimal")).to.not.equal(undefined);

    const allowed = await runVc(["apply", repo, ...kube, "--prune", "--allow-mass-prune"]);
    expect(allowed.code).to.equal(0);
    expect(allowed.stdout).to.include("kept Namespace vc-minimal: namespaces are never pruned");
    expect(allowed.stdout).to.not.include("deleted Namespace");
    expect(server.get("v1", "Namespace", undefined, "vc-minimal")).to.not.equal(undefined);
    expect(
      server.list("v1", "Secret", "vc-minimal").filter((s) => s.metadata.labels?.[LABELS.inventory] === "minimal"),
    ).to.have.length(0);

    // Only the kept Namespace is left: later runs are not stopped by the guard (and change nothing).
    server.resetRequests();
    const later = await runVc(["apply", repo, ...kube, "--prune"]);
    expect(later.code, later.stdout).to.equal(0);
    expect(later.stdout).to.not.include("prune guard");
    expect(later.stdout).to.include("kept Namespace vc-minimal");
    expect(writes(server)).to.equal(0);
    const diff = await runVc(["diff", repo, ...kube, "--prune", "--exit-code"]);
    expect(diff.code, diff.stdout).to.equal(0);
    expect(diff.stdout).to.not.include("prune guard");
    const named = await runVc(["apply", repo, ...kube, "--cluster", "minimal"]);
    expect(named.stdout).to.include(
      "! cluster minimal: no cluster folder clusters/minimal; only its kept Namespace vc-minimal is left (delete " +
        "it by hand once it is empty)",
    );
  });

  it("never prunes a cluster whose folder is invalid: it is reported and left as it is", async () => {
    await runVc(["apply", repo, ...kube]);
    const broken = exampleRepo(["bookinfo"], { "clusters/minimal/values.yaml": "controlPlane: [\n" });
    try {
      server.resetRequests();
      const res = await runVc(["apply", broken, ...kube, "--prune"]);
      expect(res.code).to.equal(1);
      expect(res.stdout).to.match(/! cluster minimal: clusters\/minimal\/values.yaml/);
      expect(server.countRequests({ method: "DELETE" })).to.equal(0);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });

  it("reports a failed object, exits 2, and prunes nothing in that run", async () => {
    await runVc(["apply", repo, ...kube]);
    rmSync(join(repo, "clusters", "bookinfo", "mesh", "ratings.yaml"));
    const sts = server.list("apps/v1", "StatefulSet", "team-bookinfo")[0]!;
    server.put({ ...sts, spec: { ...(sts.spec as object), replicas: 5 } });
    server.faults.add({ method: "PATCH", path: /statefulsets/, status: 403 });
    const res = await runVc(["apply", repo, ...kube, "--prune", "--cluster", "minimal", "--cluster", "bookinfo"]);
    expect(res.code).to.equal(2);
    expect(res.stdout).to.match(/failed StatefulSet team-bookinfo\/bookinfo: PATCH \S+: 403/);
    expect(res.stdout).to.include(
      "skipped VirtualService team-bookinfo/ratings-x-bookinfo-x-bookinfo: not pruned: an apply failed in this run",
    );
    expect(server.countRequests({ method: "DELETE" })).to.equal(0);
  });

  it("retries faults on the way and still converges (429 with Retry-After, reset, 500)", async () => {
    server.faults.add({ method: "PATCH", nth: 2, status: 429, retryAfterSeconds: 1 });
    server.faults.add({ method: "PATCH", nth: 5, reset: true });
    server.faults.add({ method: "PATCH", nth: 9, status: 500 });
    const res = await runVc(["apply", repo, ...kube]);
    expect(res.code, res.stdout).to.equal(0);
    expect(total(res.stdout)[4]).to.equal(0);
    expect((await runVc(["diff", repo, ...kube, "--exit-code"])).code).to.equal(0);
  });

  it("gives JSON results", async () => {
    const res = await runVc(["apply", repo, ...kube, "-o", "json", "--cluster", "minimal"]);
    const data = JSON.parse(res.stdout);
    expect(data.dryRun).to.equal(false);
    expect(data.clusters).to.have.length(1);
    expect(data.clusters[0].ok).to.equal(true);
    expect(data.clusters[0].results[0]).to.include({ outcome: "created", kind: "Namespace", name: "vc-minimal" });
  });

  it("writes hydrated manifests to a dir: target", async () => {
    const out = join(repo, "out");
    const res = await runVc(["apply", repo, "--target", `dir:${out}`, "--cluster", "minimal"]);
    expect(res.code).to.equal(0);
    expect(total(res.stdout)[0]).to.be.greaterThan(5);
    expect(total((await runVc(["apply", repo, "--target", `dir:${out}`, "--cluster", "minimal"])).stdout)[0]).to.equal(
      0,
    );
  });

  it("refuses a bad --concurrency", async () => {
    const res = await runVc(["apply", repo, ...kube, "--concurrency", "0"]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(/--concurrency must be a positive integer/);
  });

  it("shows progress on stderr for long runs, and none for short ones", async () => {
    await generateFleet(repo, { clusters: 6, meshPerCluster: 6 });
    const out = join(repo, "out");
    const res = await runVc(["apply", repo, "--target", `dir:${out}`]);
    expect(res.code).to.equal(0);
    const n = total(res.stdout)[0]!;
    expect(n).to.be.at.least(100);
    expect(res.stderr).to.match(/^progress: \d+\/\d+ objects \(\d+%\), cluster \S+\n/);
    expect(res.stderr).to.include(`progress: ${n}/${n} objects (100%)`);
    const short = await runVc(["apply", repo, "--target", `dir:${out}`, "--cluster", fleetFirst(res.stdout)]);
    expect(short.stderr).to.equal("");
  });
});

function fleetFirst(stdout: string): string {
  return /cluster (\S+):/.exec(stdout)![1]!;
}
