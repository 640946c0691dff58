// The long-running parts: backoff while the remote is away, leader election between replicas, the webhook, folder
// watching.
import { expect } from "chai";
import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Backoff } from "../../src/util/retry.js";
import { LeaderElector } from "../../src/reconciler/leader.js";
import { ReconcileLoop } from "../../src/reconciler/loop.js";
import type { PassResult } from "../../src/reconciler/pass.js";
import { startReconciler } from "../../src/reconciler/service.js";
import { FolderSource } from "../../src/reconciler/source.js";
import { DirStatusStore } from "../../src/records/dir-store.js";
import { sign } from "../../src/reconciler/webhook.js";
import { silentLogger } from "../../src/model/log.js";
import { DirTarget } from "../../src/sinks/dir.js";
import { ANNOTATIONS } from "../../src/translate/keys.js";
import { Bed, name, newPassState, runPass } from "./harness.js";

type Event = PassResult | { error: Error; retryInMs: number };

/** Resolves with the first event matching `pred`. */
function waitFor(events: Event[], pred: (e: Event) => boolean, ms = 20_000): Promise<Event> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = (): void => {
      const hit = events.find(pred);
      if (hit) return resolve(hit);
      if (Date.now() - started > ms) return reject(new Error("timed out waiting for the reconciler"));
      setTimeout(check, 20);
    };
    check();
  });
}

const isError = (e: Event): e is { error: Error; retryInMs: number } => "error" in e;

describe("reconciler loop", function () {
  this.timeout(60_000);
  let bed: Bed;
  beforeEach(async () => {
    bed = await Bed.start(4, 1);
  });
  afterEach(() => bed.close());

  it("keeps the last good state while the remote is away, backs off, and recovers when it returns", async () => {
    const events: Event[] = [];
    const deps = bed.deps();
    const loop = new ReconcileLoop(deps, {
      intervalMs: 100,
      resyncMs: 3_600_000,
      watch: false,
      backoff: new Backoff({ initialMs: 100, maxMs: 400 }),
      onPass: (e) => events.push(e),
    });
    await loop.start();
    await waitFor(events, (e) => !isError(e) && e.kind === "full");
    const live = bed.repo.head();
    await bed.git.stop();
    await waitFor(events, (e) => isError(e) && loop.backoff.failures >= 3);
    const errors = events.filter(isError);
    // Refused, or reset when the server went away in the middle of a fetch (a poll comes right after the full pass).
    expect(errors[0]!.error.message).to.match(/ECONNREFUSED|ECONNRESET/);
    expect(errors[1]!.retryInMs).to.be.greaterThan(errors[0]!.retryInMs);
    expect(bed.statefulSet(name(1))!.metadata.annotations![ANNOTATIONS.revision]).to.equal(live);
    expect(loop.healthy).to.equal(true);

    bed.edit(`clusters/${name(1)}/values.yaml`, /cpu: \d+m/, "cpu: 333m");
    const next = bed.repo.commit("while the server was away");
    await bed.git.start();
    const ok = await waitFor(events, (e) => !isError(e) && e.revision === next);
    expect(ok).to.not.equal(undefined);
    expect(loop.backoff.failures).to.equal(0);
    expect(JSON.stringify(bed.statefulSet(name(1)))).to.include("333m");
    await loop.stop();
  });

  it("retries a full pass that failed as a full pass, once the remote is back", async () => {
    const events: Event[] = [];
    await bed.git.stop();
    const loop = new ReconcileLoop(bed.deps(), {
      intervalMs: 3_600_000,
      resyncMs: 3_600_000,
      watch: false,
      backoff: new Backoff({ initialMs: 100, maxMs: 200 }),
      onPass: (e) => events.push(e),
    });
    await loop.start();
    await waitFor(events, (e) => isError(e));
    expect(loop.ready).to.equal(false);
    await bed.git.start();
    const pass = (await waitFor(events, (e) => !isError(e))) as PassResult;
    expect(pass.kind).to.equal("full");
    expect(pass.clusters.map((c) => c.result)).to.deep.equal(["applied", "applied", "applied", "applied"]);
    expect(loop.ready).to.equal(true);
    await loop.stop();
  });

  it(
    "a standby's loop runs the full pass it is asked for once it leads (a drain with nothing to await must not " +
      "wedge the loop)",
    async () => {
      const events: Event[] = [];
      let leading = false;
      const loop = new ReconcileLoop(bed.deps({ mayWrite: () => leading }), {
        intervalMs: 3_600_000,
        resyncMs: 3_600_000,
        watch: false,
        onPass: (e) => events.push(e),
      });
      await loop.start();
      expect(events).to.deep.equal([]);
      leading = true;
      loop.trigger({ kind: "full" });
      const pass = (await waitFor(events, (e) => !isError(e))) as PassResult;
      expect(pass.kind).to.equal("full");
      expect(pass.clusters.map((c) => c.result)).to.deep.equal(["applied", "applied", "applied", "applied"]);
      await loop.stop();
    },
  );

  it("two replicas: only the lease holder writes, and the other takes over when it leaves", async () => {
    const opts = { namespace: "vc-system", leaseDurationMs: 30_000, renewDeadlineMs: 20_000 };
    const a = new LeaderElector({ ...opts, client: bed.client(), identity: "replica-a" });
    const b = new LeaderElector({ ...opts, client: bed.client(), identity: "replica-b" });
    expect(await a.tick()).to.equal(true);
    expect(await b.tick()).to.equal(false);
    expect(a.isLeader && !b.isLeader).to.equal(true);
    const lease = bed.kube.get("coordination.k8s.io/v1", "Lease", "vc-system", "vc-reconciler")!;
    expect((lease.spec as { holderIdentity: string }).holderIdentity).to.equal("replica-a");

    const depsA = bed.deps({ mayWrite: () => a.isLeader }, "mirror-a");
    const depsB = bed.deps({ mayWrite: () => b.isLeader }, "mirror-b");
    bed.kube.resetRequests();
    const follower = await runPass(depsB, newPassState(), { kind: "full" });
    expect(follower.clusters.every((c) => c.result === "skipped")).to.equal(true);
    expect(bed.writes()).to.equal(0);
    const leader = await runPass(depsA, newPassState(), { kind: "full" });
    expect(leader.clusters.every((c) => c.result === "applied")).to.equal(true);
    expect(bed.writes()).to.be.greaterThan(0);

    // A racing takeover loses on the resourceVersion: still one leader.
    await Promise.all([a.tick(), b.tick()]);
    expect([a.isLeader, b.isLeader]).to.deep.equal([true, false]);

    // The leader leaves (releases the lease): the other takes over at its next tick.
    await a.stop();
    expect(a.isLeader).to.equal(false);
    expect(await b.tick()).to.equal(true);
    expect(
      (
        bed.kube.get("coordination.k8s.io/v1", "Lease", "vc-system", "vc-reconciler")!.spec as {
          leaseTransitions: number;
        }
      ).leaseTransitions,
    ).to.equal(1);
    await b.stop();
  });

  it("a standby hands a webhook push to the leader through the Lease", async () => {
    const pushes: Array<string | undefined> = [];
    const opts = { namespace: "vc-system", leaseDurationMs: 30_000, renewDeadlineMs: 20_000 };
    const a = new LeaderElector({ ...opts, client: bed.client(), identity: "a", onPush: (c) => pushes.push(c) });
    const b = new LeaderElector({ ...opts, client: bed.client(), identity: "b" });
    await a.tick();
    await b.tick();
    await a.tick();
    expect(pushes).to.deep.equal([]);
    await b.notifyPush("abc123");
    await a.tick();
    expect(pushes).to.deep.equal(["abc123"]);
    await a.tick();
    expect(pushes).to.deep.equal(["abc123"]);
    expect(a.isLeader && !b.isLeader).to.equal(true);
  });

  it("#38.4: never leads from a lease namespace without the platform mark, or a cluster's", async () => {
    bed.kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenant-made" } });
    bed.kube.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: "host-ns",
        labels: { "vc.orch.io/platform-namespace": "true", "vc.orch.io/inventory": "shop" },
      },
    });
    for (const namespace of ["tenant-made", "host-ns"]) {
      const errors: string[] = [];
      const logger = {
        ...silentLogger,
        error: (_m: string, f?: Record<string, unknown>) => errors.push(String(f?.error)),
      };
      const elector = new LeaderElector({ namespace, client: bed.client(), identity: "a", logger });
      expect(await elector.tick(), namespace).to.equal(false);
      expect(elector.isLeader).to.equal(false);
      expect(errors.join("\n"), namespace).to.match(/without the platform mark|host namespace of cluster shop/);
      expect(bed.kube.get("coordination.k8s.io/v1", "Lease", namespace, "vc-reconciler"), namespace).to.equal(
        undefined,
      );
    }
  });

  it("a leader that stops renewing loses the lease to the other replica after the lease duration", async () => {
    let now = 1_000_000;
    const opts = { namespace: "vc-system", leaseDurationMs: 15_000, now: () => now };
    const a = new LeaderElector({ ...opts, client: bed.client(), identity: "a" });
    const b = new LeaderElector({ ...opts, client: bed.client(), identity: "b" });
    expect(await a.tick()).to.equal(true);
    expect(await b.tick()).to.equal(false);
    now += 10_000;
    expect(await b.tick()).to.equal(false); // a's lease still valid as b observed it
    now += 6_000;
    expect(await b.tick()).to.equal(true); // a went quiet for longer than the lease duration
    expect(a.isLeader).to.equal(false); // a's renew deadline passed too
    expect(await a.tick()).to.equal(false);
  });

  it(
    "serves the webhook: a bad signature is refused without a fetch, a good one applies the " + "pushed commit",
    async () => {
      const secretFile = join(bed.tmp, "hook-secret");
      writeFileSync(secretFile, "topsecret\n");
      const events: Event[] = [];
      const r = await startReconciler({
        repo: bed.url,
        branch: "main",
        target: "kube",
        kubeconfig: bed.kube.kubeconfigPath,
        context: "test",
        cacheDir: join(bed.tmp, "cache"),
        intervalMs: 3_600_000,
        resyncMs: 3_600_000,
        listen: "127.0.0.1:0",
        webhookSecretFile: secretFile,
        leaderElect: false,
        allowMassPrune: false,
        logger: silentLogger,
        onPass: (e) => events.push(e),
      });
      try {
        await waitFor(events, (e) => !isError(e));
        expect((await fetch(`${r.server!.url}/readyz`)).status).to.equal(200);
        bed.edit(`clusters/${name(2)}/values.yaml`, /cpu: \d+m/, "cpu: 444m");
        const pushed = bed.repo.commit("pushed");
        const body = JSON.stringify({ ref: "refs/heads/main", after: pushed });
        const fetchesBefore = bed.git.requests.length;
        const bad = await fetch(`${r.server!.url}/webhook`, {
          method: "POST",
          body,
          headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("guess", body) },
        });
        expect(bad.status).to.equal(401);
        await new Promise((res) => setTimeout(res, 200));
        expect(bed.git.requests.length).to.equal(fetchesBefore);
        const good = await fetch(`${r.server!.url}/webhook`, {
          method: "POST",
          body,
          headers: { "X-GitHub-Event": "push", "X-Hub-Signature-256": sign("topsecret", body) },
        });
        expect(good.status).to.equal(202);
        const pass = (await waitFor(events, (e) => !isError(e) && e.revision === pushed)) as PassResult;
        expect(pass.kind).to.equal("incremental");
        expect(pass.clusters.map((c) => c.cluster)).to.deep.equal([name(2)]);
        expect(bed.git.requests.length).to.be.greaterThan(fetchesBefore);
        expect(JSON.stringify(bed.statefulSet(name(2)))).to.include("444m");
        const metrics = await (await fetch(`${r.server!.url}/metrics`)).text();
        expect(metrics).to.match(
          new RegExp(`vc_cluster_last_success_timestamp_seconds\\{cluster="${name(2)}"\\} \\d+`),
        );
        expect(metrics).to.match(/vc_git_fetch_duration_seconds_count\{result="ok"\} [2-9]/);
        expect(metrics).to.include('vc_reconcile_duration_seconds_count{result="applied"} 5');
      } finally {
        await r.close();
      }
    },
  );
});

describe("reconciler: local folder source", function () {
  this.timeout(30_000);
  it("watches the folder and reconciles only the cluster whose files changed", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "vc-watch-"));
    const repo = join(tmp, "repo");
    cpSync(join(process.cwd(), "clusters"), join(repo, "clusters"), { recursive: true });
    const target = new DirTarget(join(tmp, "out"));
    const events: PassResult[] = [];
    const { defaultEngine } = await import("../../src/pipeline/engine.js");
    const loop = new ReconcileLoop(
      {
        engine: defaultEngine,
        target,
        store: new DirStatusStore(target.root),
        allowMassPrune: false,
        mayWrite: () => true,
        source: new FolderSource(repo),
        logger: silentLogger,
      },
      {
        intervalMs: 3_600_000,
        resyncMs: 3_600_000,
        watch: true,
        onPass: (e) => void (!("error" in e) && events.push(e)),
      },
    );
    try {
      await loop.start();
      await waitFor(events, () => true);
      expect(events[0]!.clusters.map((c) => c.result)).to.deep.equal(["applied", "applied", "applied"]);
      const file = join(repo, "clusters/minimal/values.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replace(/cpu: 200m/, "cpu: 250m"));
      const pass = (await waitFor(
        events,
        (e) => (e as PassResult).kind === "incremental" && (e as PassResult).clusters.length > 0,
      )) as PassResult;
      expect(pass.clusters.map((c) => [c.cluster, c.result])).to.deep.equal([["minimal", "applied"]]);
      const sts = readFileSync(join(tmp, "out/minimal/vc-minimal/statefulset.apps_minimal.yaml"), "utf8");
      expect(sts).to.include("cpu: 250m");
    } finally {
      await loop.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
