// vc apply --wait refuses what it cannot wait for: a dry run, a dir: target, a timeout that is no duration; of a whole
// fleet it is streamed (each cluster's health references kept) and says what waiting for the clusters by name says.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runVc } from "../support/vc.js";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";

describe("cli: vc apply --wait", () => {
  let out: string;
  before(() => (out = mkdtempSync(join(tmpdir(), "vc-wait-"))));
  after(() => rmSync(out, { recursive: true, force: true }));

  it("refuses --dry-run, a dir: target and a bad --timeout with a usage error, writing nothing", async () => {
    const dry = await runVc(["apply", ".", "--wait", "--dry-run", "--target", `dir:${out}/a`]);
    expect(dry.code).to.equal(2);
    expect(dry.stderr).to.include("cannot be used with --dry-run");
    const dir = await runVc(["apply", ".", "--wait", "--target", `dir:${out}/b`]);
    expect(dir.code).to.equal(2);
    expect(dir.stderr).to.include("--wait needs a live host (--target kube)");
    const bad = await runVc(["apply", ".", "--wait", "--timeout", "soon", "--target", `dir:${out}/c`]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('invalid duration "soon"');
    expect(await import("node:fs").then((fs) => fs.readdirSync(out))).to.deep.equal([]);
  });
});

describe("cli: vc apply --wait of a whole fleet, streamed", function () {
  this.timeout(120_000);
  let tmp: string;
  let repo: string;
  let server: KubeServer;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-wait-stream-"));
    repo = join(tmp, "repo");
    server = await startKubeServer();
    await generateFleet(repo, { clusters: 3, meshPerCluster: 1 });
  });
  after(async () => {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** The command's output with its durations and times made equal (two runs never take the same time). */
  const steady = (text: string) =>
    text
      .replace(/"durationMs": \d+/g, '"durationMs": 0')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "(time)")
      .replace(/in [\d.]+m?s/g, "in (time)");

  it("waits for the clusters it applied as applying them by name does: the same output and exit status", async () => {
    const kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
    const names = Array.from({ length: 3 }, (_, i) => fleetClusterName(i)).sort();
    const first = await runVc(["apply", repo, ...kube]);
    expect(first.code, first.stdout + first.stderr).to.equal(0);
    // No controller reports the StatefulSets: every cluster stays Progressing and the wait runs out.
    for (const format of ["json", "text"]) {
      const whole = await runVc(["apply", repo, ...kube, "--wait", "--timeout", "1s", "-o", format]);
      const named = await runVc([
        "apply",
        repo,
        ...kube,
        "--wait",
        "--timeout",
        "1s",
        "-o",
        format,
        ...names.flatMap((n) => ["--cluster", n]),
      ]);
      expect(whole.code, whole.stderr).to.equal(1);
      expect(named.code, named.stderr).to.equal(1);
      expect(whole.stderr).to.match(
        new RegExp(
          `timed out after 1s waiting for cluster ${names[0]} \\(Progressing: StatefulSet vc-${names[0]}/${names[0]}`,
        ),
      );
      expect(steady(whole.stdout)).to.equal(steady(named.stdout));
      if (format === "json")
        expect((JSON.parse(whole.stdout) as { wait: { result: string; clusters: unknown[] } }).wait).to.deep.include({
          result: "timeout",
          cluster: names[0],
        });
    }
  });
});
