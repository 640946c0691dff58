// Benchmark and proof: sharding on the real API server (issue #26, "past one replica"). A generated fleet of 3,000
// clusters (`--clusters=N`) over three `vc reconcile` replicas (--shard 0/3, 1/3, 2/3), each run as the Deployment runs
// it (deploy/reconciler/deployment.yaml: its NODE_OPTIONS, MALLOC_ARENA_MAX and memory limit) from the bundled CLI; a
// standby for one shard; that shard's leader killed (SIGKILL) a third into its pass; the standby takes the Lease over
// and finishes. Reports each replica's peak and steady RSS against the limit, each shard's first pass, the takeover,
// and the proof's checks (test/support/shards.ts): records, live objects, the audit log, a clean `vc diff`.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { load } from "js-yaml";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";
import { bundle } from "./reconcile.js";
import { shardOf } from "../src/reconciler/shard.js";
import { installExampleCrds, kubeAssets, startRealKube, type RealKube } from "../test/support/real-kube.js";
import { appliedClusters, checkShards, leaseHolder, startReplica, type Replica } from "../test/support/shards.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const SHARDS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const v = Number(arg ? arg.slice(name.length + 3) : fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} needs a positive integer`);
  return v;
}

export interface DeploymentRuntime {
  /** V8 flags from NODE_OPTIONS. */
  nodeFlags: string[];
  env: Record<string, string>;
  /** The container's memory limit in MiB. */
  limitMiB: number;
}

/**
 * The reconciler container's NODE_OPTIONS, MALLOC_ARENA_MAX and memory limit, read from
 * deploy/reconciler/deployment.yaml.
 */
export function deploymentRuntime(): DeploymentRuntime {
  type Container = {
    name: string;
    env?: Array<{ name: string; value?: string }>;
    resources?: { limits?: { memory?: string } };
  };
  const doc = load(readFileSync(join(ROOT, "deploy/reconciler/deployment.yaml"), "utf8")) as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  const c = doc.spec.template.spec.containers.find((x) => x.name === "reconciler")!;
  const env = Object.fromEntries((c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
  const m = /^(\d+)(Mi|Gi)$/.exec(c.resources?.limits?.memory ?? "");
  if (!m || !env.NODE_OPTIONS)
    throw new Error("deploy/reconciler/deployment.yaml: no NODE_OPTIONS or memory limit on the reconciler container");
  const { NODE_OPTIONS, ...rest } = env;
  return {
    nodeFlags: NODE_OPTIONS.split(/\s+/).filter(Boolean),
    env: rest,
    limitMiB: Number(m[1]) * (m[2] === "Gi" ? 1024 : 1),
  };
}

function rssMiB(pid: number | undefined): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

async function heapMiB(r: Replica): Promise<number> {
  const url = r.url();
  if (!url) return NaN;
  const text = await fetch(`${url}/metrics`).then(
    (res) => res.text(),
    () => "",
  );
  return Number(/^vc_reconciler_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? NaN) / 1048576;
}

export async function run(ctx: BenchContext): Promise<void> {
  const assets = kubeAssets();
  if (!assets) {
    ctx.report(
      "shards",
      "skipped",
      "",
      "set VC_KUBE_ASSETS to a folder with kube-apiserver and etcd (docs/testing.md)",
    );
    return;
  }
  const n = option("clusters", 3000);
  const runtime = deploymentRuntime();
  const base = join(ctx.workDir, `shards-${n}`);
  const repo = join(base, "fleet");
  rmSync(base, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  await generateFleet(repo, { clusters: n, meshPerCluster: 5 });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: repo,
      encoding: "utf8",
    }).trim();
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "fleet");
  const head = git("rev-parse", "HEAD");
  const names = Array.from({ length: n }, (_, i) => fleetClusterName(i));
  const shardNames = (s: number) => names.filter((c) => shardOf(c, SHARDS) === s);
  const victim = 0;
  const bundled = bundle();
  if (!bundled) throw new Error("cannot bundle the CLI (esbuild)");
  ctx.report(
    "fleet",
    `${n} clusters over ${SHARDS} shards (${[0, 1, 2].map((s) => shardNames(s).length).join(" / ")})`,
    "",
    `Deployment runtime: ${runtime.nodeFlags.join(" ")}, ${Object.entries(runtime.env)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")}, limit ${runtime.limitMiB} MiB`,
  );

  const users = ["shard-0", "shard-1", "shard-2", "standby"];
  // Two ClusterIPs per cluster: a /16 holds 65,534.
  const kube: RealKube = await startRealKube(assets, {
    users: users.map((name) => ({ name, groups: ["system:masters"] })),
    extraArgs: ["--service-cluster-ip-range=10.0.0.0/16"],
  });
  const replicas: Replica[] = [];
  try {
    await installExampleCrds(kube);
    const ns = await kube.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "vc-system", labels: { "vc.orch.io/platform-namespace": "true" } },
    });
    if (ns.status !== 201) throw new Error(`cannot create vc-system: ${ns.status}`);
    const start = (user: string, shard: number) => {
      const r = startReplica({
        cli: [...runtime.nodeFlags, bundled],
        cwd: base,
        repo,
        kubeconfig: kube.kubeconfigFor(user),
        identity: user,
        shard: `${shard}/${SHARDS}`,
        cacheDir: join(base, `cache-${user}`),
        env: runtime.env,
        extraArgs: ["--listen", "127.0.0.1:0"],
      });
      replicas.push(r);
      return r;
    };
    const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 1000) => {
      const end = Date.now() + timeoutMs;
      while (!(await check())) {
        for (const r of replicas)
          if (!r.alive() && r.identity !== `shard-${victim}`)
            throw new Error(`replica ${r.identity} exited: ${r.log()}`);
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(everyMs);
      }
    };

    const t0 = Date.now();
    const leaders = [0, 1, 2].map((s) => start(`shard-${s}`, s));
    const dying = leaders[victim]!;
    await until(
      `shard ${victim}'s leader to take its Lease`,
      async () => (await leaseHolder(kube, victim, SHARDS)) === dying.identity,
      300_000,
      200,
    );
    const _standby = start("standby", victim);

    const victimSize = shardNames(victim).length;
    await until(
      `shard ${victim}'s leader a third into its pass`,
      () => dying.reconciled() >= Math.ceil(victimSize / 3),
      3_600_000,
      100,
    );
    const tKill = Date.now();
    await dying.kill();
    const atKill = await appliedClusters(kube, head);
    const victimDoneAtKill = shardNames(victim).filter((c) => atKill.has(c)).length;
    ctx.report(
      `shard ${victim}'s leader killed (SIGKILL) mid-pass`,
      (tKill - t0) / 1000,
      "s",
      `${victimDoneAtKill} of ${victimSize} clusters of its shard recorded`,
    );

    await until(
      "the standby to take the Lease over",
      async () => (await leaseHolder(kube, victim, SHARDS)) === "standby",
      300_000,
      200,
    );
    const tTakeover = Date.now();
    ctx.report("standby took the Lease over", (tTakeover - tKill) / 1000, "s", "after the kill (lease 15 s)");

    const doneAt = new Map<number, number>();
    await until(
      "every cluster applied",
      async () => {
        const done = await appliedClusters(kube, head);
        for (const s of [0, 1, 2])
          if (!doneAt.has(s) && shardNames(s).every((c) => done.has(c))) doneAt.set(s, Date.now());
        return done.size === n;
      },
      7_200_000,
      5000,
    );
    for (const s of [0, 1, 2]) {
      ctx.report(
        `shard ${s}/${SHARDS} first pass (start to every cluster recorded)`,
        (doneAt.get(s)! - t0) / 1000,
        "s",
        s === victim
          ? `killed at ${((tKill - t0) / 1000).toFixed(0)} s, finished by the standby ` +
              `${((doneAt.get(s)! - tTakeover) / 1000).toFixed(0)} s after taking over`
          : `${shardNames(s).length} clusters`,
      );
    }

    // Steady memory once the passes are over: five samples a second apart.
    await sleep(5000);
    const live = replicas.filter((r) => r.alive());
    const steady = new Map(live.map((r) => [r.identity, [] as number[]]));
    for (let i = 0; i < 5; i++) {
      for (const r of live) steady.get(r.identity)!.push(rssMiB(r.child.pid));
      await sleep(1000);
    }
    for (const r of replicas) {
      const s = steady.get(r.identity);
      const med = s ? [...s].sort((a, b) => a - b)[2]! : NaN;
      const heap = r.alive() ? await heapMiB(r) : NaN;
      ctx.report(
        `replica ${r.identity} (shard ${r.shard}) peak RSS`,
        r.peakRssMiB(),
        "MiB",
        `limit ${runtime.limitMiB} MiB; ` +
          `${r.alive() ? `steady RSS ${med.toFixed(0)} MiB, heap in use ${heap.toFixed(0)} MiB` : "killed"}`,
      );
    }

    const found = await checkShards(kube, {
      clusters: names,
      shardCount: SHARDS,
      revision: head,
      shardOfUser: new Map([
        ["shard-0", 0],
        ["shard-1", 1],
        ["shard-2", 2],
        ["standby", victim],
      ]),
      killed: { user: dying.identity, at: new Date(tKill) },
    });
    ctx.report(
      "records",
      n - found.notApplied.length,
      "clusters applied",
      `${found.twoRecords.length} with two records; owners: ${found.owners.length}`,
    );
    ctx.report("objects recorded / missing on the server", `${found.objects} / ${found.missing.length}`);
    ctx.report(
      "audit: objects created twice / never created",
      `${found.createdTwice.length} / ${found.neverCreated.length}`,
      "",
      `${found.cutByKill.length} created by a write the kill cut (audited 500)`,
    );
    ctx.report("audit: writes answered 409", found.conflicts, "", "leases apart");
    ctx.report("audit: writes across shards", found.crossShard.length);
    ctx.report(
      "audit: writes per replica",
      Object.entries(found.writesBy)
        .map(([u, c]) => `${u} ${c}`)
        .join(", "),
    );

    // Nothing left to apply: a no-op diff of the whole fleet, as its own process. One LIST of 6,000 objects of a kind
    // on a loaded two-core server has taken longer than the default 30 s budget: give it five minutes.
    const t1 = Date.now();
    const diff = spawn(
      process.execPath,
      [
        bundled,
        "diff",
        repo,
        "--target",
        "kube",
        "--kubeconfig",
        kube.kubeconfigPath,
        "--exit-code",
        "--request-timeout",
        "5m",
      ],
      { cwd: base, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
    );
    let err = "";
    diff.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    const code = await new Promise<number | null>((r) => diff.once("exit", r));
    ctx.report(
      "vc diff --exit-code of the whole fleet afterwards",
      code === 0 ? "no drift" : `exit ${code}: ${err}`,
      "",
      `${((Date.now() - t1) / 1000).toFixed(0)} s`,
    );

    const failed =
      [
        found.notApplied,
        found.twoRecords,
        found.missing,
        found.createdTwice,
        found.neverCreated,
        found.crossShard,
      ].some((x) => x.length > 0) ||
      found.conflicts > 0 ||
      found.owners.length !== 1 ||
      code !== 0;
    ctx.report("sharding proof", failed ? "FAILED" : "holds");
    if (failed) process.exitCode = 1;
  } finally {
    for (const r of replicas) await r.stop();
    await kube.stop();
  }
}
