// The Kubernetes API test server: an in-memory, plain-HTTP API server on loopback that the real kubectl and client-node
// talk to.
//
// Public API (stable; see docs/development.md, "Kubernetes API test server"):
//
// const server = await startKubeServer({ port?: 0, users?: [{ token, rules, name? }], namespaces?: [...], tls?: false,
// anonymous?: "admin", watchHistory?: 20000, profile?: "1.20" | "current" });
//   profile (default VC_KUBE_PROFILE, else "current"; profile.ts): "1.20" serves no SelfSubjectReview and no aggregated
// discovery nor /openapi/v3 and drops unknown fields silently; "current" (1.36) serves them, honours fieldValidation
// (Strict: 400;
//   Warn and default: dropped with a Warning header) and words refusals as 1.36 does
//   server.url                      "http://127.0.0.1:PORT" ("https://" with tls: true)
// server.kubeconfigPath kubeconfig (temp dir): context "test", bearer token "admin" (full access), skipTLSVerify
// (with tls: the CA data instead). NOTE: kubectl never sends a bearer token over plain
//                                   HTTP, so requests without credentials act as the admin user (like the old insecure
// port) unless anonymous: "reject"; to test RBAC through kubectl start with tls: true.
//   server.writeKubeconfig({ token?, context?, path? })   another kubeconfig file; returns its path
// server.addUser(token, rules, name?) rules: [{ verbs, apiGroups, resources ("pods", "pods/log", "*"), namespaces? }]
//                                         unknown token -> 401; neither its rules nor stored RBAC (Roles, ClusterRoles
//                                         and bindings to its name, system:authenticated or its ServiceAccount groups)
//                                         allow -> 403 worded like upstream
//   In-process store access (not logged as requests; objects are copies; namespace defaults to "default"):
//   server.put(obj)                 create or replace (keeps uid/creationTimestamp; no managedFields unless given, so a
//                                   later server-side apply sees "before-first-apply" as the owner, as upstream)
//   server.get(apiVersion, kind, ns, name) or server.get(ref) / server.list(apiVersion, kind, ns?)
//   server.remove(apiVersion, kind, ns, name) or server.remove(ref)   deletes with Background propagation
//   server.setPodMetrics(ns, name, containers, { timestamp?, window? }) / server.setNodeMetrics(name, usage)
//   server.setMetricsAvailable(false)   metrics API gone from discovery, its paths answer 503
//   server.setPodLog(ns, pod, container, text, { previous? })
// server.faults.add({ method?, path?, nth?, times?, status?, reset?, latencyMs?, retryAfterSeconds?, body?, warning? })
// -> { remove(), matched, fired }; path: exact, prefix at "/", or RegExp; nth is 1-based
//                                   (times defaults to 1 with nth, unlimited without)
//   server.faults.clear()
// server.requests [{ method, path, query, status, user?, userAgent?, verb, resource?, subresource?, namespace?, name?
// }]
//   server.countRequests({ user?, method?, verb?, resource? ("pods" or "pods/log"), path? }) / server.resetRequests()
//   server.onExec(handler)          pods/<name>/exec over websocket (v4/v5.channel.k8s.io)
//   server.resourceVersion          the current global resourceVersion
//   server.openWatches / server.closeWatches()   open watch streams; end them all (clients must re-watch)
//   await server.close()
//
// Served: discovery (plain and aggregated v2), the kinds of src/kube/resources.ts, the metrics API under
// metrics.orch.io and metrics.k8s.io, get/list/watch/create/update/patch (merge, JSON, strategic, apply)/
// delete/deletecollection, status and scale subresources, pods/log, Tables for kubectl, dryRun=All, openapi enough for
// kubectl's server-side validation, /healthz, /readyz, /livez, /metrics (apiserver_request_total and
// apiserver_request_duration_seconds), SelfSubjectAccessReview, SubjectAccessReview and LocalSubjectAccessReview
// (stored RBAC; `create` needed), SelfSubjectReview, protobuf bodies of `kubectl create ns|cm|secret|sa`. As the real
// API server does (checked against it by test/e2e/fidelity.test.ts): immutable fields refused with 422 (StatefulSet
// spec beyond replicas/template/updateStrategy, a Deployment's selector, a Service's clusterIP, data of an immutable
// Secret or ConfigMap); RBAC escalation prevention for roles and bindings (escalate/bind verbs); the Impersonate-User
// header (needs the impersonate verb on users); groups left out with unservedGroups answer 404. Not served: controllers
// (nothing updates workload status), other admission, CRDs, protobuf responses.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump } from "js-yaml";
import type { KubeObject, ObjectRef } from "../../../src/kube/object.js";
import { Auth, type Rule } from "./auth.js";
import { rbacAllows } from "./rbac.js";
import { servedByKind, type Served } from "./catalog.js";
import { attachExec, type ExecHandler } from "./exec.js";
import { Faults } from "./faults.js";
import { createHandler } from "./handler.js";
import { PodLogs } from "./logs.js";
import { prepareCreate, prepareUpdate } from "./meta.js";
import { MetricsApi, type ContainerUsage } from "./metrics-api.js";
import { kindKey, Objects } from "./objects.js";
import { OpenApi } from "./openapi.js";
import { RequestLog, type LoggedRequest, type RequestFilter } from "./request-log.js";
import { ServerMetrics } from "./server-metrics.js";
import { jsonOf, Store } from "./store.js";
import { selfSignedCertificate } from "./tls.js";
import { defaultProfile, type Profile } from "./profile.js";

export { PROFILES, type Profile } from "./profile.js";

export type { Rule } from "./auth.js";
export type { ExecSession } from "./exec.js";

export interface KubeServerOptions {
  /** 0 (default): a free port. */
  port?: number;
  users?: Array<{ token: string; rules: Rule[]; name?: string }>;
  /** Namespaces created at start; default: default, kube-system, kube-public, kube-node-lease. */
  namespaces?: string[];
  /** Serve HTTPS with a self-signed certificate (kubectl then sends bearer tokens). */
  tls?: boolean;
  /** Watch events kept for watches from an old resourceVersion (default 20,000); older ones get 410 Expired. */
  watchHistory?: number;
  /** Requests without an Authorization header: "admin" (default) acts as admin, "reject" answers 401. */
  anonymous?: "admin" | "reject";
  /** API groups not served, as on a host where those CRDs are not installed (e.g. ["networking.mesh.io"]). */
  unservedGroups?: string[];
  /**
   * Answer TokenReviews (who does a bearer token name?), as a server whose callers may ask; default: 404, a host that
   * confirms no token (what vc's identity falls back from).
   */
  tokenReviews?: boolean;
  /** The release answered as: "1.20" or "current" (default: `VC_KUBE_PROFILE`, else current); see profile.ts. */
  profile?: Profile;
}

export interface KubeServer {
  readonly url: string;
  readonly port: number;
  readonly kubeconfigPath: string;
  writeKubeconfig(opts?: { token?: string; context?: string; path?: string }): string;
  addUser(token: string, rules: Rule[], name?: string): void;
  put(obj: KubeObject): KubeObject;
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  get(ref: ObjectRef): KubeObject | undefined;
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  remove(apiVersion: string, kind: string, namespace: string | undefined, name: string): boolean;
  remove(ref: ObjectRef): boolean;
  setPodMetrics(
    namespace: string,
    name: string,
    containers: ContainerUsage[],
    opts?: { timestamp?: string; window?: string },
  ): void;
  setNodeMetrics(
    name: string,
    usage: { cpu: string; memory: string },
    opts?: { timestamp?: string; window?: string },
  ): void;
  setMetricsAvailable(available: boolean): void;
  setPodLog(namespace: string, pod: string, container: string, text: string, opts?: { previous?: boolean }): void;
  readonly faults: Faults;
  readonly requests: LoggedRequest[];
  countRequests(filter?: RequestFilter): number;
  resetRequests(): void;
  onExec(handler: ExecHandler): void;
  readonly resourceVersion: string;
  /** How many watch streams are open. */
  readonly openWatches: number;
  /** Ends every open watch stream, as an API server restart or watch timeout does; returns how many. */
  closeWatches(): number;
  close(): Promise<void>;
}

/** get/remove take (apiVersion, kind, namespace, name) or one ObjectRef. */
function refArgs(
  a: string | ObjectRef,
  kind?: string,
  namespace?: string,
  name?: string,
): { apiVersion: string; k: string; ns: string | undefined; n: string } {
  if (typeof a === "string") return { apiVersion: a, k: kind ?? "", ns: namespace, n: name ?? "" };
  return { apiVersion: a.apiVersion, k: a.kind, ns: a.namespace, n: a.name };
}

const DEFAULT_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

function servedOrThrow(apiVersion: string, kind: string): Served {
  const s = servedByKind(apiVersion, kind);
  if (!s || s.readOnly) throw new Error(`the test server does not store ${apiVersion} ${kind}`);
  return s;
}

export async function startKubeServer(options: KubeServerOptions = {}): Promise<KubeServer> {
  const store = new Store(options.watchHistory);
  const profile = options.profile ?? defaultProfile();
  const objects = new Objects(store, profile);
  const auth = new Auth("admin", options.anonymous ?? "admin");
  for (const u of options.users ?? []) auth.addUser(u.token, u.rules, u.name);
  auth.useRbac((user, groups, a) => rbacAllows(store, user, groups, a).allowed);
  const faults = new Faults();
  const log = new RequestLog();
  const metrics = new MetricsApi(store);
  const logs = new PodLogs(store);
  const watches = new Set<() => void>();
  const dir = mkdtempSync(join(tmpdir(), "kube-server-"));
  let port = 0;

  const handler = createHandler({
    store,
    objects,
    auth,
    faults,
    log,
    metrics,
    logs,
    openapi: new OpenApi(),
    serverMetrics: new ServerMetrics(),
    hostPort: () => `127.0.0.1:${port}`,
    watches,
    unserved: new Set(options.unservedGroups ?? []),
    tokenReviews: options.tokenReviews ?? false,
    profile,
  });
  const cert = options.tls ? selfSignedCertificate(dir) : undefined;
  const server: Server = cert
    ? createTlsServer({ cert: cert.cert, key: cert.key, keepAliveTimeout: 30_000 }, handler)
    : createServer({ keepAliveTimeout: 30_000 }, handler);
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const exec = attachExec(server, { auth, store, log, faults });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `${cert ? "https" : "http"}://127.0.0.1:${port}`;

  const put = (input: KubeObject): KubeObject => {
    const served = servedOrThrow(input.apiVersion, input.kind);
    const obj = structuredClone(input);
    if (!obj.metadata?.name) throw new Error("put: metadata.name is required");
    if (served.namespaced) obj.metadata.namespace ??= "default";
    const live = store.get(kindKey(served), served.namespaced ? obj.metadata.namespace! : "", obj.metadata.name);
    if (live) {
      const managed = obj.metadata.managedFields;
      const next = prepareUpdate(obj, live.obj, served);
      if (managed !== undefined) next.metadata.managedFields = managed;
      if (input.status !== undefined) next.status = structuredClone(input.status);
      return JSON.parse(jsonOf(store.commit(kindKey(served), "MODIFIED", next))) as KubeObject;
    }
    const managed = obj.metadata.managedFields;
    const status = obj.status;
    prepareCreate(obj, served);
    if (managed !== undefined) obj.metadata.managedFields = managed;
    if (status !== undefined) obj.status = status;
    return JSON.parse(jsonOf(store.commit(kindKey(served), "ADDED", obj))) as KubeObject;
  };

  for (const ns of options.namespaces ?? DEFAULT_NAMESPACES)
    put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });

  const writeKubeconfig = (opts: { token?: string; context?: string; path?: string } = {}): string => {
    const context = opts.context ?? "test";
    const path = opts.path ?? join(dir, `kubeconfig-${context}-${opts.token ?? "admin"}.yaml`);
    const config = {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "test",
          cluster: cert
            ? { server: url, "certificate-authority-data": Buffer.from(cert.cert).toString("base64") }
            : { server: url, "insecure-skip-tls-verify": true },
        },
      ],
      users: [{ name: `user-${opts.token ?? "admin"}`, user: { token: opts.token ?? "admin" } }],
      contexts: [
        { name: context, context: { cluster: "test", user: `user-${opts.token ?? "admin"}`, namespace: "default" } },
      ],
      "current-context": context,
      preferences: {},
    };
    writeFileSync(path, dump(config), { mode: 0o600 });
    return path;
  };
  const kubeconfigPath = writeKubeconfig({ path: join(dir, "kubeconfig") });

  return {
    url,
    port,
    kubeconfigPath,
    writeKubeconfig,
    addUser: (token, rules, name) => auth.addUser(token, rules, name),
    put,
    get(a: string | ObjectRef, kind?: string, namespace?: string, name?: string) {
      const { apiVersion, k, ns, n } = refArgs(a, kind, namespace, name);
      const served = servedOrThrow(apiVersion, k);
      const e = store.get(kindKey(served), served.namespaced ? (ns ?? "default") : "", n);
      return e ? (JSON.parse(jsonOf(e)) as KubeObject) : undefined;
    },
    list(apiVersion, kind, namespace) {
      const served = servedOrThrow(apiVersion, kind);
      return [...store.entries(kindKey(served), served.namespaced ? namespace : undefined)]
        .sort((a, b) =>
          `${a.obj.metadata.namespace ?? ""}/${a.obj.metadata.name}`.localeCompare(
            `${b.obj.metadata.namespace ?? ""}/${b.obj.metadata.name}`,
          ),
        )
        .map((e) => JSON.parse(jsonOf(e)) as KubeObject);
    },
    remove(a: string | ObjectRef, kind?: string, namespace?: string, name?: string) {
      const { apiVersion, k, ns, n } = refArgs(a, kind, namespace, name);
      const served = servedOrThrow(apiVersion, k);
      try {
        objects.delete(served, served.namespaced ? (ns ?? "default") : undefined, n, {});
        return true;
      } catch {
        return false;
      }
    },
    setPodMetrics: (ns, name, containers, opts) => metrics.setPod(ns, name, containers, opts),
    setNodeMetrics: (name, usage, opts) => metrics.setNode(name, usage, opts),
    setMetricsAvailable(available) {
      metrics.available = available;
    },
    setPodLog: (ns, pod, container, text, opts) => logs.set(ns, pod, container, text, opts),
    faults,
    get requests() {
      return log.requests;
    },
    countRequests: (filter) => log.count(filter),
    resetRequests: () => log.reset(),
    onExec: (h) => exec.setHandler(h),
    get resourceVersion() {
      return String(store.resourceVersion);
    },
    get openWatches() {
      return watches.size;
    },
    closeWatches() {
      const open = [...watches];
      for (const stop of open) stop();
      return open.length;
    },
    async close() {
      for (const stop of [...watches]) stop();
      exec.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
