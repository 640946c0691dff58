// Support of the fault tests of vc's records on a real API server (test/e2e/record-*.test.ts): a fleet of small
// clusters in a git repository, an admission webhook that holds the writes a test picks (so a fault lands provably
// mid-write), and what the records and the host say, to compare them.
import { expect } from "chai";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Reconciliation } from "../../src/records/status.js";
import { TestRepo } from "./git-server.js";
import type { RealKube } from "./real-kube.js";
import { runVc } from "./vc.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** A git repository of `count` copies of the example cluster `minimal` (c1, c2, ...), each asking `cpu` millicores. */
export function smallFleet(
  count: number,
  cpu: number,
): { repo: TestRepo; clusters: string[]; commit(cpu: number): string } {
  const repo = new TestRepo();
  const clusters = Array.from({ length: count }, (_, i) => `c${i + 1}`);
  const write = (millis: number) => {
    for (const c of clusters) {
      cpSync(join(ROOT, "clusters", "minimal"), join(repo.work, "clusters", c), { recursive: true });
      repo.write({
        [`clusters/${c}/values.yaml`]: `controlPlane: {statefulSet: {resources: {requests: {cpu: ${millis}m}}}}\n`,
      });
    }
  };
  write(cpu);
  repo.commit("fleet");
  return {
    repo,
    clusters,
    commit(millis: number) {
      write(millis);
      return repo.commit(`cpu ${millis}m`);
    },
  };
}

/** What an admission webhook is asked (AdmissionReview v1's request, the parts a test decides on). */
export interface Admission {
  operation: string;
  namespace?: string;
  name?: string;
  userInfo?: { username?: string };
  object?: { metadata?: { labels?: Record<string, string> }; data?: Record<string, string> };
  oldObject?: { metadata?: { labels?: Record<string, string> }; data?: Record<string, string> };
}

interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
}

export interface HoldingWebhook {
  /** Requests held so far (each is answered only by `release` or `fail`). */
  held(): number;
  /** Answers every held request: allowed. */
  release(): void;
  /** Drops every held request unanswered: the API server refuses the write (failurePolicy Fail). */
  fail(): void;
  /** Stops holding: from now on every request is allowed. */
  stopHolding(): void;
  /** Deletes the webhook's configuration and closes the server. */
  close(): Promise<void>;
}

/**
 * A validating webhook on the real API server that allows every request the rule and `objectSelector` send it but the
 * ones `hold` picks, which it holds unanswered (a write in flight, for as long as the test wants, up to 30 s).
 */
export async function holdingWebhook(
  kube: RealKube,
  o: {
    name: string;
    rule: WebhookRule;
    objectSelector?: Record<string, string>;
    hold: (request: Admission) => boolean;
  },
): Promise<HoldingWebhook> {
  const dir = mkdtempSync(join(tmpdir(), "vc-webhook-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(dir, "tls.key"),
      "-out",
      join(dir, "tls.crt"),
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "pipe" },
  );
  const cert = readFileSync(join(dir, "tls.crt"), "utf8");
  const key = readFileSync(join(dir, "tls.key"), "utf8");
  rmSync(dir, { recursive: true, force: true });
  const held: ServerResponse[] = [];
  let holding = true;
  const answer = (res: ServerResponse, uid: string) => {
    res.setHeader("Content-Type", "application/json");
    res.end(
      JSON.stringify({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid, allowed: true },
      }),
    );
  };
  const uids = new WeakMap<ServerResponse, string>();
  const server = createServer({ cert, key }, (req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const review = JSON.parse(body) as { request: Admission & { uid: string } };
      if (holding && o.hold(review.request)) {
        uids.set(res, review.request.uid);
        held.push(res);
      } else answer(res, review.request.uid);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const config = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: o.name },
    webhooks: [
      {
        name: `${o.name}.e2e.test`,
        rules: [o.rule],
        ...(o.objectSelector ? { objectSelector: { matchLabels: o.objectSelector } } : {}),
        clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle: Buffer.from(cert).toString("base64") },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 30,
        failurePolicy: "Fail",
      },
    ],
  };
  const made = await kube.request(
    "POST",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    config,
  );
  if (made.status !== 201) {
    server.close();
    throw new Error(`cannot register the webhook: ${made.status} ${JSON.stringify(made.body)}`);
  }
  const drain = (each: (res: ServerResponse) => void) => {
    for (const res of held.splice(0)) each(res);
  };
  return {
    held: () => held.length,
    release: () => drain((res) => answer(res, uids.get(res) ?? "")),
    fail: () => drain((res) => res.socket?.destroy()),
    stopHolding: () => void (holding = false),
    async close() {
      holding = false;
      await kube.request("DELETE", `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${o.name}`);
      drain((res) => res.socket?.destroy());
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** `vc <args>` as its own process (a run the test can kill or stop), with its output kept. */
export function vcProcess(args: string[]): { child: ChildProcess; output(): string; exited(): Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited: () => exit };
}

/** What vc's record of a cluster says: its status, its apply lease, every reconciliation kept (record + history). */
export interface RecordView {
  lastAppliedRevision?: string;
  result?: string;
  applying?: string;
  /** The objects the record names (`group/Kind/namespace/name`). */
  inventory: string[];
  /** Oldest first: the history ConfigMap's, then the record's own. */
  entries: Reconciliation[];
}

interface ConfigMapItem {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/** Every cluster's record in the records namespace (vc-system), by cluster. */
export async function recordsOf(kube: RealKube): Promise<Map<string, RecordView>> {
  const list = await kube.request<{ items: ConfigMapItem[] }>(
    "GET",
    "/api/v1/namespaces/vc-system/configmaps?labelSelector=" +
      encodeURIComponent("vc.orch.io/record in (record,history)"),
  );
  if (list.status !== 200) throw new Error(`cannot list the records: ${list.status}`);
  const parse = (text: string | undefined): Reconciliation[] => (text ? (JSON.parse(text) as Reconciliation[]) : []);
  const views = new Map<string, RecordView>();
  const older = new Map<string, Reconciliation[]>();
  for (const cm of list.body.items) {
    const cluster = cm.data?.cluster;
    if (!cluster) continue;
    if (cm.metadata.labels?.["vc.orch.io/record"] === "history") {
      older.set(cluster, parse(cm.data?.history));
      continue;
    }
    views.set(cluster, {
      lastAppliedRevision: cm.data?.lastAppliedRevision,
      result: cm.data?.result,
      applying: cm.metadata.annotations?.["vc.orch.io/applying"],
      inventory: cm.data?.inventory ? (JSON.parse(cm.data.inventory) as string[]) : [],
      // The record keeps the newest first.
      entries: parse(cm.data?.history).reverse(),
    });
  }
  for (const [cluster, entries] of older) {
    const view = views.get(cluster);
    // The history ConfigMap keeps its entries newest first too.
    if (view) view.entries = [...[...entries].reverse(), ...view.entries];
  }
  return views;
}

/** What the host has of a cluster: its control plane's StatefulSet (the object every commit of smallFleet changes). */
export async function hostOf(kube: RealKube, cluster: string): Promise<{ revision?: string; cpu?: string }> {
  const res = await kube.request<{
    metadata: { annotations?: Record<string, string> };
    spec: { template: { spec: { containers: Array<{ resources?: { requests?: { cpu?: string } } }> } } };
  }>("GET", `/apis/apps/v1/namespaces/vc-${cluster}/statefulsets/${cluster}`);
  if (res.status !== 200) return {};
  return {
    revision: res.body.metadata.annotations?.["vc.orch.io/revision"],
    cpu: res.body.spec.template.spec.containers[0]?.resources?.requests?.cpu,
  };
}

/** Entries stored more than once (the same revision, time and writer): each entry must be kept exactly once. */
export function duplicates(entries: readonly Reconciliation[]): Reconciliation[] {
  const seen = new Set<string>();
  const twice: Reconciliation[] = [];
  for (const e of entries) {
    const key = JSON.stringify([e.revision, e.time, e.via, e.by, e.result, e.counts]);
    if (seen.has(key)) twice.push(e);
    seen.add(key);
  }
  return twice;
}

/**
 * After a fault and a rerun of `vc apply <args>`: every record at the revision every cluster's objects are at
 * (`revision`, `cpu`), no apply lease left, the entry of the apply at `first` kept once, no entry stored twice, and
 * `vc diff --exit-code` clean.
 */
export async function expectRecordsAtHost(
  kube: RealKube,
  clusters: readonly string[],
  args: string[],
  first: string,
  revision: string,
  cpu: string,
): Promise<void> {
  const again = await runVc(["apply", ...args]);
  expect(again.code, again.stdout + again.stderr).to.equal(0);
  const records = await recordsOf(kube);
  for (const cluster of clusters) {
    const host = await hostOf(kube, cluster);
    expect(host, `${cluster}'s objects`).to.deep.equal({ revision, cpu });
    const record = records.get(cluster);
    expect(record?.lastAppliedRevision, `${cluster}'s record`).to.equal(revision);
    expect(record?.result, cluster).to.equal("applied");
    expect(record?.applying, `${cluster}'s apply lease`).to.equal(undefined);
    expect(duplicates(record!.entries), `${cluster}: entries stored twice`).to.deep.equal([]);
    expect(
      record!.entries.filter((e) => e.revision === first),
      `${cluster}: the first apply's entry`,
    ).to.have.length(1);
    expect(record!.entries.at(-1)?.revision, `${cluster}: the newest entry`).to.equal(revision);
  }
  const diff = await runVc(["diff", ...args, "--exit-code"]);
  expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
}
