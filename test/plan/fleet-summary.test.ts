// A base change is summarised across the fleet before the per-cluster detail: vc diff text, markdown (the PR plan) and
// JSON.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runVc } from "../support/vc.js";

const tag = (v: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${v}"\n`;

describe("plan: fleet-wide summary of a base change", function () {
  this.timeout(60_000);
  let root: string;
  const write = (files: Record<string, string>) => {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
  };
  before(async () => {
    root = mkdtempSync(join(tmpdir(), "vc-fleet-summary-"));
    write({
      "fleet/values.yaml": tag("1.0.0"),
      "fleet/groups.yaml": "groups:\n  prod:\n    matchLabels:\n      tier: prod\n",
      "clusters/c/cluster.yaml": "labels:\n  tier: prod\n",
    });
    for (const c of ["a", "b", "c", "d"]) write({ [`clusters/${c}/values.yaml`]: "{}\n" });
    const applied = await runVc(["apply", root, "--target", `dir:${join(root, "out")}`]);
    expect(applied.code, applied.stderr).to.equal(0);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("groups clusters by the same change: the image tag for all, replicas for the prod group", async () => {
    write({
      "fleet/values.yaml": tag("1.1.0"),
      "fleet/values.prod.yaml": "controlPlane:\n  statefulSet:\n    replicas: 2\n",
    });
    const text = await runVc(["diff", root, "--target", `dir:${join(root, "out")}`]);
    expect(text.code, text.stderr).to.equal(0);
    const first = text.stdout.split("\n")[0]!;
    expect(first).to.match(
      /^changes 4 clusters: 3 × update Secret data\["values\.yaml"\]; update StatefulSet spec\.template\.spec\.containers\[\]\.image, 1 × .*update StatefulSet spec\.replicas, spec\.template\.spec\.containers\[\]\.image$/,
    );
    // Then the per-cluster detail.
    expect(text.stdout.indexOf("cluster a:")).to.be.greaterThan(first.length);

    const md = await runVc(["diff", root, "--target", `dir:${join(root, "out")}`, "-o", "markdown"]);
    expect(md.stdout).to.include("Changes 4 clusters:");
    expect(md.stdout).to.match(/- 3 × update Secret .* \(`a`, `b`, `d`\)/);
    expect(md.stdout.indexOf("Changes 4 clusters:")).to.be.lessThan(md.stdout.indexOf("#### cluster"));

    const json = JSON.parse(
      (await runVc(["diff", root, "--target", `dir:${join(root, "out")}`, "-o", "json"])).stdout,
    ) as { changes: { clusters: number; groups: Array<{ count: number; clusters: string[] }> } };
    expect(json.changes.clusters).to.equal(4);
    expect(json.changes.groups.map((g) => [g.count, g.clusters])).to.deep.equal([
      [3, ["a", "b", "d"]],
      [1, ["c"]],
    ]);
  });

  it("one cluster's own change prints no fleet line", async () => {
    write({ "fleet/values.yaml": tag("1.0.0") });
    rmSync(join(root, "fleet/values.prod.yaml"));
    write({ "clusters/a/values.yaml": "controlPlane:\n  statefulSet:\n    replicas: 3\n" });
    const text = await runVc(["diff", root, "--target", `dir:${join(root, "out")}`]);
    expect(text.stdout).not.to.match(/^changes \d+ clusters/m);
    expect(text.stdout).to.match(/^cluster a: 0 to create, 2 to update/);
  });
});
