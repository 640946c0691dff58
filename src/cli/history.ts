// `vc history <cluster>`: the commits of clusters/<cluster>/ joined with what the reconciler applied, when, and how it
// ended.
import { relative, sep } from "node:path";
import { Option, type Command } from "commander";
import { existsSync } from "node:fs";
import { GitRemoteError } from "../git/mirror.js";
import { clusterFolderNames, findRepoRoot } from "../repo/layout.js";
import { maskUrlCredentials } from "../model/secrets.js";
import { CLUSTERS_DIR } from "../reconciler/affected.js";
import { shortRevision } from "../git/dirty.js";
import { clusterHistory, type ClusterHistory } from "../records/history.js";
import { actorOf } from "../records/status.js";
import { openSource } from "../reconciler/service.js";
import { FolderSource, isRemote } from "../reconciler/source.js";
import { openTarget } from "../sinks/index.js";
import { DEFAULT_TARGET } from "../sinks/types.js";
import { escapeControls } from "../model/escape.js";
import { action, formatColumns, formatData, parseOutputFormat, UnknownClusterError, UserError } from "./common.js";

interface HistoryFlags {
  repo: string;
  branch: string;
  target: string;
  kubeconfig?: string;
  context?: string;
  gitCredentials?: string;
  cacheDir?: string;
  limit: string;
  output: string;
}

export function register(program: Command): void {
  program
    .command("history")
    .summary("show a cluster's commits and what was applied from each")
    .description(
      "show the commits of a cluster's folder with what was applied from each: when, by whom (the reconciler, or " +
        "vc apply and its user) and the result",
    )
    .argument("<cluster>", "cluster name (folder clusters/<cluster>)")
    .option("--repo <url|path>", "remote git repository (http/https) or local folder", ".")
    .option("--branch <name>", "branch or tag of a remote repository", "main")
    .option("--target <target>", "where the status is kept: kube or dir:PATH", DEFAULT_TARGET)
    .option("--kubeconfig <file>", "kubeconfig file")
    .option("--context <name>", "kubeconfig context")
    .option("--git-credentials <file>", "token or user:password for the remote (never printed)")
    .option(
      "--cache-dir <dir>",
      "where remote repositories are cloned; default $XDG_CACHE_HOME/vc/git or ~/.cache/vc/git",
    )
    .option("--limit <n>", "at most this many commits", "20")
    .addOption(new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table"))
    .action(action(async (cluster: string, flags: HistoryFlags) => runHistory(cluster, flags)));
}

async function runHistory(cluster: string, flags: HistoryFlags): Promise<number> {
  const format = parseOutputFormat(flags.output, ["table", "json", "yaml"] as const);
  const limit = Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UserError(`invalid --limit "${flags.limit}": use a positive integer`);
  let repo = flags.repo;
  if (!isRemote(repo)) {
    const found = existsSync(repo) ? findRepoRoot(repo) : undefined;
    if (!found) throw new UserError(`no clusters/ folder at or above ${repo}: pass --repo with the fleet repository`);
    repo = found.root;
  }
  const source = openSource({
    repo,
    branch: flags.branch,
    gitCredentialsFile: flags.gitCredentials,
    cacheDir: flags.cacheDir,
  });
  let snap;
  try {
    snap = await source.sync();
  } catch (err) {
    throw new UserError(err instanceof GitRemoteError ? err.message : (err as Error).message);
  }
  const gitDir = source.gitDir;
  if (!gitDir)
    throw new UserError(`${repo} is not in a git repository: history needs the commits of clusters/${cluster}/`);
  const prefix = source instanceof FolderSource ? relative(gitDir, source.root).split(sep).join("/") : "";
  const path = `${prefix ? `${prefix}/` : ""}${CLUSTERS_DIR}/${cluster}`;

  let target;
  try {
    target = await openTarget(flags.target, { kubeconfig: flags.kubeconfig, context: flags.context });
  } catch (err) {
    throw new UserError((err as Error).message);
  }
  let status;
  try {
    const store = target.statusStore();
    status = (await store.list()).find((s) => s.cluster === cluster);
    // The status holds the newest reconciliations; the older ones are kept beside it.
    if (status) status = { ...status, history: await store.history(status) };
  } finally {
    await target.close();
  }
  const history = await clusterHistory(cluster, status, {
    dir: gitDir,
    path,
    ref: snap.revision === "local" ? "HEAD" : snap.revision,
    limit,
  });
  if (history.entries.length === 0 && !status) {
    throw new UnknownClusterError(
      [cluster],
      () => [
        `no commits touch ${path} in ${isRemote(flags.repo) ? maskUrlCredentials(flags.repo) : repo}`,
        `no status for it on ${target.description}`,
      ],
      isRemote(flags.repo) ? undefined : clusterFolderNames(repo),
    );
  }
  process.stdout.write(format === "table" ? formatHistory(history) : formatData(history, format));
  return 0;
}

export function formatHistory(h: ClusterHistory): string {
  const rows = [["COMMIT", "DATE", "AUTHOR", "SUBJECT", "RECONCILED"]];
  for (const e of h.entries) {
    const recs = e.reconciliations.map(
      (r) =>
        `${r.result} ${r.time} by ${actorOf(r)}${r.revision === e.commit ? "" : ` at ${shortRevision(r.revision)}`}`,
    );
    const state = [e.live ? "LIVE" : "", ...recs.slice(0, 1), recs.length > 1 ? `(+${recs.length - 1})` : ""]
      .filter(Boolean)
      .join(" ");
    rows.push([
      e.commit.slice(0, 12),
      e.time,
      e.author,
      e.subject.length > 60 ? `${e.subject.slice(0, 57)}...` : e.subject,
      state || "-",
    ]);
  }
  const cluster = escapeControls(h.cluster);
  const head = h.lastAppliedRevision
    ? `${cluster}: live revision ${escapeControls(shortRevision(h.lastAppliedRevision))}\n`
    : `${cluster}: never applied on this target\n`;
  return head + formatColumns(rows);
}
