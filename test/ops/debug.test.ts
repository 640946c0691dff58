// vc debug collect (bundle contents, event order, no secret values) and vc debug shell (exec, TTY, resize) against the
// API test server.
import { putRecord } from "../support/records.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { dump, load } from "js-yaml";
import { startKubeServer, type KubeServer, type ExecSession } from "../support/kube-server/index.js";
import { KubeHost } from "../../src/ops/host.js";
import { KubeClient } from "../../src/host/client.js";
import { debugShell, ShellError } from "../../src/ops/debug-shell.js";
import { b64, clientCert, tempDir, vc, vcProcess } from "./helpers.js";

const NS = "vc-team-a";
const PLANTED_SECRET = "planted-secret-value-9f3a";
const ENV_SECRET = "hunter2-literal-env-value";
const DB_PASSWORD = "dbpass-7c1e";

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

function seed(server: KubeServer): void {
  server.put({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name: "team-a",
      namespace: NS,
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": `{"password":"${ENV_SECRET}"}` },
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { release: "team-a", app: "vc" } },
      template: {
        metadata: { labels: { release: "team-a", app: "vc" } },
        spec: {
          containers: [
            {
              name: "syncer",
              image: "vc/syncer:1",
              env: [
                { name: "DB_PASSWORD", value: ENV_SECRET },
                { name: "LOG_LEVEL", value: "debug" },
              ],
            },
          ],
        },
      },
    },
    status: { replicas: 1, readyReplicas: 1 },
  });
  server.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "team-a-0", namespace: NS, labels: { release: "team-a", app: "vc" } },
    spec: { containers: [{ name: "syncer", image: "vc/syncer:1", env: [{ name: "API_TOKEN", value: ENV_SECRET }] }] },
    status: {
      phase: "Running",
      containerStatuses: [
        {
          name: "syncer",
          restartCount: 2,
          ready: true,
          image: "vc/syncer:1",
          imageID: "",
          state: { running: { startedAt: "2026-11-21T10:00:00Z" } },
          lastState: { terminated: { reason: "Error", exitCode: 1 } },
        },
      ],
    },
  });
  server.setPodLog(NS, "team-a-0", "syncer", `started\nconnecting with token ${PLANTED_SECRET}\n`);
  server.setPodLog(NS, "team-a-0", "syncer", "panic: before restart\n", { previous: true });
  server.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "vc-team-a", namespace: NS },
    data: { config: Buffer.from(PLANTED_SECRET).toString("base64") },
  });
  for (const [name, time] of [
    ["late", "2026-11-21T10:05:00Z"],
    ["early", "2026-11-21T09:00:00Z"],
    ["middle", "2026-11-21T09:30:00Z"],
  ]) {
    server.put({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: NS },
      involvedObject: { kind: "Pod", name: "team-a-0", namespace: NS },
      reason: name,
      message: `event ${name}`,
      lastTimestamp: time,
      type: "Normal",
    });
  }
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "team-a", namespace: NS },
    spec: { selector: { release: "team-a" }, ports: [{ port: 443, targetPort: 8443 }] },
  });
  server.put({
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "data-team-a-0", namespace: NS },
    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
    status: { phase: "Bound" },
  });
  putRecord(server, {
    cluster: "team-a",
    hostNamespace: NS,
    data: {
      lastAppliedRevision: "abc123",
      result: "applied",
      history: JSON.stringify([
        {
          revision: "abc123",
          time: "2026-11-21T10:00:00Z",
          durationMs: 40,
          result: "applied",
          counts: { created: 3, updated: 0, deleted: 0, unchanged: 0, failed: 0 },
        },
      ]),
    },
  });
}

describe("ops: vc debug collect", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let dir: string;
  before(async () => {
    server = await startKubeServer({ namespaces: ["default", NS] });
    seed(server);
    dir = tempDir();
    mkdirSync(join(dir, "repo/clusters/team-a"), { recursive: true });
    mkdirSync(join(dir, "repo/clusters/team-b"), { recursive: true });
    writeFileSync(join(dir, "repo/clusters/team-b/values.yaml"), "{}\n");
    writeFileSync(
      join(dir, "repo/clusters/team-a/values.yaml"),
      `controlPlane:\n  backingStore:\n    database:\n      external:\n        enabled: true\n        endpoint: ` +
        `"postgres://vc:${DB_PASSWORD}@db.example:5432/vc"\n`,
    );
  });
  after(async () => server?.close());

  it("writes a gzip tar with debug/ holding every part, events sorted, and no secret value anywhere", async () => {
    const out = join(dir, "bundle.tar.gz");
    const r = await vc([
      "debug",
      "collect",
      "team-a",
      "--output-filename",
      out,
      "--kubeconfig",
      server.kubeconfigPath,
      "--repo",
      join(dir, "repo"),
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^wrote .*bundle.tar.gz \(\d+ files\)\n$/);
    expect(readFileSync(out).subarray(0, 2)).to.deep.equal(Buffer.from([0x1f, 0x8b]));
    expect(statSync(out).mode & 0o777).to.equal(0o600);
    const x = join(dir, "x");
    mkdirSync(x);
    execFileSync("tar", ["xzf", out, "-C", x]);
    expect(readdirSync(x)).to.deep.equal(["debug"]);
    expect(files(join(x, "debug"))).to.deep.equal([
      "config.yaml",
      "events.yaml",
      "logs/team-a-0/syncer.log",
      "logs/team-a-0/syncer.previous.log",
      "metrics-apiservice.yaml",
      "pods.yaml",
      "pvcs.yaml",
      "services.yaml",
      "statefulset.yaml",
      "status.yaml",
      "summary",
    ]);
    const read = (f: string) => readFileSync(join(x, "debug", f), "utf8");
    expect((load(read("events.yaml")) as Array<{ reason: string }>).map((e) => e.reason)).to.deep.equal([
      "early",
      "middle",
      "late",
    ]);
    expect(read("logs/team-a-0/syncer.previous.log")).to.equal("panic: before restart\n");
    expect(read("logs/team-a-0/syncer.log")).to.equal("started\nconnecting with token <masked>\n");
    expect(load(read("status.yaml"))).to.deep.include({ lastAppliedRevision: "abc123", result: "applied" });
    expect(read("config.yaml")).to.contain("endpoint: <masked>");
    expect(read("metrics-apiservice.yaml")).to.contain("is absent");
    expect(read("summary"))
      .to.contain("virtual cluster: team-a")
      .and.contain("team-a-0: Running, 2 restart(s)")
      .and.contain("last applied:    abc123");
    expect(read("statefulset.yaml")).to.contain("value: debug");
    for (const f of files(x)) {
      const text = readFileSync(join(x, f), "utf8");
      for (const secret of [PLANTED_SECRET, Buffer.from(PLANTED_SECRET).toString("base64"), ENV_SECRET, DB_PASSWORD]) {
        expect(text, `${f} holds a secret value`).not.to.contain(secret);
      }
    }
  });

  it("still writes the bundle for a user who may not read Secrets, saying what was not collected", async () => {
    server.addUser("no-secrets", [
      {
        verbs: ["get", "list"],
        apiGroups: ["", "apps", "networking.mesh.io"],
        resources: [
          "pods",
          "pods/log",
          "events",
          "services",
          "persistentvolumeclaims",
          "configmaps",
          "statefulsets",
          "deployments",
          "gateways",
        ],
        namespaces: [NS],
      },
    ]);
    const limited = server.writeKubeconfig({ token: "no-secrets", context: "no-secrets" });
    const out = join(dir, "limited.tar.gz");
    const r = await vc(["debug", "collect", "team-a", "--output-filename", out, "--kubeconfig", limited]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.contain("note: secrets could not be listed to scrub their values from logs");
    const x = join(dir, "y");
    mkdirSync(x);
    execFileSync("tar", ["xzf", out, "-C", x]);
    const summary = readFileSync(join(x, "debug/summary"), "utf8");
    expect(summary).to.contain("not collected:\n  secrets could not be listed");
    expect(summary)
      .to.contain(
        "not checked (access): you may not create SubjectAccessReviews, so the permission checks could not be made",
      )
      .and.contain("not checked (config): not visible to you");
    expect(summary).to.contain("Credentials are never collected");
    expect(readFileSync(join(x, "debug/config.yaml"), "utf8")).to.match(
      /^# effective values unknown: no folder clusters\/team-a/,
    );
    // The Secret could not be read, yet the token in the log is still recognised and masked.
    expect(readFileSync(join(x, "debug/logs/team-a-0/syncer.log"), "utf8")).to.equal(
      "started\nconnecting with token <masked>\n",
    );
  });

  it(
    "fails clearly when the namespace does not exist: a cluster of the repository not applied, an unknown " + "cluster",
    async () => {
      const r = await vc([
        "debug",
        "collect",
        "team-b",
        "--output-filename",
        join(dir, "n.tar.gz"),
        "--kubeconfig",
        server.kubeconfigPath,
        "--repo",
        join(dir, "repo"),
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.equal(
        'error: host namespace vc-team-b not found (context "test"): is team-b applied? pass --namespace if it lives elsewhere\n',
      );
      const unknown = await vc([
        "debug",
        "collect",
        "nope",
        "--output-filename",
        join(dir, "n.tar.gz"),
        "--kubeconfig",
        server.kubeconfigPath,
        "--repo",
        join(dir, "repo"),
      ]);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.equal(
        `error: unknown cluster "nope": no folder clusters/nope in ${join(dir, "repo")} and no host namespace ` +
          `vc-nope on context "test" (pass --namespace if it lives elsewhere); cluster folders: team-a, team-b\n`,
      );
    },
  );
});

describe("ops: vc debug collect masks credentials only", function () {
  this.timeout(60_000);
  // Planted credentials, one of each kind the namespace of a virtual cluster holds.
  const ENV_PASSWORD = "env-Pa55word-4d1f";
  const ENV_TOKEN = "env-t0ken-77e2a9";
  const DB_URL_PASSWORD = "db-Url-pass-31c8";
  const DB_ENDPOINT = `postgres://vc:${DB_URL_PASSWORD}@db.internal.example:5432/vc`;
  const KUBE_TOKEN = "kube-bearer-token-5a7c1e0b9d";
  const VIRTUAL_CERT = clientCert(30, "vc-admin");
  const TLS = clientCert(30, "gateway.example");
  const BASIC_PASSWORD = "basic-Auth-9911";
  const SA_TOKEN =
    "eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLXZhbHVlLTEyMzQ";
  const pemBody = (pem: string) => pem.split("\n").filter((l) => l && !l.startsWith("-----"));
  let server: KubeServer;
  let dir: string;
  let x: string;
  const values = {
    controlPlane: {
      statefulSet: {
        resources: { requests: { cpu: "200m", memory: "512Mi" } },
        env: [
          { name: "LOG_LEVEL", value: "debug" },
          { name: "FEATURE_GATES", value: "SyncLabels=true,ControlPlaneRestarts=false" },
          { name: "DB_PASSWORD", value: ENV_PASSWORD },
          { name: "API_TOKEN", value: ENV_TOKEN },
        ],
      },
      backingStore: { database: { external: { enabled: true, endpoint: DB_ENDPOINT } } },
    },
  };
  const LOG = [
    "I1121 10:00:00 starting syncer for virtual cluster team-a in namespace vc-team-a",
    "I1121 10:00:01 loaded values: controlPlane.statefulSet.resources.requests.cpu=200m " +
      "backingStore.database.external.enabled=true",
    "I1121 10:00:02 secretName=vc-config-team-a secretKeyRef key=values.yaml mounted at /etc/vc/values.yaml",
    "I1121 10:00:03 password reset not needed; key rotation disabled; private network 10.0.0.0/8",
    "I1121 10:00:04 LOG_LEVEL=debug FEATURE_GATES=SyncLabels=true,ControlPlaneRestarts=false",
    "I1121 10:00:05 apiserver certificate CN=vc-admin, service team-a.vc-team-a.svc:443",
  ];
  const LEAKS = [
    `I1121 10:00:06 connecting to ${DB_ENDPOINT}`,
    `I1121 10:00:07 env DB_PASSWORD=${ENV_PASSWORD} API_TOKEN=${ENV_TOKEN}`,
    `I1121 10:00:08 retrying with ${ENV_PASSWORD} and ${DB_URL_PASSWORD}`,
    `I1121 10:00:09 kubeconfig token ${KUBE_TOKEN}`,
    `I1121 10:00:10 client certificate ${b64(VIRTUAL_CERT.cert)}`,
    `I1121 10:00:11 client key line ${pemBody(VIRTUAL_CERT.key)[0]}`,
    `I1121 10:00:12 tls key ${pemBody(TLS.key)[0]}`,
    `I1121 10:00:13 basic auth ${BASIC_PASSWORD}`,
    `I1121 10:00:14 service account ${SA_TOKEN}`,
    TLS.key.trimEnd(),
  ];

  before(async () => {
    server = await startKubeServer({ namespaces: ["default", NS] });
    seed(server);
    const { configText } = await import("../../src/render/secrets.js");
    const { effectiveValues } = await import("../../src/validate/values.js");
    const kubeconfig = dump({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "vc",
          cluster: { server: "https://team-a.vc-team-a.svc:443", "certificate-authority-data": b64(TLS.cert) },
        },
      ],
      users: [
        {
          name: "vc-admin",
          user: {
            token: KUBE_TOKEN,
            "client-certificate-data": b64(VIRTUAL_CERT.cert),
            "client-key-data": b64(VIRTUAL_CERT.key),
          },
        },
      ],
      contexts: [{ name: "vc", context: { cluster: "vc", user: "vc-admin" } }],
      "current-context": "vc",
    });
    const secret = (name: string, data: Record<string, string>, type = "Opaque") =>
      server.put({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: NS },
        type,
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
      });
    secret("vc-team-a", { config: kubeconfig });
    secret("vc-config-team-a", { "values.yaml": configText(effectiveValues(values), "team-a") });
    secret("vc-database-team-a", { endpoint: DB_ENDPOINT });
    secret("gateway-cert", { "tls.crt": TLS.cert, "tls.key": TLS.key }, "kubernetes.io/tls");
    secret("registry-login", { username: "vc", password: BASIC_PASSWORD }, "kubernetes.io/basic-auth");
    secret(
      "default-token-x1",
      { token: SA_TOKEN, namespace: NS, "ca.crt": TLS.cert },
      "kubernetes.io/service-account-token",
    );
    server.setPodLog(NS, "team-a-0", "syncer", `${[...LOG, ...LEAKS].join("\n")}\n`);
    dir = tempDir();
    mkdirSync(join(dir, "repo/clusters/team-a"), { recursive: true });
    writeFileSync(join(dir, "repo/clusters/team-a/values.yaml"), dump(values));
    const out = join(dir, "bundle.tar.gz");
    const r = await vc([
      "debug",
      "collect",
      "team-a",
      "--output-filename",
      out,
      "--kubeconfig",
      server.kubeconfigPath,
      "--repo",
      join(dir, "repo"),
    ]);
    expect(r.code, r.stderr).to.equal(0);
    x = join(dir, "x");
    mkdirSync(x);
    execFileSync("tar", ["xzf", out, "-C", x]);
  });
  after(async () => server?.close());
  const read = (f: string) => readFileSync(join(x, "debug", f), "utf8");

  it("config.yaml reads as written, credentials masked", async () => {
    const { effectiveValues } = await import("../../src/validate/values.js");
    const { maskValues } = await import("../../src/model/secrets.js");
    expect(read("config.yaml")).not.to.contain("<masked>:");
    const config = load(read("config.yaml")) as {
      controlPlane: { statefulSet: { env: unknown[] }; backingStore: unknown };
    };
    expect(config).to.deep.equal(JSON.parse(JSON.stringify(maskValues(effectiveValues(values)))));
    expect(config.controlPlane.statefulSet.env).to.deep.equal([
      { name: "LOG_LEVEL", value: "debug" },
      { name: "FEATURE_GATES", value: "SyncLabels=true,ControlPlaneRestarts=false" },
      { name: "DB_PASSWORD", value: "<masked>" },
      { name: "API_TOKEN", value: "<masked>" },
    ]);
  });

  it("logs keep every line without a credential as written, and mask each planted credential", () => {
    const lines = read("logs/team-a-0/syncer.log").split("\n");
    expect(lines.slice(0, LOG.length)).to.deep.equal(LOG);
    // The database endpoint is a credential as a whole (model/secrets.ts).
    expect(lines[LOG.length]).to.equal("I1121 10:00:06 connecting to <masked>");
    expect(lines[LOG.length + 1]).to.equal("I1121 10:00:07 env DB_PASSWORD=<masked> API_TOKEN=<masked>");
    expect(lines[LOG.length + 2]).to.equal("I1121 10:00:08 retrying with <masked> and <masked>");
    expect(lines[LOG.length + 3]).to.equal("I1121 10:00:09 kubeconfig token <masked>");
  });

  it("no planted credential (nor its base64 form) is anywhere in the bundle", () => {
    const planted = [
      ENV_PASSWORD,
      ENV_TOKEN,
      DB_URL_PASSWORD,
      DB_ENDPOINT,
      KUBE_TOKEN,
      BASIC_PASSWORD,
      SA_TOKEN,
      b64(VIRTUAL_CERT.cert),
      b64(VIRTUAL_CERT.key),
      ...pemBody(VIRTUAL_CERT.key),
      ...pemBody(TLS.key),
    ];
    for (const f of files(x)) {
      const text = readFileSync(join(x, f), "utf8");
      for (const secret of planted) {
        expect(text, `${f} holds ${secret.slice(0, 16)}...`).not.to.contain(secret);
        expect(text, `${f} holds the base64 of ${secret.slice(0, 16)}...`).not.to.contain(b64(secret));
      }
    }
  });

  it("object files keep what is not a credential", () => {
    expect(read("statefulset.yaml")).to.contain("name: syncer").and.contain("value: debug").and.contain("team-a");
    expect(read("summary")).to.contain("virtual cluster: team-a").and.contain("host namespace:  vc-team-a");
    expect(read("services.yaml")).to.contain("team-a");
    expect(read("pvcs.yaml")).to.contain("data-team-a-0");
  });
});

describe("ops: vc debug shell", function () {
  this.timeout(60_000);
  let server: KubeServer;
  let host: KubeHost;
  before(async () => {
    server = await startKubeServer({ namespaces: ["default", NS] });
    seed(server);
    host = new KubeHost(KubeClient.open({ kubeconfig: server.kubeconfigPath }));
  });
  after(async () => {
    host?.close();
    await server?.close();
  });

  it(
    "runs an interactive session in <name>-0/syncer with a TTY, forwarding input, output, resizes and the " +
      "exit code",
    async () => {
      const sessions: ExecSession[] = [];
      const sizes: Array<{ width: number; height: number }> = [];
      server.onExec((s) => {
        sessions.push(s);
        s.onResize((size) => sizes.push(size));
        s.stdout.write("$ ");
        s.stdin!.on("data", (d: Buffer) => {
          const line = d.toString().trim();
          if (line.startsWith("exit")) s.exit(Number(line.split(" ")[1]));
          else s.stdout.write(`you said ${line}\n$ `);
        });
      });
      const stdin = new PassThrough();
      let output = "";
      const terminal = Object.assign(new Writable({ write: (c, _e, cb) => ((output += String(c)), cb()) }), {
        columns: 80,
        rows: 24,
      });
      const done = debugShell(host, {
        cluster: "team-a",
        namespace: NS,
        command: ["sh"],
        stdin,
        stdout: terminal,
        tty: true,
      });
      await waitFor(() => output.includes("$ "));
      stdin.write("hello\n");
      await waitFor(() => output.includes("you said hello"));
      terminal.columns = 120;
      terminal.rows = 40;
      terminal.emit("resize");
      await waitFor(() => sizes.length === 2);
      stdin.write("exit 3\n");
      expect(await done).to.equal(3);
      expect(sessions[0]).to.deep.include({
        namespace: NS,
        pod: "team-a-0",
        container: "syncer",
        command: ["sh"],
        tty: true,
      });
      expect(sizes).to.deep.equal([
        { width: 80, height: 24 },
        { width: 120, height: 40 },
      ]);
    },
  );

  it("as the vc process with piped stdin: no TTY, stdout and stderr apart, the shell's exit code", async () => {
    server.onExec((s) => {
      let input = "";
      s.stdin!.on("data", (d: Buffer) => (input += d.toString()));
      s.stdin!.on("end", () => {
        s.stdout.write(`ran: ${input.trim()} (tty ${s.tty})\n`);
        s.stderr.write("a warning\n");
        s.exit(4);
      });
    });
    const r = await vcProcess(["debug", "shell", "team-a", "-n", NS, "--kubeconfig", server.kubeconfigPath], {
      input: "ls /data\n",
    });
    expect(r.stdout).to.equal("ran: ls /data (tty false)\n");
    expect(r.stderr).to.equal("a warning\n");
    expect(r.code).to.equal(4);
  });

  it("refuses clearly when the pod is not running or absent", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "team-b-0", namespace: NS },
      spec: { containers: [{ name: "syncer", image: "x" }] },
      status: {
        phase: "Pending",
        containerStatuses: [{ name: "syncer", state: { waiting: { reason: "ImagePullBackOff" } } }],
      },
    });
    let err: unknown;
    await debugShell(host, {
      cluster: "team-b",
      namespace: NS,
      command: ["sh"],
      stdin: new PassThrough(),
      stdout: new PassThrough(),
    }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(ShellError);
    expect((err as Error).message).to.equal(
      "pod vc-team-a/team-b-0 is Pending (syncer: ImagePullBackOff), not Running: no shell possible; run vc " +
        "doctor team-b",
    );
    const r = await vc(["debug", "shell", "team-c", "-n", NS, "--kubeconfig", server.kubeconfigPath]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal(
      `error: pod ${NS}/team-c-0 not found: the control plane of team-c is not running (scaled to 0, or not ` +
        `applied); run vc doctor team-c\n`,
    );
  });

  it("says the server's reason when it refuses the exec, as kubectl does, not only its HTTP status", async () => {
    server.addUser("pod-reader", [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"], namespaces: [NS] }]);
    const kubeconfig = server.writeKubeconfig({ token: "pod-reader", context: "pod-reader" });
    const r = await vc(["debug", "shell", "team-a", "-n", NS, "--kubeconfig", kubeconfig], { env: {} });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.match(
      new RegExp(`^error: cannot open a shell in ${NS}/team-a-0: HTTP 403: pods "team-a-0" is forbidden: .*exec`),
    );
    expect(r.stderr).to.not.contain("Unexpected server response");
  });
});

async function waitFor(cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}
