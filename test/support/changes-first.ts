// "Changes before chores" as a user meets it: a reconciler's start-up pass over a generated fleet, a change to the
// cluster the pass reaches last made while the pass is at chunk `at` (a commit in a git checkout, or a file write in a
// plain folder, noticed by the folder watcher; or a commit pushed to a remote, announced by its webhook); the order
// of the `reconciled` events says when the change was applied. The pass is held at chunk `at` until the loop has
// been told, so the order never depends on timing.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fleetClusterName, generateFleet } from "../../bench/fleet.js";
import { silentLogger } from "../../src/model/log.js";
import { defaultEngine } from "../../src/pipeline/engine.js";
import type { ClusterRun, ClusterContext } from "../../src/reconciler/cluster.js";
import { ReconcileLoop } from "../../src/reconciler/loop.js";
import { inShard, type Shard } from "../../src/reconciler/shard.js";
import { FolderSource, GitSource, type Source, type WatchMode } from "../../src/reconciler/source.js";
import type { Target } from "../../src/sinks/types.js";
import { startGitServer, TestRepo } from "./git-server.js";

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

/** A folder source watched in the mode asked for at any fleet size, with a short debounce; it says when it told. */
class WatchedFolder extends FolderSource {
  told = 0;
  #waiters: Array<() => void> = [];
  constructor(
    root: string,
    readonly mode: WatchMode,
  ) {
    super(root);
  }
  override async watchMode(): Promise<WatchMode> {
    return this.mode;
  }
  override watch(onChange: (paths: string[]) => void): Promise<() => Promise<void>> {
    return super.watch(
      (paths) => {
        onChange(paths);
        this.told++;
        for (const w of this.#waiters.splice(0)) w();
      },
      50,
      this.mode,
    );
  }
  /** Resolves once the watcher has told the loop of a change (bounded: a watcher that never tells fails the test). */
  toldOnce(): Promise<void> {
    if (this.told > 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the ${this.mode} watcher told nothing within 30 s`)), 30_000);
      this.#waiters.push(() => (clearTimeout(timer), resolve()));
    });
  }
}

export interface ChangesFirstOptions {
  /**
   * How the change arrives: a folder watched as `git` (a commit in a checkout) or `top`/`files` (a file written in a
   * plain folder); `remote`, a commit pushed to a remote the reconciler mirrors, announced as its webhook does.
   */
  mode: WatchMode | "remote";
  /** The target and what the pass needs of it; `wrap` is applied to the target the pass uses. */
  context: Omit<ClusterContext, "target" | "engine"> & { target: Target };
  clusters?: number;
  chunkSize?: number;
  /** The chunk of the pass during which the change is made (default 1). */
  at?: number;
  shard?: Shard;
  meshPerCluster?: number;
  /**
   * Which cluster changes: the last of the pass (default); `ahead`, the first of the chunk after `at`, which the pass
   * has already loaded (at the content before the change) when the change is made; `same`, the third of chunk `at`,
   * loaded and not yet run.
   */
  which?: "last" | "ahead" | "same";
  /**
   * Called before each status write or update of the run (inside a cluster's job: the cluster is in hand) with
   * `change`, which makes the change and resolves once the loop has been told: when given, it decides when the change
   * lands, instead of the start of chunk `at`.
   */
  during?: (cluster: string, chunks: string[][], change: () => Promise<void>) => Promise<void>;
}

export interface ChangesFirstRun {
  /** Every `reconciled` event, in order. */
  events: Array<Pick<ClusterRun, "cluster" | "revision" | "result">>;
  /** The full pass's chunks, as the pass goes through them (the shard's clusters in name order). */
  chunks: string[][];
  /** The cluster changed: the last of the pass. */
  changed: string;
  /** The revision of the change (a commit SHA in git mode, `local` in a plain folder). */
  revision: string;
  /** The CPU request the change sets. */
  cpu: string;
  /** Passes the loop ran, by kind, in order. */
  passes: string[];
}

/** Runs the scenario; the fleet's folder is removed afterwards. */
export async function changesFirst(opts: ChangesFirstOptions): Promise<ChangesFirstRun> {
  const tmp = mkdtempSync(join(tmpdir(), "vc-changes-first-"));
  const remote = opts.mode === "remote" ? new TestRepo() : undefined;
  const server = remote ? await startGitServer(remote.root) : undefined;
  const repo = remote ? remote.work : join(tmp, "repo");
  const clusters = opts.clusters ?? 9;
  const size = opts.chunkSize ?? 2;
  const at = opts.at ?? 1;
  try {
    await generateFleet(repo, { clusters, meshPerCluster: opts.meshPerCluster ?? 1 });
    if (remote) remote.commit("fleet");
    else if (opts.mode === "git") {
      git(repo, "init", "-q", "-b", "main");
      git(repo, "add", ".");
      git(repo, "commit", "-qm", "fleet");
    }
    const names = Array.from({ length: clusters }, (_, i) => fleetClusterName(i))
      .filter((n) => inShard(n, opts.shard))
      .sort();
    const chunks: string[][] = [];
    for (let i = 0; i < names.length; i += size) chunks.push(names.slice(i, i + size));
    if (at + 1 >= chunks.length) throw new Error(`the change must come before the last chunk: ${chunks.length} chunks`);
    const changed =
      opts.which === "ahead" ? chunks[at + 1]![0]! : opts.which === "same" ? chunks[at]![2]! : names.at(-1)!;
    const cpu = "777m";
    let revision = "local";
    const watched = opts.mode === "remote" ? undefined : new WatchedFolder(repo, opts.mode);
    const source: Source =
      watched ?? new GitSource({ url: `${server!.url}/${remote!.path}`, dir: join(tmp, "mirror") });
    let made = false;
    let loop: ReconcileLoop | undefined;
    const change = async (): Promise<void> => {
      made = true;
      const file = join(repo, "clusters", changed, "values.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replace(/cpu: \d+m/, `cpu: ${cpu}`));
      if (remote) {
        revision = remote.commit(`${changed}: more CPU`);
        loop!.trigger({ kind: "incremental" }); // what the webhook's push does (service.ts)
      } else if (opts.mode === "git") {
        git(repo, "commit", "-qam", `${changed}: more CPU`);
        revision = git(repo, "rev-parse", "HEAD");
      }
      await watched?.toldOnce();
    };
    // The pass reads the live objects of chunk `at` just before it reconciles them: the change lands then, and the pass
    // goes on once the watcher has told the loop.
    const inner = opts.context.target;
    const target = new Proxy(inner, {
      get(t, p) {
        if (p === "listInventories")
          return async (batch: string[]) => {
            if (!made && !opts.during && batch.join() === chunks[at]!.join()) await change();
            return t.listInventories(batch);
          };
        const v = Reflect.get(t, p, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const store = opts.context.store;
    const watchedStore = new Proxy(store, {
      get(t, p) {
        if (p === "write" && opts.during)
          return async (...a: Parameters<typeof store.write>) => {
            await opts.during!(a[0].cluster, chunks, change);
            return t.write(...a);
          };
        if (p === "update" && opts.during)
          return async (...a: Parameters<typeof store.update>) => {
            await opts.during!(a[0], chunks, change);
            return t.update(...a);
          };
        const v = Reflect.get(t, p, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const events: ChangesFirstRun["events"] = [];
    const passes: string[] = [];
    loop = new ReconcileLoop(
      {
        ...opts.context,
        target,
        store: watchedStore,
        engine: defaultEngine,
        source,
        logger: silentLogger,
        chunkSize: size,
        concurrency: 1,
        shard: opts.shard,
        onCluster: (r) => events.push({ cluster: r.cluster, revision: r.revision, result: r.result }),
      },
      {
        intervalMs: 3_600_000,
        resyncMs: 3_600_000,
        watch: watched !== undefined,
        onPass: (r) => passes.push("error" in r ? `error: ${r.error.message}` : r.kind),
      },
    );
    try {
      await loop.start();
      await loop.idle();
    } finally {
      await loop.stop();
    }
    if (!made) throw new Error(`the pass never read chunk ${at} (${chunks[at]!.join(", ")})`);
    return { events, chunks, changed, revision, cpu, passes };
  } finally {
    await server?.close();
    remote?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * What the scenario must show (as messages, empty when it holds): the changed cluster reconciled once, at the change's
 * revision, before any cluster of the chunk after `at`; every other cluster reconciled once by the pass.
 */
export function changesFirstProblems(run: ChangesFirstRun, at = 1): string[] {
  const problems: string[] = [];
  const order = run.events.map((e) => e.cluster);
  const mine = run.events.filter((e) => e.cluster === run.changed);
  if (mine.length !== 1) problems.push(`${run.changed} reconciled ${mine.length} times: ${order.join(", ")}`);
  else {
    if (mine[0]!.result !== "applied") problems.push(`${run.changed}: ${mine[0]!.result}`);
    if (mine[0]!.revision !== run.revision)
      problems.push(`${run.changed} reconciled at ${mine[0]!.revision}, the change is ${run.revision}`);
  }
  const next = order.indexOf(run.chunks[at + 1]!.find((n) => n !== run.changed)!);
  const first = order.indexOf(run.changed);
  if (next < 0 || first < 0 || first > next)
    problems.push(`${run.changed} was not reconciled before the chunk after ${at} began: ${order.join(", ")}`);
  for (const name of run.chunks.flat())
    if (order.filter((n) => n === name).length !== 1)
      problems.push(`${name} reconciled ${order.filter((n) => n === name).length} times`);
  return problems;
}
