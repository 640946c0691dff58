// -o yaml where a command's output is data: the same data as -o json (keys sorted), for vc apply (a whole fleet,
// streamed, and clusters by name), vc diff, vc validate and vc adopt.
import { expect } from "chai";
import { load } from "js-yaml";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { runVc } from "../support/vc.js";
import { startKubeServer } from "../support/kube-server/index.js";

/** Durations and times differ from run to run. */
const steady = (data: unknown): unknown =>
  JSON.parse(
    JSON.stringify(data, (k, v) =>
      k === "durationMs" ? 0 : typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v) ? "(time)" : v,
    ),
  );

async function both(args: string[], code: number): Promise<{ json: unknown; yaml: unknown }> {
  const json = await runVc([...args, "-o", "json"]);
  const yaml = await runVc([...args, "-o", "yaml"]);
  expect(json.code, json.stderr).to.equal(code);
  expect(yaml.code, yaml.stderr).to.equal(code);
  expect(yaml.stdout.trimStart().startsWith("{"), "YAML, not JSON").to.equal(false);
  return { json: steady(JSON.parse(json.stdout)), yaml: steady(load(yaml.stdout)) };
}

describe("cli: -o yaml gives -o json's data", function () {
  this.timeout(120_000);
  let tmp: string;
  let repo: string;
  const names = Array.from({ length: 3 }, (_, i) => fleetClusterName(i)).sort();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), "vc-yaml-out-"));
    repo = join(tmp, "repo");
    await generateFleet(repo, { clusters: 3, meshPerCluster: 1 });
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("vc apply (the whole fleet, streamed, and by name), vc diff and vc validate", async () => {
    const whole = await both(["apply", repo, "--target", `dir:${join(tmp, "out")}`, "--dry-run"], 0);
    expect(whole.yaml).to.deep.equal(whole.json);
    expect((whole.json as { clusters: unknown[] }).clusters).to.have.length(3);
    const named = await both(
      ["apply", repo, "--target", `dir:${join(tmp, "out")}`, "--dry-run", ...names.flatMap((n) => ["--cluster", n])],
      0,
    );
    expect(named.yaml).to.deep.equal(named.json);
    const diff = await both(["diff", repo, "--target", `dir:${join(tmp, "out")}`], 0);
    expect(diff.yaml).to.deep.equal(diff.json);
    const validate = await both(["validate", repo], 0);
    expect(validate.yaml).to.deep.equal(validate.json);
    expect((validate.json as { valid: boolean }).valid).to.equal(true);
  });

  it("vc adopt", async () => {
    const server = await startKubeServer();
    try {
      const kube = ["--target", "kube", "--kubeconfig", server.kubeconfigPath, "--context", "test"];
      const first = await runVc(["apply", repo, ...kube, "--owner", "team-a", "--cluster", names[0]!]);
      expect(first.code, first.stdout + first.stderr).to.equal(0);
      const adopt = await both(
        ["adopt", names[0]!, repo, ...kube, "--owner", "team-b", "--from", "team-a", "--dry-run"],
        0,
      );
      expect(adopt.yaml).to.deep.equal(adopt.json);
      expect(adopt.json).to.deep.include({ owner: "team-b", from: "team-a" });
    } finally {
      await server.close();
    }
  });
});
