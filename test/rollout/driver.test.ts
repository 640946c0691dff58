// The reconciler's rollout hook on a dir: target: rollouts are not driven there (the base moves at once), said once.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../../src/model/log.js";
import { newRolloutMemory, rolloutForPass } from "../../src/rollout/driver.js";
import { DirTarget } from "../../src/sinks/dir.js";
import { cleanupRepos, makeRepo } from "../validate/fixture.js";

describe("rollout: the pass hook on a dir: target", () => {
  const out = mkdtempSync(join(tmpdir(), "vc-dir-"));
  after(() => {
    cleanupRepos();
    rmSync(out, { recursive: true, force: true });
  });

  it("drives nothing and says once that rollouts need a kube target", async () => {
    const root = makeRepo({
      "clusters/a/values.yaml": "{}\n",
      "fleet/values.yaml": "{}\n",
      "fleet/rollout.yaml": "waves: [{name: all}]\n",
    });
    const said: string[] = [];
    const logger: Logger = { debug() {}, warn() {}, error() {}, info: (m) => void said.push(m) };
    const mem = newRolloutMemory();
    const deps = { target: new DirTarget(out), logger, mayWrite: () => true };
    expect(await rolloutForPass(deps, mem, root, "r1", new Map(), () => ["a"])).to.equal(undefined);
    expect(await rolloutForPass(deps, mem, root, "r2", new Map(), () => ["a"])).to.equal(undefined);
    expect(said).to.deep.equal([
      "fleet/rollout.yaml is not driven on this target: rollouts need a kube target (the base applies to every " +
        "cluster at once)",
    ]);
    expect(mem.active).to.equal(false);
  });
});
