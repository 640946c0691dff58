// Base snapshots: the digest, the ConfigMap round trip, the materialised folder, and the loader rendering a cluster at
// a pinned snapshot.
import { expect } from "chai";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadAndValidate } from "../../src/validate/index.js";
import {
  baseDigest,
  effectiveLayers,
  fromSnapshotConfigMap,
  materialise,
  MAX_BASE_BYTES,
  readBase,
  removeBasesDir,
  snapshotConfigMap,
  snapshotName,
  type BaseSnapshot,
} from "../../src/rollout/snapshot.js";
import { readFleetBase } from "../../src/repo/fleet-base.js";
import { cleanupRepos, makeRepo } from "../validate/fixture.js";

const tag = (v: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${v}"\n`;
const cpu = (v: string) => `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: ${v}\n`;
const GROUPS = "groups:\n  prod:\n    matchLabels:\n      tier: prod\n";

const caches: string[] = [];
function cacheDir(): string {
  const d = mkdtempSync(join(tmpdir(), "vc-bases-"));
  caches.push(d);
  return d;
}
const snap = (root: string): BaseSnapshot => {
  const s = readBase(root, "r1");
  if ("error" in s) throw new Error(s.error);
  return s;
};

describe("rollout: base snapshots", () => {
  after(() => {
    cleanupRepos();
    for (const c of caches.splice(0)) removeBasesDir(c);
  });

  it("digests the sorted (path, bytes) pairs of the base files, not rollout.yaml nor a cluster's", () => {
    const root = makeRepo({
      "fleet/values.yaml": tag("1.0"),
      "fleet/groups.yaml": GROUPS,
      "fleet/rollout.yaml": "waves: [{name: all}]\n",
      "clusters/a/values.yaml": "{}\n",
    });
    const s = snap(root);
    expect(Object.keys(s.files).sort()).to.deep.equal(["fleet/groups.yaml", "fleet/values.yaml"]);
    expect(s.digest).to.equal(baseDigest({ "fleet/values.yaml": tag("1.0"), "fleet/groups.yaml": GROUPS }));
    expect(s.digest).to.not.equal(baseDigest({ "fleet/values.yaml": tag("1.1"), "fleet/groups.yaml": GROUPS }));
    // Framed pairs: moving bytes from one file's end to another's start is a different digest.
    expect(baseDigest({ "fleet/a": "xy", "fleet/b": "" })).to.not.equal(baseDigest({ "fleet/a": "x", "fleet/b": "y" }));
    writeFileSync(join(root, "fleet/rollout.yaml"), "waves: [{name: other}]\n");
    expect(snap(root).digest).to.equal(s.digest);
  });

  it("refuses a base above 512 KiB", () => {
    const root = makeRepo({
      "fleet/values.yaml": `# ${"x".repeat(MAX_BASE_BYTES)}\n{}\n`,
      "clusters/a/values.yaml": "{}\n",
    });
    const s = readBase(root);
    expect(s).to.have.property("error").that.contains("512 KiB");
  });

  it("round-trips through its ConfigMap, and refuses one whose content does not match its digest", () => {
    const s = snap(
      makeRepo({
        "fleet/values.yaml": tag("1.0"),
        "fleet/values.prod.yaml": cpu("1"),
        "clusters/a/values.yaml": "{}\n",
      }),
    );
    const cm = snapshotConfigMap("vc-system", "platform", s);
    expect(cm.metadata.name)
      .to.equal(snapshotName(s.digest))
      .and.match(/^vc-base-[0-9a-f]{16}$/);
    expect(cm.metadata.labels).to.deep.equal({ "vc.orch.io/record": "base", "vc.orch.io/owner": "platform" });
    expect(Object.keys(cm.data as object).sort()).to.deep.equal([
      "digest",
      "fleet__values.prod.yaml",
      "fleet__values.yaml",
      "revision",
    ]);
    expect(fromSnapshotConfigMap(cm)).to.deep.equal(s);
    const forged = structuredClone(cm);
    (forged.data as Record<string, string>)["fleet__values.yaml"] = tag("evil");
    expect(fromSnapshotConfigMap(forged)).to.equal(undefined);
  });

  it("materialises read-only once, and compares clusters' effective layers between snapshots", () => {
    const oldRoot = makeRepo({
      "fleet/values.yaml": tag("1.0"),
      "fleet/groups.yaml": GROUPS,
      "fleet/values.prod.yaml": cpu("1"),
      "clusters/a/values.yaml": "{}\n",
    });
    const oldSnap = snap(oldRoot);
    const newSnap = { ...oldSnap, files: { ...oldSnap.files, "fleet/values.prod.yaml": cpu("2") } };
    newSnap.digest = baseDigest(newSnap.files);
    const cache = cacheDir();
    const dirOld = materialise(cache, oldSnap);
    expect(materialise(cache, oldSnap)).to.equal(dirOld);
    expect(statSync(join(dirOld, "fleet/values.yaml")).mode & 0o777).to.equal(0o444);
    const dirNew = materialise(cache, newSnap);
    const eff = (dir: string, s: BaseSnapshot, labels: Record<string, string>) =>
      effectiveLayers(readFleetBase(dir).base, s, labels);
    expect(eff(dirOld, oldSnap, {})).to.equal(eff(dirNew, newSnap, {})); // not in the prod group: unchanged
    expect(eff(dirOld, oldSnap, { tier: "prod" })).to.not.equal(eff(dirNew, newSnap, { tier: "prod" }));
  });

  it("removes a folder of read-only materialised snapshots", () => {
    const dir = cacheDir();
    materialise(dir, snap(makeRepo({ "fleet/values.yaml": tag("1.0"), "clusters/a/values.yaml": "{}\n" })));
    removeBasesDir(dir);
    expect(existsSync(dir)).to.equal(false);
  });

  it("loads a cluster over its pinned snapshot while others read the repository's newest base", async () => {
    const root = makeRepo({
      "fleet/values.yaml": tag("1.0"),
      "clusters/held/values.yaml": "{}\n",
      "clusters/moved/values.yaml": "{}\n",
    });
    const pinned = materialise(cacheDir(), snap(root));
    writeFileSync(join(root, "fleet/values.yaml"), tag("2.0"));
    const v = await loadAndValidate(root, { bases: { held: pinned } });
    const tagOf = (name: string) =>
      v.clusters.find((c) => c.name === name)!.spec!.values.controlPlane.statefulSet.image.tag;
    expect(tagOf("held")).to.equal("1.0");
    expect(tagOf("moved")).to.equal("2.0");
  });

  it("locates an error of a pinned base in fleet/<file> and names the snapshot", async () => {
    const root = makeRepo({
      "fleet/values.yaml": "controlPlane:\n  statefulSet:\n    replicas: lots\n",
      "clusters/held/values.yaml": "{}\n",
    });
    const s = snap(root);
    const pinned = materialise(cacheDir(), s);
    writeFileSync(join(root, "fleet/values.yaml"), tag("2.0"));
    const v = await loadAndValidate(root, { bases: { held: pinned } });
    const c = v.clusters[0]!;
    expect(c.valid).to.equal(false);
    const d = c.diagnostics.find((x) => x.file === "fleet/values.yaml")!;
    expect(d).to.include({ line: 3, severity: "error" });
    expect(d.message).to.contain(`(base ${s.digest.slice(0, 12)})`);
    // Without the pin the same folder is valid over the newest base.
    expect((await loadAndValidate(root)).clusters[0]!.valid).to.equal(true);
  });
});
