// `vc render`: prints (or writes under --out) the host objects of every valid cluster of a repository.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import type { KubeObject } from "../kube/object.js";
import { compareDiagnostics, formatDiagnostic, hasErrors } from "../model/diagnostic.js";
import { clusterFolderNames, findRepoRoot } from "../repo/layout.js";
import { emptyClustersNote, noClustersMessage } from "../repo/fleet-folder.js";
import { renderSpecs } from "../render/fleet.js";
import { JsonListWriter, objectFilePath, toYamlDocument, toYamlStream } from "../render/output.js";
import { sourceRevision } from "../render/revision.js";
import { holdsInlineCredential, withholdCredentials } from "../render/secrets.js";
import { loadAndValidate, validSpecs } from "../validate/index.js";
import { namespaceClaims } from "../validate/namespace-claims.js";
import type { Diagnostic } from "../model/diagnostic.js";
import { action, EXIT, parseOutputFormat, UnknownClusterError, UserError } from "./common.js";

interface RenderFlags {
  cluster?: string[];
  output: string;
  out?: string;
  revision?: string;
}

/** Writes one file per object; every path is worked out (and checked for clashes) before anything is written. */
async function writeFiles(dir: string, objects: readonly KubeObject[]): Promise<number> {
  const root = resolve(dir);
  const files = new Map<string, KubeObject>();
  for (const o of objects) {
    const rel = objectFilePath(o);
    if (files.has(rel))
      throw new UserError(`two objects would be written to ${rel}: nothing was written`, EXIT.failure);
    files.set(rel, o);
  }
  for (const [rel, o] of files) {
    const file = join(root, rel);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, toYamlDocument(o));
  }
  return files.size;
}

/** Clusters loaded, rendered and printed at once when printing a fleet (memory follows the chunk, not the fleet). */
export const RENDER_CHUNK = 100;

/**
 * Prints the rendered objects chunk by chunk: the fleet is validated once in summary (diagnostics and the namespace
 * index of the cross-cluster rule), then each chunk is loaded, rendered, printed and let go. The bytes are those of
 * printing the whole fleet at once. Returns the diagnostics, to print once the objects are out.
 */
async function printStreamed(
  root: string,
  names: readonly string[],
  revision: string,
  format: "yaml" | "json",
  validation: Diagnostic[],
): Promise<Diagnostic[]> {
  const summary = await loadAndValidate(root, { clusters: [...names], detail: "summary" });
  validation.push(...summary.diagnostics);
  const claims = namespaceClaims(summary.clusters);
  const valid = summary.clusters.filter((c) => c.valid).map((c) => c.name);
  summary.clusters.length = 0;
  const json = format === "json" ? new JsonListWriter((t) => process.stdout.write(t)) : undefined;
  const diagnostics: Diagnostic[] = [];
  for (let i = 0; i < valid.length; i += RENDER_CHUNK) {
    const chunk = await loadAndValidate(root, { clusters: valid.slice(i, i + RENDER_CHUNK), namespaceClaims: claims });
    const fleet = renderSpecs(validSpecs(chunk), revision);
    diagnostics.push(...fleet.diagnostics);
    const objects = printable(fleet.clusters.flatMap((c) => c.objects));
    if (json) json.add(objects);
    else process.stdout.write(toYamlStream(objects));
  }
  json?.end();
  return diagnostics;
}

/** Objects as printed: a credential written inline in the repository reaches the live host only, never this output. */
function printable(rendered: KubeObject[]): KubeObject[] {
  for (const o of rendered.filter(holdsInlineCredential)) {
    process.stderr.write(
      `note: Secret ${o.metadata.namespace}/${o.metadata.name} holds a credential written inline in the ` +
        `repository: its data is left out of this output (use endpointSecretRef)\n`,
    );
  }
  return rendered.map(withholdCredentials);
}

export function register(program: Command): void {
  program
    .command("render [path]")
    .summary("render the host objects of the repository's clusters")
    .description(
      "render the host objects of every valid cluster of the repository at PATH (default .): a multi-document YAML " +
        "stream " +
        "on stdout, a JSON List with -o json, or one file per object under --out DIR " +
        "(<namespace>/<kind>/<name>.yaml, " +
        "cluster-scoped objects under _cluster/). Diagnostics go to stderr; an invalid cluster is not rendered and " +
        "the exit code is 1",
    )
    .option("--cluster <name...>", "render only these clusters (folder names under clusters/)")
    .option("-o, --output <format>", "yaml or json (stdout only)", "yaml")
    .option(
      "--out <dir>",
      "write one file per object under DIR instead of printing (existing files are overwritten, others kept)",
    )
    .option("--revision <sha>", 'the revision recorded on every object (default: the git HEAD of PATH, or "unknown")')
    .action(
      action(async (path: string | undefined, flags: RenderFlags) => {
        const format = parseOutputFormat(flags.output, ["yaml", "json"] as const);
        const found = findRepoRoot(path ?? ".");
        if (!found) throw new UserError(noClustersMessage(path ?? "."), EXIT.failure);
        const clusters = flags.cluster ?? (found.cluster ? [found.cluster] : undefined);
        const empty = clusters === undefined || clusters.length === 0 ? emptyClustersNote(found.root) : undefined;
        if (empty) process.stderr.write(`${empty}\n`);
        const known = clusterFolderNames(found.root) ?? [];
        const unknown = (clusters ?? []).filter((n) => !known.includes(n)).sort();
        if (unknown.length > 0)
          throw new UnknownClusterError(
            [...new Set(unknown)],
            (n) => [`no folder clusters/${n} in ${found.root}`],
            clusterFolderNames(found.root),
          );
        const revision = flags.revision ?? (await sourceRevision(found.root));
        if (!flags.out) {
          const validation: Diagnostic[] = [];
          const rendered = await printStreamed(
            found.root,
            clusters?.length ? clusters : known,
            revision,
            format,
            validation,
          );
          const diagnostics = [...validation, ...rendered].sort(compareDiagnostics);
          for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
          return hasErrors(diagnostics) ? EXIT.invalid : EXIT.ok;
        }
        const validation = await loadAndValidate(found.root, { clusters });
        const fleet = renderSpecs(validSpecs(validation), revision);
        const diagnostics = [...validation.diagnostics, ...fleet.diagnostics].sort(compareDiagnostics);
        for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
        const objects = printable(fleet.clusters.flatMap((c) => c.objects));
        const n = await writeFiles(flags.out, objects);
        process.stderr.write(`wrote ${n} objects of ${fleet.clusters.length} clusters under ${flags.out}\n`);
        return hasErrors(diagnostics) ? EXIT.invalid : EXIT.ok;
      }),
    );
}
