// Benchmark: `vc validate` against bare js-yaml `loadAll` of the same files, on one and two threads and with a warm
// cache, over a generated flow-style fleet (1,000 clusters x 20 mesh documents) and the public YAML corpus
// (VC_BENCH_CORPUS).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadAll } from "js-yaml";
import { parseYaml } from "../src/repo/yaml.js";
import { loadAndValidate } from "../src/validate/index.js";
import type { BenchContext } from "./run.js";
import { fleetYamlFiles, generateFleet } from "./fleet.js";

const CLUSTERS = Number(process.env.VC_BENCH_CLUSTERS ?? 1000);
const MESH = 20;
const RUNS = Number(process.env.VC_BENCH_RUNS ?? 5);
const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** kubeconform's published figure: about 7,500 documents/s on 4 cores. */
const KUBECONFORM_DOCS_PER_S_4_CORES = 7500;

export async function run(ctx: BenchContext): Promise<void> {
  ctx.report(
    "machine load (1, 5, 15 min) at start",
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
  );
  // `vc validate` as shipped: the bundle (bin/vc.js falls back to the sources through tsx when it is stale).
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "inherit" });

  const flow = join(ctx.workDir, "validate-flow");
  await generateFleet(flow, { clusters: CLUSTERS, meshPerCluster: MESH, style: "flow" });
  await measure(ctx, `flow-style fleet (${CLUSTERS} clusters x ${MESH} mesh documents)`, flow, true);

  const corpus = process.env.VC_BENCH_CORPUS;
  if (!corpus || !existsSync(corpus)) {
    ctx.report(
      "public corpus",
      "not measured",
      "",
      "set VC_BENCH_CORPUS=/path/to/public-yaml.tar.xz (or its unpacked folder) to include it",
    );
  } else {
    const root = join(ctx.workDir, "validate-corpus");
    const n = wrapCorpus(corpus, root, join(ctx.workDir, "corpus-src"));
    await measure(
      ctx,
      `public corpus (${n} files wrapped as mesh files of ${Math.ceil(n / MESH)} clusters)`,
      root,
      false,
    );
  }

  await limits(ctx);
  ctx.report(
    "machine load (1, 5, 15 min) at end",
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
  );
}

/**
 * The figures of one repository: in-process ratio against bare parsing, then the CLI on 1 and 2 threads, cold and warm.
 */
async function measure(ctx: BenchContext, title: string, root: string, expectValid: boolean): Promise<void> {
  process.stdout.write(`  -- ${title}\n`);
  const files = fleetYamlFiles(root);
  let documents = 0;
  const bare = (): void => {
    documents = 0;
    for (const f of files) {
      try {
        documents += loadAll(readFileSync(f, "utf8")).length;
      } catch {
        // js-yaml refuses a few public files (syntax errors, duplicate keys): vc reports them.
      }
    }
  };
  const own = (): void => {
    for (const f of files) parseYaml(readFileSync(f, "utf8"));
  };
  let diagnostics = 0;
  const validate = async (): Promise<void> => {
    diagnostics = (await loadAndValidate(root, { jobs: 1, detail: "summary" })).diagnostics.length;
  };
  // Warm the JIT, the compiled schemas and the page cache, then alternate so noise hits each alike.
  bare();
  own();
  await validate();
  const bareTimes: number[] = [];
  const ownTimes: number[] = [];
  const validateTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bareTimes.push(await ctx.median(1, bare));
    ownTimes.push(await ctx.median(1, own));
    validateTimes.push(await ctx.median(1, validate));
  }
  const bareMs = med(bareTimes);
  const validateMs = med(validateTimes);
  ctx.report(
    "files, documents",
    `${files.length} files, ${documents} documents`,
    "",
    expectValid
      ? `diagnostics ${diagnostics} (expected 0)`
      : `${diagnostics} diagnostics (documents of other kinds under mesh/, located)`,
  );
  ctx.report("bare js-yaml (read + loadAll), one thread", bareMs, "ms", `median of ${RUNS}`);
  ctx.report(
    "vc loader (read + parseYaml with its limits), one thread",
    med(ownTimes),
    "ms",
    `${(med(ownTimes) / bareMs).toFixed(2)}x bare`,
  );
  ctx.report(
    "vc validate in process, one thread, no cache",
    validateMs,
    "ms",
    `${(validateMs / bareMs).toFixed(2)}x bare; target <= 1.3x`,
  );

  // The command as a user runs it: a process per run (start-up included), on one core and on two. "One core" is
  // the process pinned to CPU 0 (taskset): its default --jobs is then 1, and the engine's own helper threads (GC,
  // compiler) share that core too, as they would on a one-core machine. --jobs 1 on every core is shown beside it.
  const pin = oneCore();
  // Every timed run starts with the files in the page cache: this machine's kernel pages out idle pages on its own
  // (DAMON), and a run that reads part of the fleet from disk measures the disk.
  const warmFiles = (): void => {
    for (const f of files) readFileSync(f);
  };
  const cli = (args: string[], cores: "one" | "all" = "all"): number => {
    warmFiles();
    const start = process.hrtime.bigint();
    const argv = [process.execPath, join(ROOT, "bin", "vc.js"), "validate", root, ...args];
    const [cmd, ...rest] = cores === "one" && pin ? [...pin, ...argv] : argv;
    const r = spawnSync(cmd!, rest, { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
    if (r.status !== 0 && r.status !== 1) throw new Error(`vc validate failed (${r.status}): ${r.stderr}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  // The same for bare js-yaml: a fresh process reading and parsing every file (start-up and cold JIT alike), on one
  // core.
  const bareScript = join(root, "..", "bare-loadall.mjs");
  writeFileSync(
    bareScript,
    BARE_SCRIPT.replace(
      "JS_YAML",
      JSON.stringify(new URL("../node_modules/js-yaml/dist/js-yaml.mjs", import.meta.url).href),
    ),
  );
  const bareProcess = (): number => {
    warmFiles();
    const start = process.hrtime.bigint();
    const argv = [process.execPath, bareScript, join(root, "clusters")];
    const [cmd, ...rest] = pin ? [...pin, ...argv] : argv;
    const r = spawnSync(cmd!, rest, { stdio: "ignore" });
    if (r.status !== 0) throw new Error("bare js-yaml process failed");
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  // The machine's own ceiling for two cores: bare js-yaml with the files split over two processes at once (every
  // other file each), each cold as a vc worker is.
  const bareSplit = async (): Promise<number> => {
    warmFiles();
    const start = process.hrtime.bigint();
    await Promise.all(
      [0, 1].map(
        (k) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, [bareScript, join(root, "clusters"), "2", String(k)], {
              stdio: "ignore",
            });
            child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error("bare js-yaml process failed"))));
          }),
      ),
    );
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const one: number[] = [];
  const two: number[] = [];
  const split: number[] = [];
  const jobsOne: number[] = [];
  const bareCold: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bareCold.push(bareProcess());
    split.push(await bareSplit());
    one.push(cli(pin ? [] : ["--jobs", "1"], "one"));
    two.push(cli([]));
    jobsOne.push(cli(["--jobs", "1"]));
  }
  const cache = join(ctx.workDir, "validate-cache");
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    rmSync(cache, { recursive: true, force: true });
    cold.push(cli(["--cache-dir", cache]));
    warm.push(cli(["--cache-dir", cache]));
  }
  const oneMs = med(one);
  const twoMs = med(two);
  const where = pin ? "one core (taskset -c 0)" : "--jobs 1 (taskset not found: not pinned)";
  ctx.report(
    `bare js-yaml in a fresh process (node + read + loadAll), ${where}`,
    med(bareCold),
    "ms",
    `median of ${RUNS}`,
  );
  ctx.report(
    `vc validate, ${where}`,
    oneMs,
    "ms",
    `median of ${RUNS}; ${(oneMs / med(bareCold)).toFixed(2)}x bare in a fresh process; target <= 1.3x`,
  );
  ctx.report(
    "bare js-yaml, the files split over 2 processes at once, every core",
    med(split),
    "ms",
    `${(med(bareCold) / med(split)).toFixed(2)}x faster than one process on one core: the machine's ceiling for ` +
      `two cores`,
  );
  ctx.report(
    `vc validate, ${availableParallelism()} cores (default --jobs ${availableParallelism()})`,
    twoMs,
    "ms",
    `speed-up ${(oneMs / twoMs).toFixed(2)}x over one core; target >= 1.7x with 2 cores`,
  );
  ctx.report(
    "vc validate --jobs 1, every core (engine threads on the other core)",
    med(jobsOne),
    "ms",
    `${(med(jobsOne) / twoMs).toFixed(2)}x the time of every core`,
  );
  ctx.report("vc validate --cache-dir, cold (empty cache, every core)", med(cold), "ms", `median of ${RUNS}`);
  ctx.report(
    "vc validate --cache-dir, warm (nothing changed)",
    med(warm),
    "ms",
    `${(med(warm) / med(cold)).toFixed(2)}x cold; target <= 0.2x`,
  );
  ctx.report(
    "throughput, one core",
    Math.round(documents / (oneMs / 1000)),
    "documents/s",
    "command, start-up included",
  );
  ctx.report(
    `throughput, ${availableParallelism()} cores`,
    Math.round(documents / (twoMs / 1000)),
    "documents/s",
    `kubeconform publishes ~${KUBECONFORM_DOCS_PER_S_4_CORES} on 4 cores`,
  );
}

/** The command prefix that runs a program on CPU 0 only, or undefined where taskset is missing. */
function oneCore(): string[] | undefined {
  const r = spawnSync("taskset", ["-c", "0", "true"], { stdio: "ignore" });
  return r.status === 0 ? ["taskset", "-c", "0"] : undefined;
}

/** Hostile inputs: refused or bounded, in milliseconds. */
async function limits(ctx: BenchContext): Promise<void> {
  process.stdout.write("  -- limits\n");
  const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 9; i++)
    levels.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(", ")}]`,
    );
  const bomb = levels.join("\n");
  ctx.report(
    `alias bomb (9^9 nodes, ${bomb.length} bytes) refused in`,
    await ctx.median(RUNS, () => mustFail(bomb)),
    "ms",
  );
  const small = (i: number): string =>
    `kind: VirtualService\nmetadata: {name: v${i}}\nspec:\n  a: &a [${Array(20).fill("x")}]\n  b: &b ` +
    `[${Array(20).fill("*a")}]\n  c: [${Array(17).fill("*b")}]\n`;
  const many = Array.from({ length: 3600 }, (_, i) => small(i)).join("---\n");
  ctx.report(
    `${many.length} bytes of 3,600 small alias bombs (~7,600 nodes each) refused in`,
    await ctx.median(RUNS, () => mustFail(many)),
    "ms",
  );
  const repo = join(ctx.workDir, "validate-45k");
  mkdirSync(join(repo, "clusters", "big"), { recursive: true });
  writeFileSync(
    join(repo, "clusters", "big", "values.yaml"),
    `${Array.from({ length: 45_000 }, (_, i) => `unknownKey${i}: ${i}`).join("\n")}\n`,
  );
  let shown = 0;
  const ms = await ctx.median(
    RUNS,
    async () => void (shown = (await loadAndValidate(repo, { jobs: 1 })).diagnostics.length),
  );
  ctx.report(
    "values file with 45,000 unknown keys validated in",
    ms,
    "ms",
    `${shown} diagnostics shown (the first 100, then how many more)`,
  );
}

function mustFail(text: string): void {
  if (parseYaml(text).ok) throw new Error("hostile YAML accepted");
}

/**
 * Copies every YAML file of the corpus into cluster folders of MESH files each (`mesh/<path with __>.yaml`); returns
 * the file count.
 */
function wrapCorpus(corpus: string, root: string, scratch: string): number {
  let src = corpus;
  if (statSync(corpus).isFile()) {
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    execFileSync("tar", ["-xJf", corpus, "-C", scratch]);
    src = scratch;
  }
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) files.push(p);
    }
  };
  walk(src);
  files.sort();
  rmSync(join(root, "clusters"), { recursive: true, force: true });
  files.forEach((f, i) => {
    const cluster = join(root, "clusters", `corpus-${String(Math.floor(i / MESH)).padStart(4, "0")}`);
    if (i % MESH === 0) {
      mkdirSync(join(cluster, "mesh"), { recursive: true });
      writeFileSync(join(cluster, "values.yaml"), "integrations:\n  mesh:\n    enabled: true\n");
    }
    copyFileSync(
      f,
      join(
        cluster,
        "mesh",
        `${relative(src, f)
          .replaceAll("/", "__")
          .replace(/\.yml$/, ".yaml")}`,
      ),
    );
  });
  return files.length;
}

/** Reads and parses every YAML file under a folder with js-yaml, nothing else. */
const BARE_SCRIPT = `import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
const { loadAll } = await import(JS_YAML);
const [, , dir, n = "1", k = "0"] = process.argv;
const files = [];
const walk = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\\.ya?ml$/.test(e.name)) files.push(p);
  }
};
walk(dir);
files.forEach((p, i) => {
  if (i % Number(n) !== Number(k)) return;
  try { loadAll(readFileSync(p, "utf8")); } catch {}
});
`;

function med(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}
