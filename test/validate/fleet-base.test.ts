// Shared bases: fleet/values.yaml for every cluster, fleet/values.<group>.yaml for the groups its labels select; merged
// before the cluster's own values by the same rules, each error located in the file that has it and reported once.
import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadAndValidate } from "../../src/validate/index.js";
import { affectedClusters } from "../../src/reconciler/affected.js";
import { baseLayers, clustersReachedBy, labelsChooseLayers, type FleetBase } from "../../src/repo/fleet-base.js";
import { cleanupRepos, makeRepo } from "./fixture.js";

const cpu = (v: string) => `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: ${v}\n`;
const tag = (v: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${v}"\n`;
const GROUPS = "groups:\n  prod:\n    matchLabels:\n      tier: prod\n  eu:\n    matchLabels:\n      region: eu\n";

function fleet(extra: Record<string, string> = {}): string {
  return makeRepo({
    "fleet/values.yaml": tag("1.2.0"),
    "fleet/groups.yaml": GROUPS,
    "fleet/values.prod.yaml": cpu("500m"),
    "fleet/values.eu.yaml": tag("1.2.1-eu"),
    "clusters/shop/cluster.yaml": "labels:\n  tier: prod\n  region: eu\n",
    "clusters/shop/values.yaml": "{}\n",
    "clusters/dev/values.yaml": cpu("100m"),
    "clusters/pay/cluster.yaml": "labels:\n  tier: prod\n",
    "clusters/pay/values.yaml": cpu("750m"),
    ...extra,
  });
}

describe("validate: shared fleet bases", () => {
  after(cleanupRepos);

  it(
    "layers fleet/values.yaml, then each group's file by group name, then the cluster's own files " + "(last wins)",
    async () => {
      const v = await loadAndValidate(fleet());
      expect(v.diagnostics.filter((d) => d.severity === "error")).to.deep.equal([]);
      const by = new Map(v.clusters.map((c) => [c.name, c.spec!]));
      expect(by.get("shop")!.valuesFiles).to.deep.equal([
        "fleet/values.yaml",
        "fleet/values.eu.yaml",
        "fleet/values.prod.yaml",
        "clusters/shop/values.yaml",
      ]);
      expect(by.get("shop")!.values.controlPlane.statefulSet.image.tag).to.equal("1.2.1-eu");
      expect(by.get("shop")!.values.controlPlane.statefulSet.resources.requests.cpu).to.equal("500m");
      expect(by.get("pay")!.valuesFiles).to.deep.equal([
        "fleet/values.yaml",
        "fleet/values.prod.yaml",
        "clusters/pay/values.yaml",
      ]);
      expect(by.get("pay")!.values.controlPlane.statefulSet.resources.requests.cpu).to.equal("750m");
      expect(by.get("pay")!.values.controlPlane.statefulSet.image.tag).to.equal("1.2.0");
      expect(by.get("dev")!.valuesFiles).to.deep.equal(["fleet/values.yaml", "clusters/dev/values.yaml"]);
      expect(by.get("dev")!.values.controlPlane.statefulSet.image.tag).to.equal("1.2.0");
    },
  );

  it(
    "an error in a base points into the base file, makes every cluster it reaches invalid, and is reported once " +
      "naming them",
    async () => {
      const root = fleet({ "fleet/values.prod.yaml": "controlPlane:\n  statefulSet:\n    replicas: many\n" });
      const v = await loadAndValidate(root);
      const errors = v.diagnostics.filter((d) => d.severity === "error");
      expect(errors).to.have.length(1);
      expect(errors[0]).to.deep.include({ file: "fleet/values.prod.yaml", line: 3 });
      expect(errors[0]!.message).to.match(/\(reaches 2 clusters: pay, shop\)$/);
      const valid = Object.fromEntries(v.clusters.map((c) => [c.name, c.valid]));
      expect(valid).to.deep.equal({ dev: true, pay: false, shop: false });
      expect(
        v.clusters.find((c) => c.name === "shop")!.diagnostics.some((d) => d.file === "fleet/values.prod.yaml"),
      ).to.equal(true);
    },
  );

  it(
    "a bad fleet/groups.yaml is located there and no cluster is valid; a group file without its group is a " +
      "warning",
    async () => {
      const v = await loadAndValidate(
        fleet({ "fleet/groups.yaml": "groups:\n  prod:\n    selector:\n      tier: prod\n" }),
      );
      expect(v.diagnostics.find((d) => d.file === "fleet/groups.yaml" && d.severity === "error")).to.include({
        code: "schema",
      });
      expect(v.clusters.every((c) => !c.valid)).to.equal(true);
      const w = await loadAndValidate(fleet({ "fleet/values.staging.yaml": cpu("1") }));
      expect(w.diagnostics.find((d) => d.file === "fleet/values.staging.yaml")).to.include({
        severity: "warning",
        code: "unknown-group",
      });
    },
  );

  it("labels in cluster.yaml are checked against the schema", async () => {
    const v = await loadAndValidate(fleet({ "clusters/pay/cluster.yaml": "labels:\n  tier: [prod]\n" }));
    expect(v.diagnostics.find((d) => d.file === "clusters/pay/cluster.yaml" && d.severity === "error")).to.include({
      line: 2,
    });
  });

  it("a base change reaches its clusters: fleet/values.yaml and groups.yaml all, a group's file its members", () => {
    const root = fleet();
    writeFileSync(join(root, "unrelated.txt"), "x");
    const folders = ["dev", "pay", "shop"];
    const reach = (f: string) => clustersReachedBy(root, f, folders);
    expect(affectedClusters(["fleet/values.yaml"], "clusters", reach)).to.deep.equal(folders);
    expect(affectedClusters(["fleet/groups.yaml"], "clusters", reach)).to.deep.equal(folders);
    expect(affectedClusters(["fleet/values.eu.yaml"], "clusters", reach)).to.deep.equal(["shop"]);
    expect(affectedClusters(["fleet/values.prod.yaml", "clusters/dev/values.yaml"], "clusters", reach)).to.deep.equal([
      "dev",
      "pay",
      "shop",
    ]);
    expect(affectedClusters(["fleet/README.md", "unrelated.txt"], "clusters", reach)).to.deep.equal([]);
  });
});

describe("fleet bases: when a cluster's labels matter", () => {
  const base = (groups: string[], groupValues: string[], hasValues = false): FleetBase => ({
    groups: groups.map((name) => ({ name, matchLabels: { tier: name } })),
    groupValues: new Set(groupValues),
    hasValues,
  });

  it(
    "only when some group has a values file: otherwise every cluster's layers are the same whatever " + "its labels",
    () => {
      expect(labelsChooseLayers(base([], []))).to.equal(false);
      expect(labelsChooseLayers(base([], [], true))).to.equal(false);
      expect(labelsChooseLayers(base(["prod"], []))).to.equal(false);
      expect(labelsChooseLayers(base([], ["prod"]))).to.equal(false);
      expect(labelsChooseLayers(base(["prod", "eu"], ["eu"]))).to.equal(true);
      // What validateFolder relies on to skip reading cluster.yaml for its labels: the layers do not depend on them.
      for (const b of [base([], [], true), base(["prod"], []), base([], ["prod"], true)]) {
        expect(baseLayers(b, { tier: "prod" })).to.deep.equal(baseLayers(b, {}));
      }
    },
  );
});
