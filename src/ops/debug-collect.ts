// `vc debug collect`: a gzip tar of everything needed to diagnose a virtual cluster, under a top-level `debug/`.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { dump } from "js-yaml";
import * as tar from "tar";
import type { KubeObject } from "../kube/object.js";
import type { Values } from "../model/values.js";
import { CHART_APP_LABEL } from "../translate/keys.js";
import { fromData } from "../records/status.js";
import { RecordStore } from "../records/store.js";
import { recordsNamespace } from "../translate/keys.js";
import type { Host } from "./host.js";
import { HostError } from "./host.js";
import { P } from "./paths.js";
import { hostMetricsApiService } from "./doctor/metrics.js";
import { maskCredentialsDeep, maskValues, valuesCredentials } from "../model/secrets.js";
import { credentialsOfObject, sanitize, Scrubber } from "./redact.js";
import { gatherSnapshot } from "./doctor/gather.js";
import { diagnose, type HostSnapshot } from "./doctor/index.js";
import { formatFindings } from "./doctor/format.js";

export interface CollectOptions {
  cluster: string;
  namespace: string;
  /** Effective values from the repository, when known. */
  values?: Values;
  /** Why the values are unknown (no folder, invalid). */
  valuesNote?: string;
  outputFile: string;
  now?: Date;
  log?: (line: string) => void;
}

export interface CollectResult {
  file: string;
  /** Paths inside the archive, sorted. */
  entries: string[];
  /** Things that could not be collected (forbidden, absent), also listed in the summary. */
  notes: string[];
}

const yaml = (data: unknown) => dump(data, { sortKeys: true, noRefs: true, lineWidth: -1 });

function timeOf(e: KubeObject): string {
  const x = e as { lastTimestamp?: string; eventTime?: string; firstTimestamp?: string };
  return x.lastTimestamp ?? x.eventTime ?? x.firstTimestamp ?? e.metadata.creationTimestamp ?? "";
}

/** Events sorted by `.lastTimestamp` (falling back to eventTime and creation), oldest first, as kubectl --sort-by. */
function sortEvents(events: KubeObject[]): KubeObject[] {
  return [...events].sort((a, b) =>
    timeOf(a) < timeOf(b) ? -1 : timeOf(a) > timeOf(b) ? 1 : a.metadata.name.localeCompare(b.metadata.name),
  );
}

export function defaultBundleName(cluster: string, now = new Date()): string {
  return `vc-debug-${cluster}-${now
    .toISOString()
    .replace(/[:.]/g, "")
    .replace(/\d{3}Z$/, "Z")}.tar.gz`;
}

export async function collectDebug(host: Host, o: CollectOptions): Promise<CollectResult> {
  const log = o.log ?? (() => {});
  const files = new Map<string, string>();
  const notes: string[] = [];
  const scrubber = await scrubberFor(host, o, notes);
  const safe = async <T>(what: string, fn: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      notes.push(`${what}: ${err instanceof HostError ? err.message : (err as Error).message}`);
      return fallback;
    }
  };
  const { snapshot, status } = await collectObjects(host, o, files, scrubber, safe, log);
  await collectLogs(host, o, snapshot, files, notes, safe, log);
  files.set("summary", summaryOf(host, o, snapshot, status, notes));
  return writeBundle(o, files, scrubber, notes, log);
}

type Safe = <T>(what: string, fn: () => Promise<T>, fallback: T) => Promise<T>;

/**
 * The credentials to scrub from every file: those among the namespace's Secrets (read, never written) and the values'.
 */
async function scrubberFor(host: Host, o: CollectOptions, notes: string[]): Promise<Scrubber> {
  const scrubber = new Scrubber();
  const ns = o.namespace;
  try {
    for (const s of await host.list<{ type?: string; data?: Record<string, string> }>(P.secrets(ns)))
      scrubber.addSecret(s);
  } catch (err) {
    notes.push(
      `secrets could not be listed to scrub their values from logs (${(err as Error).message}); objects are still ` +
        `sanitized`,
    );
  }
  if (o.values) for (const c of valuesCredentials(o.values)) scrubber.add(c);

  return scrubber;
}

/** The host objects of the bundle, each sanitized by the one credential rule, and the cluster's status. */
async function collectObjects(
  host: Host,
  o: CollectOptions,
  files: Map<string, string>,
  scrubber: Scrubber,
  safe: Safe,
  log: (line: string) => void,
) {
  const ns = o.namespace;
  log(`reading the host namespace ${ns}`);
  const snapshot = await gatherSnapshot(host, o.cluster, ns, o.values);
  const services = await safe("services", () => host.list(P.services(ns)), []);
  // Credentials written literally into the live objects (env values, annotations, flags, tokens) may show up in the
  // logs too.
  for (const obj of [snapshot.statefulSet, ...snapshot.pods, ...snapshot.events, ...services].filter(
    (x) => x !== undefined,
  ))
    for (const c of credentialsOfObject(obj)) scrubber.add(c);
  // Every object file: every string field by the one credential rule (sanitize), not only the logs.
  files.set(
    "statefulset.yaml",
    snapshot.statefulSet ? yaml(sanitize(snapshot.statefulSet)) : "# StatefulSet not found\n",
  );
  files.set("pods.yaml", yaml(snapshot.pods.map(sanitize)));
  files.set("events.yaml", yaml(sortEvents(snapshot.events).map(sanitize)));
  files.set("services.yaml", yaml(services.map(sanitize)));
  files.set("pvcs.yaml", yaml(snapshot.pvcs.map(sanitize)));
  files.set(
    "metrics-apiservice.yaml",
    snapshot.metricsApiService
      ? yaml(sanitize(snapshot.metricsApiService))
      : `# APIService ${hostMetricsApiService(snapshot)} is absent\n`,
  );
  files.set(
    "config.yaml",
    o.values ? yaml(maskValues(o.values)) : `# effective values unknown: ${o.valuesNote ?? "no repository folder"}\n`,
  );

  const cm = await safe(
    "status",
    () => new RecordStore(host.client).holderConfigMaps(o.cluster).then((m) => m.get(o.cluster)),
    undefined,
  );
  const status = fromData(cm?.data as Record<string, string> | undefined, o.cluster, ns);
  files.set(
    "status.yaml",
    status
      ? yaml(maskCredentialsDeep(status))
      : `# no reconcile status (no record of the cluster in namespace ${recordsNamespace()}): vc has not ` +
          `reconciled this cluster here\n`,
  );

  return { snapshot, status };
}

/** The syncer's logs of the control-plane pods, this run's and the previous one. */
async function collectLogs(
  host: Host,
  o: CollectOptions,
  snapshot: HostSnapshot,
  files: Map<string, string>,
  notes: string[],
  safe: Safe,
  log: (line: string) => void,
): Promise<void> {
  const ns = o.namespace;
  const controlPlane = snapshot.pods.filter(
    (p) => p.metadata.labels?.release === o.cluster && p.metadata.labels?.app === CHART_APP_LABEL,
  );
  const podNames = new Set([`${o.cluster}-0`, ...controlPlane.map((p) => p.metadata.name)]);
  for (const pod of [...podNames].sort()) {
    if (!snapshot.pods.some((p) => p.metadata.name === pod)) {
      notes.push(`pod ${pod} not found: no syncer logs`);
      continue;
    }
    for (const previous of [false, true]) {
      log(`reading ${previous ? "previous " : ""}logs of ${pod} container syncer`);
      const text = await safe(
        `logs of ${pod}`,
        () => host.text(P.podLog(ns, pod), { container: "syncer", ...(previous ? { previous: "true" } : {}) }),
        undefined,
      );
      const file = `logs/${pod}/syncer${previous ? ".previous" : ""}.log`;
      if (text !== undefined) files.set(file, text);
      else notes.push(`${file}: no ${previous ? "previous " : ""}log (container not started or never restarted)`);
    }
  }
}

/** The summary: the cluster, its control plane and pods, doctor's findings, and what was not collected. */
function summaryOf(
  host: Host,
  o: CollectOptions,
  snapshot: HostSnapshot,
  status: ReturnType<typeof fromData>,
  notes: readonly string[],
): string {
  const ns = o.namespace;
  const now = o.now ?? new Date();
  const findings = diagnose(snapshot);
  const summary = [
    `virtual cluster: ${o.cluster}`,
    `host namespace:  ${ns}`,
    `host context:    ${host.contextName}`,
    `collected at:    ${now.toISOString()}`,
    `statefulset:     ` +
      `${snapshot.statefulSet ? `replicas ${String((snapshot.statefulSet.spec as { replicas?: number } | undefined)?.replicas ?? "?")}, ready ${String((snapshot.statefulSet.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0)}` : "absent"}`,
    `last applied:    ` +
      `${status?.lastAppliedRevision ?? "(none)"}${status?.result ? ` (last result ${status.result})` : ""}`,
    "",
    "pods:",
    ...snapshot.pods.map((p) => {
      const st = (
        p as { status?: { phase?: string; containerStatuses?: Array<{ name: string; restartCount?: number }> } }
      ).status;
      const restarts = (st?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0);
      return `  ${p.metadata.name}: ${st?.phase ?? "Unknown"}, ${restarts} restart(s)`;
    }),
    "",
    formatFindings(o.cluster, ns, findings, snapshot.unreadable ?? {}).trimEnd(),
    "",
    "not collected:",
    ...(notes.length ? notes.map((n) => `  ${n}`) : ["  (nothing)"]),
    "",
    "Credentials are never collected: Secret objects are not included; env values, annotations and flags named " +
      "like credentials, URL passwords, tokens and keys recognised by their shape, and the database endpoint are " +
      "masked in every file; the credentials among the namespace's Secrets are scrubbed from every file. " +
      "Everything else reads as written.",
  ];
  return `${summary.join("\n")}\n`;
}

/** Writes the bundle: every file scrubbed, under `debug/`, as a gzipped tar readable by its owner only. */
async function writeBundle(
  o: CollectOptions,
  files: ReadonlyMap<string, string>,
  scrubber: Scrubber,
  notes: string[],
  log: (line: string) => void,
): Promise<CollectResult> {
  const dir = mkdtempSync(join(tmpdir(), "vc-debug-"));
  try {
    for (const [rel, text] of files) {
      const path = join(dir, "debug", rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, scrubber.scrub(text, rel.startsWith("logs/") || rel === "summary"), { mode: 0o600 });
    }
    const file = resolve(o.outputFile);
    mkdirSync(dirname(file), { recursive: true });
    await tar.create({ gzip: true, file, cwd: dir, portable: true }, ["debug"]);
    chmodSync(file, 0o600);
    log(`wrote ${file}`);
    return { file, entries: [...files.keys()].map((k) => `debug/${k}`).sort(), notes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
