// A name with a newline and ANSI codes cannot forge table rows or colour the terminal: vc status, history, list,
// describe and apply print host text escaped (model/escape.ts); JSON output keeps the exact string.
import { expect } from "chai";
import { cpSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { dump, load } from "js-yaml";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { TestRepo } from "../support/git-server.js";
import { runVc } from "../support/vc.js";
import type { ClusterStatus } from "../../src/records/status.js";
import { formatPlanReport } from "../../src/plan/format.js";
import { toText as applyText } from "../../src/cli/apply-report.js";
import { formatFindings } from "../../src/ops/doctor/format.js";

const FULL = [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }];
/** A user entry name that tries to end its row, print a row of its own in red, clear the screen and reverse text. */
const FORGED =
  "mallory\nminimal   vc-minimal   applied   0123456789ab   reconciler\u001b[31m FAKE " +
  "\u001b[0m\u001b[2J\u009b2J\u202eslfa";
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("security: control characters from the host are printed escaped", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let repo: TestRepo;
  let kube: string[];
  let mallory: string;

  before(async () => {
    // A server without SelfSubjectReview that cannot review tokens (1.20 as most users see it): the user entry's name
    // is the claim.
    server = await startKubeServer({
      users: [{ token: "t-mallory", rules: FULL, name: "mallory" }],
      unservedGroups: ["authentication.k8s.io"],
    });
    repo = new TestRepo();
    cpSync(resolve("clusters", "minimal"), join(repo.work, "clusters", "minimal"), { recursive: true });
    repo.commit("fleet");
    mallory = join(repo.work, "..", `kubeconfig-mallory-${process.pid}`);
    writeFileSync(
      mallory,
      dump({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: server.url, "insecure-skip-tls-verify": true } }],
        users: [{ name: FORGED, user: { token: "t-mallory" } }],
        contexts: [{ name: "test", context: { cluster: "c", user: FORGED } }],
        "current-context": "test",
      }),
    );
    kube = ["--kubeconfig", mallory, "--context", "test"];
    const applied = await runVc(["apply", repo.work, "--target", "kube", ...kube]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    expect(applied.stdout).to.not.match(RAW);
    expect(applied.stdout)
      .to.include("by unverified: mallory\\nminimal   vc-minimal")
      .and.include("\\x1b[31m FAKE \\x1b[0m\\x1b[2J\\x9b2J\\u202eslfa (kubeconfig user)");
    // And a message of the same kind in the stored status (vc's record), as whoever can write it would plant it.
    const stored = server
      .list("v1", "ConfigMap")
      .find(
        (c) =>
          c.metadata.labels?.["vc.orch.io/record"] === "record" &&
          (c as { data?: Record<string, string> }).data?.cluster === "minimal",
      )!;
    expect(stored, "the cluster's record").to.not.equal(undefined);
    const data = (stored as unknown as { data: Record<string, string> }).data;
    server.put({
      ...stored,
      data: { ...data, message: `ok\nbookinfo   team-bookinfo   applied   \u001b]0;pwned\u0007` },
    });
  });
  after(async () => {
    await server?.close();
    repo?.dispose();
  });

  it("vc status: one row for the cluster, the forged name and message escaped and recorded as unverified", async () => {
    const table = await runVc(["status", "--target", "kube", ...kube]);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.not.match(RAW);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines).to.have.length(2);
    expect(lines.filter((l) => /^(minimal|bookinfo)\s/.test(l))).to.have.length(1);
    expect(lines[1])
      .to.include("unverified: mallory\\nminimal")
      .and.include("ok\\nbookinfo")
      .and.include("\\x1b]0;pwned\\x07");

    const detail = await runVc(["status", "--target", "kube", "--cluster", "minimal", ...kube]);
    expect(detail.stdout).to.not.match(RAW);
    expect(detail.stdout).to.include("applied by:        unverified: mallory\\nminimal");
    expect(detail.stdout.split("\n").filter((l) => l.startsWith("applied by:"))).to.have.length(1);

    // JSON stays JSON: the exact strings, escaped by JSON itself.
    const json = await runVc(["status", "--target", "kube", "--cluster", "minimal", "-o", "json", ...kube]);
    const s = JSON.parse(json.stdout) as ClusterStatus;
    expect(s.lastAppliedBy).to.equal(`unverified: ${FORGED}`);
    expect(s.history[0]!.by).to.equal(`unverified: ${FORGED}`);
    expect(json.stdout).to.not.match(RAW);

    // YAML too: the strings that hold such characters are double-quoted with escapes, and read back the same.
    const yaml = await runVc(["status", "--target", "kube", "--cluster", "minimal", "-o", "yaml", ...kube]);
    expect(yaml.stdout).to.not.match(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect((load(yaml.stdout) as ClusterStatus).lastAppliedBy).to.equal(`unverified: ${FORGED}`);
  });

  it("vc history, vc list and vc describe print the same escaped", async () => {
    const history = await runVc(["history", "minimal", "--repo", repo.work, "--target", "kube", ...kube]);
    expect(history.code, history.stderr).to.equal(0);
    expect(history.stdout).to.not.match(RAW);
    expect(history.stdout).to.include("by unverified: mallory\\nminimal");
    const list = await runVc(["list", "--repo", repo.work, ...kube]);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.not.match(RAW);
    expect(
      list.stdout
        .trimEnd()
        .split("\n")
        .filter((l) => /^minimal\s/.test(l)),
    ).to.have.length(1);
    const describe = await runVc(["describe", "minimal", "--repo", repo.work, ...kube]);
    expect(describe.code, describe.stderr).to.equal(0);
    expect(describe.stdout).to.not.match(RAW);
    expect(describe.stdout).to.include("by unverified: mallory\\nminimal");
  });

  it("diff, apply and doctor reports escape server messages and run-time suspensions, in colour too", () => {
    const suspended = [{ cluster: "minimal", by: FORGED }];
    const errors = [{ cluster: "minimal", message: "denied \u001b[2J\u001b]0;title\u0007" }];
    for (const colour of [false, true]) {
      const plan = formatPlanReport({ plans: [], errors, suspendedAtRunTime: suspended }, "text", { colour });
      const apply = applyText({ results: [], errors, suspended: [], suspendedAtRunTime: suspended }, false, colour);
      for (const out of [plan, apply]) {
        // Colour is vc's own SGR sequences only: strip them, and nothing raw is left.
        const bare = out.replace(/\u001b\[[0-9;]*m/g, "");
        expect(bare).to.not.match(RAW);
        expect(bare).to.include("suspended by mallory\\nminimal").and.include("denied \\x1b[2J\\x1b]0;title\\x07");
        expect(bare.split("\n").filter((l) => /^minimal\s/.test(l))).to.have.length(0);
      }
    }
    const doctor = formatFindings("minimal", "vc-minimal", [
      {
        severity: "error",
        check: "pods",
        object: `Pod ${FORGED}`,
        message: "x\u001b[31m",
        resolution: "fix\nERROR [forged] row",
      },
    ] as never);
    expect(doctor).to.not.match(RAW);
    expect(doctor.split("\n").filter((l) => l.startsWith("ERROR"))).to.have.length(1);
  });
});
