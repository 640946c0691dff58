// `vc validate [PATH]`: checks every cluster folder of a repository and prints each problem as file:line:col.
import { existsSync } from "node:fs";
import { InvalidArgumentError, Option, type Command } from "commander";
import { formatDiagnostic, type Diagnostic } from "../model/diagnostic.js";
import { clusterFolderNames, findRepoRoot } from "../repo/layout.js";
import { emptyClustersNote, noClustersMessage } from "../repo/fleet-folder.js";
import { loadAndValidate, unknownClusters, type RepoValidation } from "../validate/index.js";
import { action, EXIT, formatData, UnknownClusterError, UserError } from "./common.js";

export type ReportFormat = "text" | "json" | "yaml" | "github";

export interface ValidateCommandOptions {
  format: ReportFormat;
  cluster: string[];
  /** Content-addressed cache of validated folders (CI keeps it between runs). */
  cacheDir?: string;
  /** Threads to validate on (default: every core). */
  jobs?: number;
}

export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

const FORMATS = ["text", "json", "yaml", "github"];

export function register(program: Command): void {
  program
    .command("validate")
    .summary("validate the repository's cluster folders")
    .description(
      "validate the repository's cluster folders (values files, cluster.yaml, mesh manifests) and report every " +
        "problem as file:line:col",
    )
    .argument(
      "[path]",
      "repository root, its clusters/ folder, or a cluster folder (default: the current directory or the nearest " +
        "parent holding clusters/)",
    )
    .addOption(
      new Option("-o, --output <format>", "output format (github: GitHub Actions annotations)")
        .choices(FORMATS)
        .default("text"),
    )
    .addOption(new Option("--format <format>", "the same as --output (kept for existing workflows)").choices(FORMATS))
    .addOption(
      new Option("--cluster <name>", "validate only this cluster (repeatable)")
        .argParser((v: string, acc: string[]) => [...acc, v])
        .default([], "every cluster"),
    )
    .option(
      "--cache-dir <dir>",
      "keep validated cluster folders in DIR by content hash (and vc version): a later run re-reads only folders " +
        "whose files changed",
    )
    .addOption(
      new Option("--jobs <n>", "threads to validate on (runs of 6,000 files or more; the others use one)")
        .argParser(positiveInt)
        .default(undefined, "every core"),
    )
    .addHelpText(
      "after",
      "\nExit status: 0 valid (warnings allowed), 1 invalid or an unknown --cluster, 2 usage or runtime failure.",
    )
    .action(
      action(
        async (
          path: string | undefined,
          flags: Omit<ValidateCommandOptions, "format"> & { output: ReportFormat; format?: ReportFormat },
          command: Command,
        ) => {
          const out: Output = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
          const given = command.getOptionValueSource("output") === "cli";
          if (flags.format && given && flags.format !== flags.output)
            throw new UserError(`--output ${flags.output} and --format ${flags.format} disagree: give one`);
          return runValidate(path ?? process.cwd(), { ...flags, format: flags.format ?? flags.output }, out);
        },
      ),
    );
}

/** Validates the repository at or above `path`, prints the report and returns the exit code. */
export async function runValidate(path: string, opts: ValidateCommandOptions, out: Output): Promise<number> {
  if (!existsSync(path)) throw new UserError(`path ${path} does not exist`, EXIT.failure);
  const found = findRepoRoot(path);
  if (!found) throw new UserError(noClustersMessage(path), EXIT.failure);
  const clusters = opts.cluster.length > 0 ? opts.cluster : found.cluster ? [found.cluster] : [];
  // The whole fleet asked for (a named cluster that is missing gets its own error).
  const empty = clusters.length === 0 ? emptyClustersNote(found.root) : undefined;
  if (empty) out.stderr(`${empty}\n`);
  const result = await loadAndValidate(found.root, {
    clusters,
    cacheDir: opts.cacheDir,
    jobs: opts.jobs,
    detail: "summary",
    hostClaims: true,
  });
  const unknown = unknownClusters(result.diagnostics);
  if (unknown.length > 0)
    throw new UnknownClusterError(
      unknown,
      (n) => [`no folder clusters/${n} in ${found.root}`],
      clusterFolderNames(found.root),
    );
  out.stdout(formatReport(result, opts.format));
  const s = summary(result);
  out.stderr(
    `${s.clusters} cluster${s.clusters === 1 ? "" : "s"}, ${s.errors} error${s.errors === 1 ? "" : "s"}, ` +
      `${s.warnings} warning${s.warnings === 1 ? "" : "s"}\n`,
  );
  return s.errors > 0 ? EXIT.invalid : EXIT.ok;
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("a whole number of threads, 1 or more");
  return n;
}

export function summary(r: RepoValidation): { clusters: number; errors: number; warnings: number } {
  const errors = r.diagnostics.filter((d) => d.severity === "error").length;
  return { clusters: r.clusters.length, errors, warnings: r.diagnostics.length - errors };
}

export function formatReport(r: RepoValidation, format: ReportFormat): string {
  if (format === "json" || format === "yaml") {
    const s = summary(r);
    const clusters = r.clusters.map((c) => ({
      name: c.name,
      valid: c.valid,
      errors: c.diagnostics.filter((d) => d.severity === "error").length,
      warnings: c.diagnostics.filter((d) => d.severity === "warning").length,
    }));
    return formatData({ valid: s.errors === 0, summary: s, clusters, diagnostics: r.diagnostics }, format);
  }
  return r.diagnostics.map((d) => (format === "github" ? githubLine(d) : textLine(d))).join("");
}

/** `file:line:col: severity: message`, or `file: severity: message` for a problem of the whole file. */
export function textLine(d: Diagnostic): string {
  return `${formatDiagnostic(d)}\n`;
}

/** A GitHub Actions workflow command: `::error file=...,line=...,col=...::message`. */
export function githubLine(d: Diagnostic): string {
  const props = [`file=${escapeProperty(d.file)}`];
  if (d.line > 0) props.push(`line=${d.line}`, `col=${Math.max(d.col, 1)}`);
  props.push(`title=${escapeProperty(`vc validate (${d.code})`)}`);
  return `::${d.severity} ${props.join(",")}::${escapeData(d.message)}\n`;
}

function escapeData(s: string): string {
  return s.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

function escapeProperty(s: string): string {
  return escapeData(s).replaceAll(":", "%3A").replaceAll(",", "%2C");
}
