// A real Kubernetes API server for the e2e tier: etcd and kube-apiserver from VC_KUBE_ASSETS (or KUBEBUILDER_ASSETS,
// the envtest layout), on free loopback ports with TLS, RBAC, token users and a front-proxy (request-header) CA.
//
// const kube = useRealKube(); // in a describe(): started before, stopped after (skipped without assets)
//   kube().kubeconfigPath                            admin (system:masters) kubeconfig
// kube().kubeconfigFor("alice") a kubeconfig of a token user named in options.users (no rights until bound)
//   kube().kubectl(["get", "ns"], { as? , input? })  the real kubectl as the admin (or as a named user)
//   kube().request("GET", "/api/v1/namespaces")      a JSON request as the admin
//   kube().serviceAccountKubeconfig(ns, name)        a kubeconfig holding a TokenRequest token of a real ServiceAccount
// kube().pki paths of the CA, the front-proxy CA and the front-proxy client pair
// kube().freeze() / thaw() SIGSTOP / SIGCONT the API server (it takes connections, answers nothing)
//   kube().kill() / restart()                        the API server down (connections refused) and up again, etcd kept
//
// Nothing runs but the API server: no controllers, no scheduler, no kubelet, so no pods run and namespaces never
// finish deleting. Start one server per test file; stop() ends exactly the processes it started.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dump } from "js-yaml";
import { kubectl, type KubectlResult } from "./kubectl.js";
import { freePort, requireOrSkip } from "./requires.js";

export interface RealKubeOptions {
  /**
   * Token users besides the admin, by name; each gets a token and a kubeconfig, and no rights until a test binds some.
   */
  users?: Array<{ name: string; groups?: string[] }>;
  /** More kube-apiserver flags (e.g. `--enable-aggregator-routing=true`). */
  extraArgs?: string[];
  /** The bound of the wait for /readyz; default `readyBoundMs()`. */
  readyTimeoutMs?: number;
}

interface RealKubePki {
  caCert: string;
  frontProxyCaCert: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

interface RequestOptions {
  /** Bearer token; default: the admin's. */
  token?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RealKube {
  url: string;
  port: number;
  dir: string;
  kubeconfigPath: string;
  adminToken: string;
  pki: RealKubePki;
  /** Seconds from spawning etcd to a ready API server. */
  startSeconds: number;
  kubeconfigFor(user: string): string;
  tokenOf(user: string): string;
  kubectl(args: string[], opts?: { as?: string; input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    opts?: RequestOptions,
  ): Promise<{ status: number; body: T }>;
  serviceAccountKubeconfig(namespace: string, name: string): Promise<string>;
  /** Writes the server has audited so far (optionally only by `user`); take a count before and after a command. */
  writes(user?: string): AuditedWrite[];
  /** Stops the API server process in place (SIGSTOP): it keeps its port and takes connections but answers nothing. */
  freeze(): void;
  /** Lets a frozen API server go on (SIGCONT). */
  thaw(): void;
  /** Kills the API server (SIGKILL): connections are refused until restart(); etcd keeps what was stored. */
  kill(): Promise<void>;
  /** Starts a killed API server again on its port, with its flags, and waits until it is ready. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** The folder holding `kube-apiserver` and `etcd`, or undefined when neither variable names a complete one. */
export function kubeAssets(): string | undefined {
  for (const dir of [process.env.VC_KUBE_ASSETS, process.env.KUBEBUILDER_ASSETS]) {
    if (dir && existsSync(join(dir, "kube-apiserver")) && existsSync(join(dir, "etcd"))) return dir;
  }
  return undefined;
}

const HOW_TO_GET =
  "set VC_KUBE_ASSETS (or KUBEBUILDER_ASSETS) to a folder with kube-apiserver and etcd: " +
  "scripts/fetch-kube-assets.sh prints one (docs/testing.md)";

/** Every write (and nothing else) is audited, so a test can count the writes a command made. */
const AUDIT_POLICY = {
  apiVersion: "audit.k8s.io/v1",
  kind: "Policy",
  omitStages: ["RequestReceived"],
  rules: [{ level: "Metadata", verbs: ["create", "update", "patch", "delete", "deletecollection"] }, { level: "None" }],
};

/** One audited write, as the API server logged it when the response was sent. */
export interface AuditedWrite {
  verb: string;
  user: string;
  uri: string;
  code: number;
  resource?: string;
  namespace?: string;
  name?: string;
  /** The server's id of the request and the stage it logged (one request may log more than one stage). */
  auditId?: string;
  stage?: string;
  time?: string;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: "pipe" });
}

/**
 * A CA, a serving certificate for 127.0.0.1, the service-account key pair and a front-proxy CA with its client pair.
 */
function makePki(dir: string): void {
  const p = (f: string) => join(dir, f);
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=vc-e2e-ca",
  ]);
  openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("apiserver.key"),
    "-out",
    p("apiserver.csr"),
    "-subj",
    "/CN=kube-apiserver",
  ]);
  writeFileSync(
    p("serving.cnf"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n",
  );
  openssl([
    "x509",
    "-req",
    "-in",
    p("apiserver.csr"),
    "-CA",
    p("ca.crt"),
    "-CAkey",
    p("ca.key"),
    "-CAcreateserial",
    "-out",
    p("apiserver.crt"),
    "-days",
    "2",
    "-extfile",
    p("serving.cnf"),
  ]);
  openssl(["genrsa", "-out", p("sa.key"), "2048"]);
  openssl(["rsa", "-in", p("sa.key"), "-pubout", "-out", p("sa.pub")]);
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("front-proxy-ca.key"),
    "-out",
    p("front-proxy-ca.crt"),
    "-days",
    "2",
    "-subj",
    "/CN=vc-e2e-front-proxy-ca",
  ]);
  openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("front-proxy-client.key"),
    "-out",
    p("front-proxy-client.csr"),
    "-subj",
    "/CN=front-proxy-client",
  ]);
  writeFileSync(p("client.cnf"), "extendedKeyUsage=clientAuth\n");
  openssl([
    "x509",
    "-req",
    "-in",
    p("front-proxy-client.csr"),
    "-CA",
    p("front-proxy-ca.crt"),
    "-CAkey",
    p("front-proxy-ca.key"),
    "-CAcreateserial",
    "-out",
    p("front-proxy-client.crt"),
    "-days",
    "2",
    "-extfile",
    p("client.cnf"),
  ]);
}

function kubeconfigText(url: string, caCert: string, user: string, token: string): string {
  return dump({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "e2e", cluster: { server: url, "certificate-authority-data": Buffer.from(caCert).toString("base64") } },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: "e2e", context: { cluster: "e2e", user } }],
    "current-context": "e2e",
  });
}

function spawnLogged(bin: string, args: string[], log: string): ChildProcess {
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  const chunks: Buffer[] = [];
  const keep = (d: Buffer) => {
    chunks.push(d);
    if (chunks.length > 400) chunks.splice(0, 200);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  child.on("exit", () => {
    running.delete(child);
    try {
      writeFileSync(log, Buffer.concat(chunks));
    } catch {
      // the folder is gone: the server was stopped
    }
  });
  running.add(child);
  (child as ChildProcess & { output?: () => string }).output = () => Buffer.concat(chunks).toString("utf8");
  return child;
}

function outputOf(child: ChildProcess): string {
  return ((child as ChildProcess & { output?: () => string }).output?.() ?? "").split("\n").slice(-15).join("\n");
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await gone;
  clearTimeout(timer);
}

function jsonRequest<T>(
  url: string,
  ca: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const req = httpsRequest(
      new URL(path, url),
      {
        method,
        ca,
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: "application/json",
          ...(payload ? { "Content-Type": contentType, "Content-Length": String(Buffer.byteLength(payload)) } : {}),
          ...headers,
        },
        timeout: 30_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // plain text (e.g. /readyz)
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/**
 * The bound of the wait for a started API server to be ready: 300 s, or `VC_KUBE_READY_TIMEOUT` seconds. A quiet
 * two-core machine needs about 5 s; a loaded one has needed more than 120 s. It is a bound on a wait for readiness
 * (the wait ends as soon as /readyz answers 200), never a measure of speed.
 */
function readyBoundMs(): number {
  const env = Number(process.env.VC_KUBE_READY_TIMEOUT);
  return Number.isFinite(env) && env > 0 ? env * 1000 : 300_000;
}

/** Starts etcd and kube-apiserver from `assets`; rejects with the server's last lines when it does not get ready. */
export async function startRealKube(assets: string, options: RealKubeOptions = {}): Promise<RealKube> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "vc-real-kube-"));
  const pkiDir = join(dir, "pki");
  mkdirSync(pkiDir);
  makePki(pkiDir);
  const adminToken = randomBytes(24).toString("hex");
  const tokens = new Map<string, string>([["admin", adminToken]]);
  const lines = [`${adminToken},admin,admin-uid,"system:masters"`];
  for (const user of options.users ?? []) {
    const token = randomBytes(24).toString("hex");
    tokens.set(user.name, token);
    lines.push(`${token},${user.name},${user.name}-uid,"${(user.groups ?? []).join(",")}"`);
  }
  writeFileSync(join(dir, "tokens.csv"), `${lines.join("\n")}\n`, { mode: 0o600 });

  writeFileSync(join(dir, "audit-policy.yaml"), dump(AUDIT_POLICY));
  const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcd = spawnLogged(
    join(assets, "etcd"),
    [
      "--name",
      "e2e",
      "--data-dir",
      join(dir, "etcd"),
      "--listen-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--advertise-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--listen-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-advertise-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster",
      `e2e=http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster-state",
      "new",
    ],
    join(dir, "etcd.log"),
  );
  const p = (f: string) => join(pkiDir, f);
  const apiserverArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${apiPort}`,
    `--tls-cert-file=${p("apiserver.crt")}`,
    `--tls-private-key-file=${p("apiserver.key")}`,
    `--client-ca-file=${p("ca.crt")}`,
    `--token-auth-file=${join(dir, "tokens.csv")}`,
    "--authorization-mode=RBAC",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${p("sa.pub")}`,
    `--service-account-signing-key-file=${p("sa.key")}`,
    "--api-audiences=https://kubernetes.default.svc.cluster.local",
    "--service-cluster-ip-range=10.0.0.0/24",
    "--allow-privileged=true",
    `--cert-dir=${join(dir, "generated")}`,
    `--audit-policy-file=${join(dir, "audit-policy.yaml")}`,
    `--audit-log-path=${join(dir, "audit.log")}`,
    "--audit-log-mode=blocking",
    "--disable-admission-plugins=ServiceAccount",
    `--requestheader-client-ca-file=${p("front-proxy-ca.crt")}`,
    "--requestheader-allowed-names=front-proxy-client",
    "--requestheader-username-headers=X-Remote-User",
    "--requestheader-group-headers=X-Remote-Group",
    "--requestheader-extra-headers-prefix=X-Remote-Extra-",
    `--proxy-client-cert-file=${p("front-proxy-client.crt")}`,
    `--proxy-client-key-file=${p("front-proxy-client.key")}`,
    ...(options.extraArgs ?? []),
  ];
  const spawnApiserver = () => spawnLogged(join(assets, "kube-apiserver"), apiserverArgs, join(dir, "apiserver.log"));
  let apiserver = spawnApiserver();
  const url = `https://127.0.0.1:${apiPort}`;
  const caCert = readFileSync(p("ca.crt"), "utf8");
  const stop = async () => {
    apiserver.kill("SIGCONT");
    await stopChild(apiserver);
    await stopChild(etcd);
    rmSync(dir, { recursive: true, force: true });
  };

  const bound = options.readyTimeoutMs ?? readyBoundMs();
  const deadline = Date.now() + bound;
  let last = "no answer yet";
  for (;;) {
    for (const [name, child] of [
      ["kube-apiserver", apiserver],
      ["etcd", etcd],
    ] as const) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const tail = outputOf(child);
        await stop();
        throw new Error(`${name} exited before the API server was ready:\n${tail}`);
      }
    }
    // /readyz?verbose lists each check, so a server that stays unready says which check it waits for.
    const ready = await jsonRequest<string>(url, caCert, adminToken, "GET", "/readyz?verbose").catch((err: Error) => ({
      status: 0,
      body: err.message,
    }));
    if (ready.status === 200) break;
    last = `${ready.status || "no answer"}: ${
      String(ready.body)
        .split("\n")
        .filter((l) => /failed|^\[-\]|refused|ECONN/.test(l))
        .join("; ") || String(ready.body).slice(0, 200)
    }`;
    if (Date.now() > deadline) {
      const tail = outputOf(apiserver);
      await stop();
      throw new Error(
        `kube-apiserver's /readyz did not answer 200 within the ${bound / 1000} s bound (VC_KUBE_READY_TIMEOUT); ` +
          `last answer ${last}:\n${tail}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  const kubeconfigs = new Map<string, string>();
  const kubeconfigFor = (user: string): string => {
    const token = tokens.get(user);
    if (!token) throw new Error(`no user ${user}: name it in options.users`);
    let path = kubeconfigs.get(user);
    if (!path) {
      path = join(dir, `kubeconfig-${user}`);
      writeFileSync(path, kubeconfigText(url, caCert, user, token), { mode: 0o600 });
      kubeconfigs.set(user, path);
    }
    return path;
  };
  const kubeconfigPath = kubeconfigFor("admin");
  const request = <T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}) =>
    jsonRequest<T>(url, caCert, opts.token ?? adminToken, method, path, body, opts.contentType, opts.headers);

  return {
    url,
    port: apiPort,
    dir,
    kubeconfigPath,
    adminToken,
    startSeconds: (Date.now() - t0) / 1000,
    pki: {
      caCert: p("ca.crt"),
      frontProxyCaCert: p("front-proxy-ca.crt"),
      frontProxyClientCert: p("front-proxy-client.crt"),
      frontProxyClientKey: p("front-proxy-client.key"),
    },
    kubeconfigFor,
    tokenOf: (user) => {
      const token = tokens.get(user);
      if (!token) throw new Error(`no user ${user}`);
      return token;
    },
    kubectl: (args, opts = {}) =>
      kubectl({ kubeconfigPath }, args, {
        kubeconfig: opts.as ? kubeconfigFor(opts.as) : kubeconfigPath,
        input: opts.input,
        timeoutMs: opts.timeoutMs ?? 60_000,
      }),
    request,
    async serviceAccountKubeconfig(namespace, name) {
      await request("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace },
      });
      const issued = await request<{ status?: { token?: string } }>(
        "POST",
        `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
        {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { audiences: ["https://kubernetes.default.svc.cluster.local"], expirationSeconds: 3600 },
        },
      );
      const token = issued.body.status?.token;
      if (!token)
        throw new Error(
          `TokenRequest for ${namespace}/${name} failed: ${issued.status} ${JSON.stringify(issued.body)}`,
        );
      const path = join(dir, `kubeconfig-sa-${namespace}-${name}`);
      writeFileSync(path, kubeconfigText(url, caCert, `system:serviceaccount:${namespace}:${name}`, token), {
        mode: 0o600,
      });
      return path;
    },
    writes(user) {
      const log = join(dir, "audit.log");
      if (!existsSync(log)) return [];
      const events = readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as {
              verb: string;
              requestURI: string;
              user: { username: string };
              responseStatus?: { code: number };
              objectRef?: { resource?: string; namespace?: string; name?: string };
              auditID?: string;
              stage?: string;
              stageTimestamp?: string;
            },
        );
      return events
        .filter((e) => user === undefined || e.user.username === user)
        .map((e) => ({
          verb: e.verb,
          user: e.user.username,
          uri: e.requestURI,
          code: e.responseStatus?.code ?? 0,
          resource: e.objectRef?.resource,
          namespace: e.objectRef?.namespace,
          name: e.objectRef?.name,
          auditId: e.auditID,
          stage: e.stage,
          time: e.stageTimestamp,
        }));
    },
    freeze: () => void apiserver.kill("SIGSTOP"),
    thaw: () => void apiserver.kill("SIGCONT"),
    async kill() {
      if (apiserver.exitCode !== null || apiserver.signalCode !== null) return;
      const gone = new Promise((resolve) => apiserver.once("exit", resolve));
      apiserver.kill("SIGCONT");
      apiserver.kill("SIGKILL");
      await gone;
    },
    async restart() {
      apiserver = spawnApiserver();
      const until = Date.now() + bound;
      for (;;) {
        if (apiserver.exitCode !== null || apiserver.signalCode !== null)
          throw new Error(`kube-apiserver exited on restart:\n${outputOf(apiserver)}`);
        const ready = await request("GET", "/readyz").catch(() => ({ status: 0 }));
        if (ready.status === 200) return;
        if (Date.now() > until)
          throw new Error(`kube-apiserver not ready ${bound / 1000} s after its restart:\n${outputOf(apiserver)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop,
  };
}

/**
 * Mocha hooks for one real API server per suite: started in `before` (skipped with how to get the binaries when they
 * are missing and CI is unset; a failure in CI), stopped in `after`. Returns an accessor for the running server.
 */
export function useRealKube(options: RealKubeOptions = {}): () => RealKube {
  let kube: RealKube | undefined;
  before(async function () {
    this.timeout((options.readyTimeoutMs ?? readyBoundMs()) + 60_000);
    const assets = kubeAssets();
    requireOrSkip(this, assets ? undefined : "kube-apiserver and etcd", HOW_TO_GET);
    kube = await startRealKube(assets!, options);
  });
  after(async function () {
    this.timeout(30_000);
    await kube?.stop();
    kube = undefined;
  });
  return () => {
    if (!kube) throw new Error("the real API server is not running (used outside its suite?)");
    return kube;
  };
}

/**
 * Installs namespaced CustomResourceDefinitions of one group version (schemas open) and waits until they are served.
 */
async function installCrds(
  kube: RealKube,
  group: string,
  version: string,
  kinds: ReadonlyArray<readonly [kind: string, plural: string, singular: string]>,
  opts: { status?: boolean } = {},
): Promise<void> {
  for (const [kind, plural, singular] of kinds) {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { kind, plural, singular, listKind: `${kind}List` },
        versions: [
          {
            name: version,
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            ...(opts.status ? { subresources: { status: {} } } : {}),
          },
        ],
      },
    };
    const created = await kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`cannot create the ${kind} CRD: ${created.status} ${JSON.stringify(created.body)}`);
  }
  await waitFor(async () => {
    const served = await kube.request<{ resources?: Array<{ name: string }> }>("GET", `/apis/${group}/${version}`);
    return served.status === 200 && kinds.every(([, plural]) => served.body.resources?.some((r) => r.name === plural));
  }, `the ${group} CRDs to be served`);
}

/**
 * The mesh's CustomResourceDefinitions (networking.mesh.io/v1beta1), installed as the mesh would install them on a
 * host.
 */
export async function installMeshCrds(kube: RealKube): Promise<void> {
  await installCrds(kube, "networking.mesh.io", "v1beta1", [
    ["VirtualService", "virtualservices", "virtualservice"],
    ["DestinationRule", "destinationrules", "destinationrule"],
    ["Gateway", "gateways", "gateway"],
  ]);
}

/**
 * cert-manager's Certificate CRD (cert-manager.io/v1, with the status subresource cert-manager writes Ready through).
 */
export async function installCertManagerCrds(kube: RealKube): Promise<void> {
  await installCrds(kube, "cert-manager.io", "v1", [["Certificate", "certificates", "certificate"]], { status: true });
}

/** The CRDs the example repository's clusters need on a host: the mesh's and cert-manager's. */
export async function installExampleCrds(kube: RealKube): Promise<void> {
  await installMeshCrds(kube);
  await installCertManagerCrds(kube);
}

/** Whether the server's discovery lists SelfSubjectReview (authentication.k8s.io v1 from 1.28, v1beta1 in 1.27). */
export async function servesSelfSubjectReview(kube: RealKube): Promise<boolean> {
  for (const version of ["v1", "v1beta1"]) {
    const res = await kube.request<{ resources?: Array<{ name: string }> }>(
      "GET",
      `/apis/authentication.k8s.io/${version}`,
    );
    if (res.status === 200 && res.body.resources?.some((r) => r.name === "selfsubjectreviews")) return true;
  }
  return false;
}

/**
 * Polls `check` every 100 ms until it holds, for at most `timeoutMs` (a bound on a wait for a state, never a measure of
 * speed).
 */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
