// Test fixture of the metrics proxy: a host (the Kubernetes API test server) with synced pods, and proxies started
// against it.
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { parseFlags, type ProxyConfig } from "../../src/metrics-proxy/config.js";
import { silentLogger } from "../../src/model/log.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { ANNOTATIONS, LABELS, hostName } from "../../src/translate/index.js";

export const HOST_NS = "vc-tenants";

export interface PodSpec {
  cluster?: string;
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  node?: string;
  cpu?: string;
  memory?: string;
  /** Leave out the virtual name annotation (a pod that claims the cluster but is not mapped). */
  noAnnotations?: boolean;
  /** Host name override (an unsynced pod); default: the naming contract's hostName. */
  hostName?: string;
  hostNamespace?: string;
}

/** The host object of a pod: synced pods carry the ownership label, vc's annotations and a syncer label. */
export function hostPod(p: PodSpec): Record<string, unknown> {
  const labels: Record<string, string> = { ...p.labels };
  const annotations: Record<string, string> = {};
  if (p.cluster) {
    labels[LABELS.managedBy] = p.cluster;
    labels["vc.orch.io/namespace"] = p.namespace; // a syncer-only key: must never show as a virtual label
    if (!p.noAnnotations) {
      annotations[ANNOTATIONS.objectName] = p.name;
      annotations[ANNOTATIONS.objectNamespace] = p.namespace;
    }
  }
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: hostNameOf(p), namespace: p.hostNamespace ?? HOST_NS, labels, annotations },
    spec: { nodeName: p.node ?? "node-1", containers: [{ name: "main", image: "busybox" }] },
  };
}

export function hostNameOf(p: PodSpec): string {
  return p.hostName ?? (p.cluster ? hostName(p.name, p.namespace, p.cluster) : p.name);
}

/** Puts the host pod and its metrics on the host. */
export async function addPod(server: KubeServer, p: PodSpec): Promise<void> {
  server.put(hostPod(p) as any);
  server.setPodMetrics(p.hostNamespace ?? HOST_NS, hostNameOf(p), [
    { name: "main", usage: { cpu: p.cpu ?? "1m", memory: p.memory ?? "1Mi" } },
  ]);
}

export async function addNode(
  server: KubeServer,
  name: string,
  cpu: string,
  labels: Record<string, string> = {},
): Promise<void> {
  server.put({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels } },
    status: {
      capacity: { cpu: "4", memory: "8Gi", pods: "110" },
      allocatable: { cpu: "4", memory: "8Gi", pods: "110" },
    },
  } as any);
  server.setNodeMetrics(name, { cpu, memory: "1Gi" });
}

export type { KubeServer };

/** A host test server with the host namespace created. */
export function startHost(): Promise<KubeServer> {
  return startKubeServer({ namespaces: ["default", "kube-system", HOST_NS] });
}

/** Starts an in-process proxy for `cluster` against `server`, on a free loopback port, and waits for its index. */
export async function proxyFor(
  server: KubeServer,
  cluster: string,
  extra: string[] = [],
  opts: { kubeconfig?: string; wait?: boolean } = {},
): Promise<RunningProxy> {
  const config: ProxyConfig = parseFlags([
    "--cluster",
    cluster,
    "--host-namespace",
    HOST_NS,
    "--kubeconfig",
    opts.kubeconfig ?? server.kubeconfigPath,
    "--listen",
    "127.0.0.1:0",
    ...extra,
  ]);
  const proxy = await startProxy(config, { log: silentLogger, processMetrics: false, retryMs: 100, syncWaitMs: 1000 });
  if (opts.wait !== false && !(await proxy.informer.waitSynced(15_000))) throw new Error("pod index did not sync");
  return proxy;
}

export interface Answer {
  status: number;
  body: any;
  text: string;
}

/** GETs a proxy path; JSON bodies are parsed. */
export async function get(
  proxy: RunningProxy | string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const base = typeof proxy === "string" ? proxy : proxy.url;
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** Polls `fn` until it returns true (or fails after `ms`). */
export async function eventually(fn: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("condition not reached in time");
}

/** A temporary file with this content. */
export function tempFile(name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), "vc-mp-"));
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Names of list items as `namespace/name` (or `name`). */
export function names(list: any): string[] {
  return (list?.items ?? []).map((i: any) =>
    i.metadata.namespace ? `${i.metadata.namespace}/${i.metadata.name}` : i.metadata.name,
  );
}
