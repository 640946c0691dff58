// Without any kubeconfig (no --kubeconfig, KUBECONFIG unset, no ~/.kube/config, not in a cluster) a host command
// says so and how to fix it at once, instead of client-node's fallback to localhost:8080 and a bare ECONNREFUSED.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { missingKubeconfig } from "../../src/host/kubeconfig-file.js";

describe("host/kubeconfig-file: no kubeconfig at all", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "vc-nokube-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("names what is missing and how to fix it", () => {
    const msg = missingKubeconfig(undefined, {}, home, join(home, "no-token"));
    expect(msg).to.match(
      /^no kubeconfig found: KUBECONFIG is not set, .*\.kube\/config does not exist and vc is not running in a cluster/,
    );
    expect(msg).to.contain("--kubeconfig");
  });

  it("finds one in KUBECONFIG, ~/.kube/config or an in-cluster token", () => {
    expect(missingKubeconfig(undefined, { KUBECONFIG: "/x/config" }, home, join(home, "no-token"))).to.equal(undefined);
    writeFileSync(join(home, "token"), "t");
    expect(missingKubeconfig(undefined, {}, home, join(home, "token"))).to.equal(undefined);
    mkdirSync(join(home, ".kube"));
    writeFileSync(join(home, ".kube", "config"), "");
    expect(missingKubeconfig(undefined, {}, home, join(home, "no-token"))).to.equal(undefined);
  });

  it("says when the file given by --kubeconfig does not exist", () => {
    expect(missingKubeconfig(join(home, "nope"), {}, home)).to.match(
      /kubeconfig .*nope \(--kubeconfig\) does not exist/,
    );
  });

  it("makes vc list fail with exit 2 and the message, without trying localhost:8080", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: "1" };
    delete env.KUBECONFIG;
    const bin = join(import.meta.dirname, "..", "..", "bin", "vc.js");
    const r = spawnSync(process.execPath, [bin, "list"], { env, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).to.equal(2);
    expect(r.stderr).to.contain("no kubeconfig found");
    expect(r.stderr).to.not.contain("ECONNREFUSED");
    expect(r.stderr).to.not.match(/\n\s+at /);
  });
});
