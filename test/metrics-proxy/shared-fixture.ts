// The shared proxy against the host test server: clusters marked on the host (Namespace label, kubeconfig Secret), each
// with a virtual API server of its own (a TLS test server publishing its front-proxy CA, deciding SubjectAccessReviews
// from stored RBAC, holding the metrics APIService), and requests sent as each cluster's front proxy.
import { readFileSync } from "node:fs";
import https from "node:https";
import { dump } from "js-yaml";
import { parseFlags } from "../../src/metrics-proxy/config.js";
import { startProxy, type RunningProxy } from "../../src/metrics-proxy/proxy.js";
import { silentLogger } from "../../src/model/log.js";
import { LABELS } from "../../src/translate/keys.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { frontProxyPki, makeCerts, type FrontProxyPki } from "./certs.js";
import type { Answer } from "./fixture.js";

/** The Namespace that marks a cluster for the shared proxy, as vc renders it. */
export function clusterNamespace(name: string, hostNamespace: string, nodes: "synced" | "all" = "synced") {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: hostNamespace, labels: { [LABELS.managedBy]: name, [LABELS.metricsProxy]: nodes } },
  };
}

/** The host Secret vc-<name> the control plane writes: the virtual API server's kubeconfig (key `config`). */
export function kubeconfigSecret(name: string, hostNamespace: string, kubeconfig: string) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `vc-${name}`, namespace: hostNamespace },
    data: { config: Buffer.from(kubeconfig).toString("base64") },
  };
}

/** The ConfigMap in which an API server publishes how its front proxy authenticates. */
export function authenticationConfigMap(caPem: string, allowedNames = ["front-proxy-client"]) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "extension-apiserver-authentication", namespace: "kube-system" },
    data: {
      "requestheader-client-ca-file": caPem,
      "requestheader-allowed-names": JSON.stringify(allowedNames),
      "requestheader-username-headers": '["X-Remote-User"]',
      "requestheader-group-headers": '["X-Remote-Group"]',
      "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
    },
  };
}

export interface TestCluster {
  name: string;
  hostNamespace: string;
  virtual: KubeServer;
  pki: FrontProxyPki;
}

/**
 * A cluster for the shared proxy: its virtual API server (metrics readers: user `viewer`), its front-proxy PKI (`pki`
 * to publish another's CA), and on the host its marked Namespace and kubeconfig Secret.
 */
export async function addCluster(
  host: KubeServer,
  name: string,
  opts: { hostNamespace?: string; nodes?: "synced" | "all"; pki?: FrontProxyPki } = {},
): Promise<TestCluster> {
  const hostNamespace = opts.hostNamespace ?? `vc-${name}`;
  const pki = opts.pki ?? frontProxyPki();
  const virtual = await startKubeServer({ tls: true, namespaces: ["default", "kube-system"] });
  virtual.put(authenticationConfigMap(pki.caPem) as never);
  virtual.put({
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: "v1beta1.metrics.orch.io" },
    spec: { group: "metrics.orch.io", version: "v1beta1", groupPriorityMinimum: 100, versionPriority: 100 },
  } as never);
  virtual.put({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "metrics-reader" },
    rules: [{ apiGroups: ["metrics.orch.io", ""], resources: ["pods", "nodes"], verbs: ["get", "list"] }],
  } as never);
  virtual.put({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "metrics-reader" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "metrics-reader" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "viewer" }],
  } as never);
  host.put(clusterNamespace(name, hostNamespace, opts.nodes) as never);
  host.put(kubeconfigSecret(name, hostNamespace, readFileSync(virtual.kubeconfigPath, "utf8")) as never);
  return { name, hostNamespace, virtual, pki };
}

/** Starts the shared proxy against `host`: each cluster's virtual API server at its kubeconfig's address. */
export async function sharedProxy(host: KubeServer, extra: string[] = []): Promise<RunningProxy> {
  const certs = makeCerts();
  host.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "vc-metrics-proxy-status", namespace: "vc-system" },
  } as never);
  const config = parseFlags([
    ...["--kubeconfig", host.kubeconfigPath, "--listen", "127.0.0.1:0", "--virtual-server", "kubeconfig"],
    ...["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--tls-ca", certs.caCert],
    ...["--replica-name", "proxy-0", "--refresh-interval", "1s"],
    ...extra,
  ]);
  return startProxy(config, { log: silentLogger, processMetrics: false, retryMs: 100, syncWaitMs: 2000 });
}

/** A GET to the proxy as a front proxy presenting `client` (none: no certificate), with the user headers given. */
export function asFrontProxy(
  proxy: RunningProxy,
  path: string,
  client: { cert: string; key: string } | undefined,
  headers: Record<string, string> = { "X-Remote-User": "viewer" },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      proxy.url,
      {
        path,
        ca: readFileSync(makeCerts().caCert),
        ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
        headers,
        agent: false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, text });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The front proxy's client pair of a cluster. */
export const frontProxyOf = (c: TestCluster) => ({ cert: c.pki.clientCert, key: c.pki.clientKey });

/** A kubeconfig with `user` for a server (for Secrets a tenant rewrites). */
export function kubeconfigWith(server: string, user: Record<string, unknown>): string {
  return dump({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });
}
