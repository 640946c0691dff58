// `vc reconcile`: follows a repository (remote git or local folder) and keeps a target in step with it; --once for one
// pass.
import { escapeControls } from "../model/escape.js";
import { existsSync } from "node:fs";
import { Option, type Command } from "commander";
import { describeRef } from "../kube/object.js";
import { formatPlanReport, useColour } from "../plan/format.js";
import { findRepoRoot } from "../repo/layout.js";
import type { ClusterRun } from "../reconciler/cluster.js";
import { jsonLogger, silentLogger } from "../model/log.js";
import type { PassResult } from "../reconciler/pass.js";
import { reconcileOnce, SHUTDOWN_DEADLINE_MS, startReconciler, type ReconcilerConfig } from "../reconciler/service.js";
import { parseShard } from "../reconciler/shard.js";
import { isRemote } from "../reconciler/source.js";
import { GitRemoteError } from "../git/mirror.js";
import { fleetLocation } from "../git/origin.js";
import { chooseOwner, OWNER_ENV, OwnerError } from "../model/owner.js";
import { TargetSpecError } from "../sinks/index.js";
import { DEFAULT_TARGET } from "../sinks/types.js";
import { setRequestBudget } from "../host/budget.js";
import { action, EXIT, formatData, parseDuration, parseOutputFormat, UserError } from "./common.js";
import { HISTORY_LIMIT_OPTION, parseHistoryLimit } from "./apply.js";
import { DEFAULT_WEBHOOK_LIMITS, type WebhookLimits } from "../reconciler/webhook-slots.js";

interface ReconcileFlags {
  repo: string;
  branch: string;
  target: string;
  once?: boolean;
  interval: string;
  resync: string;
  listen?: string;
  webhookSecretFile?: string;
  webhookHeaderTimeout: string;
  webhookBodyTimeout: string;
  webhookMinRate: string;
  webhookSlots: string;
  webhookSlotsPerAddress: string;
  leaderElect?: boolean;
  leaseNamespace?: string;
  identity?: string;
  shard?: string;
  kubeconfig?: string;
  context?: string;
  gitCredentials?: string;
  cacheDir?: string;
  allowMassPrune?: boolean;
  owner?: string;
  concurrency: string;
  historyLimit: string;
  output: string;
  diff?: boolean;
}

export function register(program: Command): void {
  program
    .command("reconcile")
    .summary("follow a repository and keep the target in step with it")
    .description(
      "follow a repository and keep the target in step: incremental by changed paths, full resync at an interval, " +
        "invalid clusters never applied",
    )
    .option("--repo <url|path>", "remote git repository (http/https) or local folder", ".")
    .option("--branch <name>", "branch or tag of a remote repository", "main")
    .option(
      "--target <target>",
      "kube (the host of the kubeconfig context) or dir:PATH (hydrated manifests)",
      DEFAULT_TARGET,
    )
    .option("--once", "one full pass, print the plans and results, then exit (1 when a cluster is invalid or failed)")
    .option("--interval <duration>", "poll interval of a remote repository (jittered by 10%)", "1m")
    .option("--resync <duration>", "interval of full resyncs that correct drift on the host", "10m")
    .option(
      "--listen <addr>",
      "serve /healthz, /readyz, /metrics, the webhook (POST /webhook) and the fleet page (/, /api/v1; a bearer " +
        "token the host reviews) on [HOST]:PORT, e.g. :8080",
    )
    .option(
      "--webhook-secret-file <file>",
      "secret of GitHub push webhooks (X-Hub-Signature-256); else $VC_WEBHOOK_SECRET",
    )
    .option("--webhook-header-timeout <duration>", "time a webhook sender has for its request line and headers", "10s")
    .option(
      "--webhook-body-timeout <duration>",
      "time a webhook body has from its headers to its last byte (408 after)",
      "10s",
    )
    .option(
      "--webhook-min-rate <bytes/s>",
      "average rate a webhook body must keep after its first second (408 below)",
      "1024",
    )
    .option(
      "--webhook-slots <n>",
      "webhook bodies read at once (503 with Retry-After beyond)",
      String(DEFAULT_WEBHOOK_LIMITS.maxPending),
    )
    .option(
      "--webhook-slots-per-address <n>",
      "webhook bodies one source address (an IPv6 /64) may have read at once",
      String(DEFAULT_WEBHOOK_LIMITS.perAddress),
    )
    .option("--leader-elect", "elect one writing replica through a coordination.k8s.io Lease")
    .option("--lease-namespace <ns>", "namespace of the Lease (default $POD_NAMESPACE or vc-system)")
    .option("--identity <id>", "this replica's identity in the Lease (default $POD_NAME or the host name)")
    .option("--shard <i/n>", "reconcile only the clusters whose name hashes to shard i of n (0-based)")
    .option(
      "--kubeconfig <file>",
      "kubeconfig file (default $KUBECONFIG, ~/.kube/config or the in-cluster service account)",
    )
    .option("--context <name>", "kubeconfig context")
    .option(
      "--git-credentials <file>",
      "token or user:password for the remote; else $VC_GIT_TOKEN or $VC_GIT_USERNAME/$VC_GIT_PASSWORD (never printed)",
    )
    .option(
      "--cache-dir <dir>",
      "where remote repositories are cloned; default $XDG_CACHE_HOME/vc/git or ~/.cache/vc/git, outside the checkout",
    )
    .option(
      "--allow-mass-prune",
      "let prune delete more than half (or all) of a cluster's objects, e.g. for a removed cluster folder",
    )
    .option(
      "--owner <name>",
      `the owner name this source records on every object and status (default $${OWNER_ENV}, else derived from the ` +
        `repository's URL and the folder of clusters/); clusters another owner holds are left alone`,
    )
    .option("--concurrency <n>", "clusters reconciled at once", "4")
    .option(...HISTORY_LIMIT_OPTION)
    .option("--diff", "with --once: print each change's unified diff (secrets masked), not one line per object")
    .addOption(
      new Option("-o, --output <format>", "output of --once").choices(["text", "json", "yaml"]).default("text"),
    )
    .addHelpText(
      "after",
      "\nExamples:\n  vc reconcile --once --target dir:out\n  vc reconcile --repo https://github.com/org/fleet.git " +
        "--target kube --listen :8080 --leader-elect\n" +
        "\nExit status with --once: 0 all clusters applied (or suspended), 1 a cluster is invalid or failed, 2 " +
        "runtime failure.",
    )
    .action(action(async (flags: ReconcileFlags) => runReconcile(flags)));
}

function positiveInteger(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new UserError(`invalid ${flag} "${text}": use a positive integer`);
  return n;
}

function webhookLimits(flags: ReconcileFlags): WebhookLimits {
  const limits: WebhookLimits = {
    headersTimeoutMs: parseDuration(flags.webhookHeaderTimeout),
    bodyTimeoutMs: parseDuration(flags.webhookBodyTimeout),
    minBytesPerSecond: positiveInteger("--webhook-min-rate", flags.webhookMinRate),
    maxPending: positiveInteger("--webhook-slots", flags.webhookSlots),
    perAddress: positiveInteger("--webhook-slots-per-address", flags.webhookSlotsPerAddress),
    rateGraceMs: 0,
  };
  if (limits.headersTimeoutMs < 1 || limits.bodyTimeoutMs < 1)
    throw new UserError("--webhook-header-timeout and --webhook-body-timeout must be longer than 0");
  limits.rateGraceMs = Math.min(DEFAULT_WEBHOOK_LIMITS.rateGraceMs, limits.bodyTimeoutMs);
  return limits;
}

function toConfig(flags: ReconcileFlags): ReconcilerConfig {
  let repo = flags.repo;
  if (!isRemote(repo)) {
    if (!existsSync(repo)) throw new UserError(`repository folder ${repo} does not exist`);
    const found = findRepoRoot(repo);
    if (!found)
      throw new UserError(
        `no clusters/ folder at or above ${repo}: pass --repo with a repository holding clusters/<name>/`,
      );
    repo = found.root;
  }
  const concurrency = Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new UserError(`invalid --concurrency "${flags.concurrency}": use a positive integer`);
  let shard;
  try {
    shard = flags.shard ? parseShard(flags.shard) : undefined;
  } catch (err) {
    throw new UserError((err as Error).message);
  }
  return {
    repo,
    branch: flags.branch,
    target: flags.target,
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    gitCredentialsFile: flags.gitCredentials,
    cacheDir: flags.cacheDir,
    intervalMs: parseDuration(flags.interval),
    resyncMs: parseDuration(flags.resync),
    listen: flags.listen,
    webhookSecretFile: flags.webhookSecretFile,
    webhookLimits: webhookLimits(flags),
    leaderElect: !!flags.leaderElect,
    leaseNamespace: flags.leaseNamespace,
    identity: flags.identity,
    shard,
    allowMassPrune: !!flags.allowMassPrune,
    historyLimit: parseHistoryLimit(flags.historyLimit),
    concurrency,
  };
}

async function runReconcile(flags: ReconcileFlags): Promise<number> {
  const format = parseOutputFormat(flags.output, ["text", "json", "yaml"] as const);
  const cfg = toConfig(flags);
  try {
    cfg.owner = chooseOwner(
      flags.owner,
      isRemote(cfg.repo) ? { repo: cfg.repo, subdir: "" } : await fleetLocation(cfg.repo),
    );
  } catch (err) {
    if (err instanceof OwnerError) throw new UserError(err.message);
    throw err;
  }
  if (flags.once) {
    const colour = useColour(process.stdout);
    cfg.logger = silentLogger;
    // Streamed chunk by chunk, in cluster order (the same repository gives the same output); the pass keeps
    // summaries, not plans: text is printed as each chunk ends, data keeps each cluster's changed references.
    const entries: ClusterEntry[] = [];
    cfg.onChunk = (runs) => {
      if (format === "text") process.stdout.write(runs.map((run) => formatRun(run, colour, !!flags.diff)).join(""));
      else entries.push(...runs.map(clusterEntry));
    };
    cfg.serverWarnings = "process"; // printed on stderr like any vc command's; the pass's own log stays silent
    let res: PassResult;
    try {
      res = await reconcileOnce(cfg);
    } catch (err) {
      throw asUserError(err);
    }
    if (format === "text") process.stdout.write(formatSummary(res));
    else
      process.stdout.write(
        formatData(
          {
            revision: res.revision,
            durationMs: res.durationMs,
            clusters: entries.sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0)),
          },
          format,
        ),
      );
    return res.problems > 0 ? EXIT.invalid : EXIT.ok;
  }
  cfg.logger = jsonLogger();
  // A long-running reconciler outlives API server restarts: a refused connection is retried (within the request
  // budget).
  setRequestBudget({ retryRefused: true });
  let r;
  try {
    r = await startReconciler(cfg);
  } catch (err) {
    throw asUserError(err);
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      // The clusters in hand finish and record their status; no other starts. Past the deadline (within the pod's
      // terminationGracePeriodSeconds) the process exits anyway, before the kubelet's SIGKILL.
      cfg.logger!.info("shutting down: finishing the clusters in hand", { deadlineMs: SHUTDOWN_DEADLINE_MS });
      setTimeout(() => {
        cfg.logger!.warn("shutdown deadline passed: exiting with clusters in hand (the next start reconciles them)");
        process.exit(EXIT.failure);
      }, SHUTDOWN_DEADLINE_MS).unref();
      void r.close().then(() => {
        cfg.logger!.info("stopped");
        resolve();
      });
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  return EXIT.ok;
}

function asUserError(err: unknown): unknown {
  if (err instanceof GitRemoteError || err instanceof TargetSpecError) return new UserError(err.message);
  return err;
}

const SIGN = { create: "+", update: "~", delete: "-", unchanged: "=" } as const;

/** One cluster of a --once run: its plan (when something changes) and a result line. */
export function formatRun(run: ClusterRun, colour = false, diffs = false): string {
  let out = "";
  const plan = run.sync?.plan;
  if (plan && diffs && plan.changes.some((c) => c.action !== "unchanged")) {
    out += formatPlanReport({ plans: [plan], errors: [] }, "text", { colour });
  } else if (plan) {
    for (const c of plan.changes)
      if (c.action !== "unchanged") out += `  ${SIGN[c.action]} ${c.action} ${escapeControls(describeRef(c.ref))}\n`;
    if (plan.blocked) out += `  ${escapeControls(plan.blocked)}\n`;
  }
  const failed = run.sync?.results.filter((r) => r.outcome === "failed") ?? [];
  for (const f of failed) out += `  failed: ${escapeControls(`${describeRef(f.ref)}: ${f.message ?? ""}`)}\n`;
  out += `${escapeControls(`${run.cluster}: ${run.result} at ${run.revision.slice(0, 12)}: ${run.message}`)}\n`;
  return out;
}

export function formatSummary(res: PassResult): string {
  const by = new Map<string, number>();
  for (const c of res.clusters) by.set(c.result, (by.get(c.result) ?? 0) + 1);
  const parts = [...by].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${n} ${k}`);
  return (
    `\nreconciled ${res.clusters.length} cluster${res.clusters.length === 1 ? "" : "s"} at ` +
    `${res.revision.slice(0, 12)} in ${res.durationMs} ms: ${parts.join(", ") || "nothing to do"}\n`
  );
}

type ClusterEntry = ReturnType<typeof clusterEntry>;

/** One cluster of `--once -o json|yaml`: its result, counts and the references it changed (not its plan). */
function clusterEntry(c: ClusterRun) {
  return {
    cluster: c.cluster,
    hostNamespace: c.hostNamespace,
    result: c.result,
    message: c.message,
    counts: c.sync?.counts,
    changes: c.sync?.plan.changes
      .filter((x) => x.action !== "unchanged")
      .map((x) => ({
        action: x.action,
        apiVersion: x.ref.apiVersion,
        kind: x.ref.kind,
        namespace: x.ref.namespace,
        name: x.ref.name,
      })),
  };
}
