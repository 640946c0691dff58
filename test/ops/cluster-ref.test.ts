// findCluster: the operations' view of a cluster folder, through the validator, for healthy and broken folders.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkClusterName, findCluster } from "../../src/ops/cluster-ref.js";

describe("ops/cluster-ref", () => {
  let repo: string;
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(repo, rel)), { recursive: true });
    writeFileSync(join(repo, rel), text);
  };
  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), "vc-cluster-ref-"));
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it("keeps the namespace and values of a folder whose mesh manifest is broken", async () => {
    write("clusters/shop/values.yaml", "controlPlane:\n  statefulSet:\n    replicas: 2\n");
    write("clusters/shop/cluster.yaml", "namespace: team-shop\n");
    write("clusters/shop/mesh/bad.yaml", "kind: [\n");
    const c = await findCluster("shop", { repo });
    expect(c).to.include({ found: true, namespace: "team-shop" });
    expect(c.values!.controlPlane.statefulSet.replicas).to.equal(2);
  });

  it("says where invalid values are, and takes --namespace over cluster.yaml", async () => {
    write("clusters/shop/values.yaml", "controlPlane:\n  statefulSett: {}\n");
    write("clusters/shop/cluster.yaml", "namespace: team-shop\n");
    const c = await findCluster("shop", { repo, namespace: "elsewhere" });
    expect(c.namespace).to.equal("elsewhere");
    expect(c.values).to.equal(undefined);
    expect(c.valuesNote).to.match(/^clusters\/shop\/values\.yaml:2:3: error: unknown key "statefulSett"/);
  });

  it("reads no cluster.yaml it cannot trust: an invalid one leaves the default namespace", async () => {
    write("clusters/shop/values.yaml", "{}\n");
    write("clusters/shop/cluster.yaml", "namespace: Not_A_Name\n");
    expect((await findCluster("shop", { repo })).namespace).to.equal("vc-shop");
  });

  it("reports a missing folder with the default namespace, and refuses names vc validate refuses", async () => {
    const c = await findCluster("gone", { repo });
    expect(c).to.include({ found: false, namespace: "vc-gone" });
    expect(c.valuesNote).to.contain("no folder clusters/gone");
    expect(() => checkClusterName(`a${"b".repeat(52)}`)).to.throw(/over 52/);
    expect(() => checkClusterName("9lives")).to.throw(/start with a letter/);
  });
});
