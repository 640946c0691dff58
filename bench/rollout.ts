// Benchmark of progressive rollouts (issue #22 section 3) over a 1,000-cluster fleet with fleet/rollout.yaml:
// 1. the plan (`vc diff`) of a base change with every cluster pinned, against a full `vc render` of the fleet (target ≤ 2×);
// 2. one wave's bookkeeping: the reconciler's requests per rollout tick, counted at the API test server, for waves of
//    different sizes (target O(clusters in the wave)), and its writes to clusters outside the wave (target none).
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchContext } from "./run.js";
import { fleetClusterName, generateFleet } from "./fleet.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 3;
const RUNS = 3;
const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const baseValues = (tag: string) => `controlPlane:\n  statefulSet:\n    image:\n      tag: "${tag}"\n`;

/** The rollout of the bench: the canary, then 1 % of the fleet, then 11 %, then the rest. */
export const BENCH_WAVES = `waves:
  - name: canary
    selector:
      matchLabels:
        canary: "true"
  - name: one-percent
    percent: 1
  - name: eleven-percent
    percent: 11
  - name: rest
maxUnavailable: "100%"
healthGate:
  timeout: 1h
onFailure: halt
`;

/** The fleet: bench/fleet.ts's clusters with labels (the first one the canary, tiers by thirds), a base and the rollout. */
export async function generateRolloutFleet(root: string, clusters: number): Promise<void> {
  await generateFleet(root, { clusters, meshPerCluster: MESH });
  for (let i = 0; i < clusters; i++) {
    appendFileSync(join(root, "clusters", fleetClusterName(i), "cluster.yaml"), `labels:\n  tier: ${i % 3 === 0 ? "prod" : "dev"}\n${i === 0 ? '  canary: "true"\n' : ""}`);
  }
  mkdirSync(join(root, "fleet"), { recursive: true });
  writeFileSync(join(root, "fleet/values.yaml"), baseValues("1.0.0"));
  writeFileSync(join(root, "fleet/groups.yaml"), "groups:\n  prod:\n    matchLabels:\n      tier: prod\n");
  writeFileSync(join(root, "fleet/values.prod.yaml"), "controlPlane:\n  statefulSet:\n    resources:\n      limits:\n        cpu: 4000m\n");
  writeFileSync(join(root, "fleet/rollout.yaml"), BENCH_WAVES);
}

/** `vc <args>` in a process of its own, as a user or CI runs it; resolves with its exit code and how long it took. */
function vc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; ms: number; stdout: string; stderr: string }> {
  const start = process.hrtime.bigint();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("exit", (code) => done({ code: code ?? 2, ms: Number(process.hrtime.bigint() - start) / 1e6, stdout, stderr }));
  });
}

const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], { cwd, encoding: "utf8" }).trim();

export async function run(ctx: BenchContext): Promise<void> {
  const root = join(ctx.workDir, "rollout");
  await generateRolloutFleet(root, CLUSTERS);
  git(root, "init", "-q", "-b", "main");
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "fleet");
  await planVersusRender(ctx, root);
}

/** Part 1: `vc diff` of a base change over the pinned fleet against `vc render` of the fleet, both as processes. */
async function planVersusRender(ctx: BenchContext, root: string): Promise<void> {
  const { startKubeServer } = await import("../test/support/kube-server/index.js");
  const server = await startKubeServer();
  try {
    const kc = ["--target", "kube", "--kubeconfig", server.kubeconfigPath];
    const applied = await vc(["apply", root, ...kc, "--allow-mass-prune"]);
    if (applied.code !== 0) throw new Error(`vc apply: ${applied.code}\n${applied.stderr.slice(-2000)}`);
    writeFileSync(join(root, "fleet/values.yaml"), baseValues("1.1.0"));
    git(root, "commit", "-q", "-am", "base: 1.1.0");
    const renders: number[] = [];
    const plans: number[] = [];
    let planned = "";
    for (let i = 0; i < RUNS; i++) {
      const r = await vc(["render", root, "-o", "yaml"]);
      if (r.code !== 0) throw new Error(`vc render: ${r.code}\n${r.stderr.slice(-2000)}`);
      renders.push(r.ms);
      const p = await vc(["diff", root, ...kc, "--exit-code"]);
      if (p.code !== 1) throw new Error(`vc diff: expected exit 1 (changes), got ${p.code}\n${p.stderr.slice(-2000)}`);
      plans.push(p.ms);
      planned = p.stdout.split("\n").find((l) => /^changes \d+ clusters/.test(l)) ?? p.stdout.split("\n")[0] ?? "";
    }
    const r = med(renders);
    const p = med(plans);
    ctx.report(`vc render of ${CLUSTERS} clusters (a process)`, r, "ms", `median of ${RUNS}`);
    ctx.report("vc diff of a fleet/values.yaml change, every cluster pinned (a process, API test server)", p, "ms", `median of ${RUNS}; ${planned.slice(0, 100)}`);
    ctx.report("plan / render", p / r, "×", "target ≤ 2");
  } finally {
    await server.close();
  }
}
