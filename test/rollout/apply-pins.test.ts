// vc diff and vc apply against a host with a running rollout: held clusters are planned and applied at their pinned
// base and named in the output; moved clusters at the new one; a finished rollout holds nothing. They never advance it.
import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeClient } from "../../src/host/client.js";
import { begin } from "../../src/rollout/step.js";
import { readBase, type BaseSnapshot } from "../../src/rollout/snapshot.js";
import { RolloutStore, rolloutName } from "../../src/rollout/store.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";
import { cleanupRepos, makeRepo } from "../validate/fixture.js";

const tag = (v: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${v}"\n`;

describe("rollout: vc diff and vc apply honour pins", function () {
  this.timeout(60_000);
  let kube: KubeServer;
  let client: KubeClient;
  let repo: string;
  let host: string[];
  const tagOf = (c: string) =>
    /"image":"[^"]*:([^"]+)"/.exec(JSON.stringify(kube.get("apps/v1", "StatefulSet", `vc-${c}`, c)!.spec))![1];
  const snap = (): BaseSnapshot => readBase(repo) as BaseSnapshot;

  before(async () => {
    kube = await startKubeServer();
    client = KubeClient.open({ kubeconfig: kube.kubeconfigPath, context: "test" });
    host = ["--target", "kube", "--kubeconfig", kube.kubeconfigPath, "--context", "test", "--owner", "platform"];
    repo = makeRepo({
      "fleet/values.yaml": tag("1.0"),
      "fleet/rollout.yaml": "waves:\n  - name: canary\n  - name: rest\n",
      "clusters/a/values.yaml": "{}\n",
      "clusters/b/values.yaml": "{}\n",
    });
  });
  after(async () => {
    client.close();
    await kube.close();
    cleanupRepos();
  });

  it(
    "plans and applies a held cluster at its pinned base, the moved one at the new base, and says which " + "is held",
    async () => {
      const first = await runVc(["apply", repo, ...host]);
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stderr).to.not.contain("held by rollout");
      const old = snap();
      const store = new RolloutStore(client, "vc-system");
      await store.writeSnapshot("platform", old);
      writeFileSync(join(repo, "fleet/values.yaml"), tag("2.0"));
      const next = snap();
      const r = begin({
        source: "platform",
        to: { digest: next.digest },
        waves: [
          { name: "canary", clusters: ["a"] },
          { name: "rest", clusters: ["b"] },
        ],
        from: { a: old.digest, b: old.digest },
        now: Date.now(),
      });
      r.moved.a = { from: old.digest, at: "to", health: "Unknown", movedAt: r.started };
      await store.write(r, undefined);
      const recordBefore = JSON.stringify(kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))!.data);

      const diff = await runVc(["diff", repo, ...host, "--exit-code"]);
      expect(diff.code).to.equal(1);
      expect(diff.stderr).to.contain(
        `rollout ${r.id} is Progressing (wave 1/2, canary): 1 cluster(s) shown at the base they are pinned to`,
      );
      expect(diff.stderr).to.contain(`cluster b: held by rollout ${r.id}: wave 2/2 (rest)`);
      expect(diff.stdout).to.contain("vc-a/a").and.not.contain("vc-b/b");
      const json = JSON.parse((await runVc(["diff", repo, ...host, "-o", "json"])).stdout) as {
        held?: Record<string, string>;
      };
      expect(json.held).to.deep.equal({ b: `held by rollout ${r.id}: wave 2/2 (rest)` });
      expect((await runVc(["diff", repo, ...host, "-o", "markdown"])).stdout).to.contain(
        `> :hourglass: cluster \`b\`: held by rollout ${r.id}: wave 2/2 (rest)`,
      );

      const apply = await runVc(["apply", repo, ...host]);
      expect(apply.code, apply.stderr).to.equal(0);
      expect([tagOf("a"), tagOf("b")]).to.deep.equal(["2.0", "1.0"]);
      // Never advanced: the record is as it was.
      expect(JSON.stringify(kube.get("v1", "ConfigMap", "vc-system", rolloutName("platform"))!.data)).to.equal(
        recordBefore,
      );

      // Completed (b moved too): nothing held; b is planned at the new base.
      const stored = await store.read("platform");
      const done = stored.record!;
      done.moved.b = { from: old.digest, at: "to", health: "Healthy", movedAt: done.started };
      await store.write({ ...done, phase: "Completed" }, stored.resourceVersion);
      await store.writeSnapshot("platform", next);
      const after = await runVc(["diff", repo, ...host, "--exit-code"]);
      expect(after.code).to.equal(1);
      expect(after.stderr).to.not.contain("cluster b:");
      expect(after.stdout).to.contain("vc-b/b");
      expect((await runVc(["apply", repo, ...host])).code).to.equal(0);
      expect([tagOf("a"), tagOf("b")]).to.deep.equal(["2.0", "2.0"]);

      // A newer base the reconciler has not started rolling out: vc apply neither bypasses it nor vc diff hides why.
      writeFileSync(join(repo, "fleet/values.yaml"), tag("3.0"));
      const newest = snap();
      const pending = await runVc(["diff", repo, ...host, "--exit-code"]);
      expect(pending.code, pending.stdout).to.equal(0);
      expect(pending.stderr).to.contain(
        `cluster a: base ${newest.digest.slice(0, 12)} is not rolled out yet: it stays at base ` +
          `${next.digest.slice(0, 12)}`,
      );
      expect((await runVc(["apply", repo, ...host])).code).to.equal(0);
      expect([tagOf("a"), tagOf("b")]).to.deep.equal(["2.0", "2.0"]);
    },
  );

  it(
    "vc list's drift agrees with vc diff: a base not rolled out yet, a rollout holding a cluster, " + "an abort",
    async () => {
      // Where the test above left the host: a and b at 2.0, base 3.0 in the repository not rolled out yet.
      const drift = async () => {
        const list = await runVc(
          ["list", "--repo", repo, "--kubeconfig", kube.kubeconfigPath, "--context", "test", "-o", "json"],
          {
            env: { VC_OWNER: "platform" },
          },
        );
        expect(list.code, list.stderr).to.equal(0);
        const rows = JSON.parse(list.stdout) as Array<{ name: string; drift: string }>;
        return Object.fromEntries(rows.map((row) => [row.name, row.drift]));
      };
      const diffCode = async () => (await runVc(["diff", repo, ...host, "--exit-code"])).code;
      expect([tagOf("a"), tagOf("b")]).to.deep.equal(["2.0", "2.0"]);
      expect(await diffCode()).to.equal(0);
      expect(await drift()).to.deep.equal({ a: "no", b: "no" });

      // A rollout to 3.0 that moved a and holds b: applied so, vc diff plans nothing, nor does vc list.
      const store = new RolloutStore(client, "vc-system");
      const stored = await store.read("platform");
      const from = stored.record!.to.digest;
      const r = begin({
        source: "platform",
        to: { digest: snap().digest },
        waves: [
          { name: "canary", clusters: ["a"] },
          { name: "rest", clusters: ["b"] },
        ],
        from: { a: from, b: from },
        now: Date.now(),
      });
      r.moved.a = { from, at: "to", health: "Unknown", movedAt: r.started };
      await store.write(r, stored.resourceVersion);
      expect((await runVc(["apply", repo, ...host])).code).to.equal(0);
      expect([tagOf("a"), tagOf("b")]).to.deep.equal(["3.0", "2.0"]);
      expect(await diffCode()).to.equal(0);
      expect(await drift()).to.deep.equal({ a: "no", b: "no" });

      // Aborted: b stays at its base until the next base change; still nothing to plan either way.
      const progressing = await store.read("platform");
      await store.write({ ...progressing.record!, phase: "Aborted" }, progressing.resourceVersion);
      expect(await diffCode()).to.equal(0);
      expect(await drift()).to.deep.equal({ a: "no", b: "no" });
    },
  );
});
