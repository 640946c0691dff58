// fleet/rollout.yaml under vc validate: located schema errors, the rules the schema cannot say, a valid file's
// settings.
import { expect } from "chai";
import { loadRollout } from "../../src/validate/rollout-file.js";
import { runVc } from "../support/vc.js";
import { cleanupRepos, makeRepo } from "./fixture.js";

const fleet = (rollout: string) =>
  makeRepo({ "clusters/a/values.yaml": "{}\n", "fleet/values.yaml": "{}\n", "fleet/rollout.yaml": rollout });

describe("rollout: fleet/rollout.yaml", () => {
  after(cleanupRepos);

  it("is optional, and a valid one gives its settings", () => {
    expect(loadRollout(makeRepo({ "clusters/a/values.yaml": "{}\n" }))).to.deep.equal({
      present: false,
      diagnostics: [],
    });
    const r = loadRollout(
      fleet(
        'waves:\n  - name: canary\n    selector: {matchLabels: {canary: "true"}}\n  - name: rest\npause: manual\nonFailure: restore\n',
      ),
    );
    expect(r.diagnostics).to.deep.equal([]);
    expect(r.settings).to.deep.include({ onFailure: "restore", maxUnavailable: 1 });
    expect(r.settings!.waves[0]).to.deep.include({ name: "canary", pause: "manual", gateTimeoutMs: 600_000 });
  });

  it("vc validate locates each error in fleet/rollout.yaml and exits 1; a valid file exits 0", async () => {
    const bad = fleet(
      "waves:\n  - name: canary\n    percent: 150\n  - name: Rest\nmaxUnavailable: 0\npause: soon\nonFailure: retry\n",
    );
    const run = await runVc(["validate", bad]);
    expect(run.code).to.equal(1);
    const lines = run.stdout.split("\n").filter((l) => l.startsWith("fleet/rollout.yaml:"));
    expect(lines.some((l) => l.startsWith("fleet/rollout.yaml:3:5: error:"))).to.equal(true, run.stdout);
    expect(lines.some((l) => l.startsWith("fleet/rollout.yaml:4:5: error:"))).to.equal(true, run.stdout);
    expect(lines.some((l) => l.startsWith("fleet/rollout.yaml:5:1: error:"))).to.equal(true, run.stdout);
    expect(lines.some((l) => l.startsWith("fleet/rollout.yaml:6:1: error:"))).to.equal(true, run.stdout);
    expect(lines.some((l) => l.startsWith("fleet/rollout.yaml:7:1: error:"))).to.equal(true, run.stdout);
    const good = await runVc(["validate", fleet("waves:\n  - name: all\n")]);
    expect(good.code, good.stdout).to.equal(0);
  });

  it("refuses a wave named twice and percentages that go down, located at the value", async () => {
    const r = loadRollout(fleet("waves:\n  - name: a\n    percent: 50\n  - name: a\n    percent: 10\n"));
    expect(r.settings).to.equal(undefined);
    expect(r.diagnostics.map((d) => [d.line, d.col, d.message.slice(0, 30)])).to.deep.equal([
      [4, 11, 'wave "a" is named twice: wave '],
      [5, 14, "percent 10 is below an earlier"],
    ]);
    const y = loadRollout(fleet("waves: [\n"));
    expect(y.diagnostics[0]).to.include({ file: "fleet/rollout.yaml", severity: "error" });
  });
});
