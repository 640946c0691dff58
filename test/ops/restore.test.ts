// vc restore against the API test server (the host) and Debian's docker-registry; the test plays the kubelet.
import { putRecord, recordConfigMap } from "../support/records.js";
import { expect } from "chai";
import type { KubeObject } from "../../src/kube/object.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { requireRegistry, startRegistry, type TestRegistry } from "../support/oci-registry.js";
import { RegistryClient } from "../../src/ops/oci/client.js";
import { OCI_MANIFEST, pushBackup } from "../../src/ops/oci/backup.js";
import { KubeHost } from "../../src/ops/host.js";
import { KubeClient } from "../../src/host/client.js";
import { restore, RestoreError } from "../../src/ops/restore.js";
import { SUSPEND_ANNOTATION } from "../../src/ops/suspend.js";
import { vc } from "./helpers.js";
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

const NS = "vc-team-a";

function statefulSet(persistence = true): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "team-a", namespace: NS },
    spec: {
      replicas: 1,
      serviceName: "team-a-headless",
      selector: { matchLabels: { release: "team-a", app: "vc" } },
      template: {
        metadata: { labels: { release: "team-a", app: "vc" } },
        spec: {
          serviceAccountName: "vc-team-a",
          containers: [{ name: "syncer", image: "registry.example/vc/syncer:1.2.3" }],
        },
      },
      ...(persistence
        ? {
            volumeClaimTemplates: [
              {
                metadata: { name: "data" },
                spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
              },
            ],
          }
        : {}),
    },
  };
}

/** Plays the kubelet and the StatefulSet controller: stops pods at 0 replicas, runs the restore pod to `outcome`. */
function kubelet(server: KubeServer, outcome: "Succeeded" | "Failed" | "stuck" | "never-stop") {
  const seen: { suspendedWhileRestoring?: boolean; restorePod?: KubeObject } = {};
  const timer = setInterval(() => {
    const sts = server.get("apps/v1", "StatefulSet", NS, "team-a");
    if ((sts?.spec as { replicas?: number } | undefined)?.replicas === 0 && outcome !== "never-stop")
      server.remove("v1", "Pod", NS, "team-a-0");
    const pod = server.get("v1", "Pod", NS, "team-a-restore");
    if (pod && !(pod.status as { phase?: string } | undefined)?.phase && outcome !== "stuck") {
      seen.restorePod = pod;
      seen.suspendedWhileRestoring = !!recordConfigMap(server, "team-a")?.metadata.annotations?.[SUSPEND_ANNOTATION];
      server.setPodLog(
        NS,
        "team-a-restore",
        "restore",
        outcome === "Succeeded" ? "restored 1234 keys\n" : "snapshot corrupt: checksum mismatch\n",
      );
      server.put({ ...pod, status: { phase: outcome === "Succeeded" ? "Succeeded" : "Failed" } });
    }
  }, 10);
  return { seen, stop: () => clearInterval(timer) };
}

describe("ops: vc restore", function () {
  before(function () {
    requireRegistry(this);
  });
  this.timeout(60_000);
  let server: KubeServer;
  let registry: TestRegistry;
  let host: KubeHost;
  let digest: string;
  let ref: string;
  let sim: ReturnType<typeof kubelet> | undefined;

  before(async () => {
    registry = await startRegistry();
    const client = new RegistryClient(registry.host);
    digest = await pushBackup(
      client,
      "backups/team-a",
      "nightly",
      { cluster: "team-a", createdAt: "2026-11-21T02:00:00Z", store: "kvstore" },
      Buffer.from("snapshot bytes"),
    );
    const cfg = await client.pushBlob("backups/team-a", Buffer.from("{}"));
    await client.pushManifest(
      "backups/team-a",
      "not-a-backup",
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: OCI_MANIFEST,
          config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: cfg, size: 2 },
          layers: [],
        }),
      ),
      OCI_MANIFEST,
    );
    ref = `oci://${registry.host}/backups/team-a:nightly`;
  });
  after(async () => registry?.close());

  beforeEach(async () => {
    server = await startKubeServer({ namespaces: ["default", NS] });
    server.put(statefulSet());
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "team-a-0", namespace: NS, labels: { release: "team-a", app: "vc" } },
      spec: { containers: [{ name: "syncer", image: "x" }] },
      status: { phase: "Running" },
    });
    putRecord(server, { cluster: "team-a", hostNamespace: NS });
    host = new KubeHost(KubeClient.open({ kubeconfig: server.kubeconfigPath }));
    server.resetRequests();
  });
  afterEach(async () => {
    sim?.stop();
    sim = undefined;
    host.close();
    await server.close();
  });

  const replicas = () => (server.get("apps/v1", "StatefulSet", NS, "team-a")!.spec as { replicas: number }).replicas;
  const suspended = () => recordConfigMap(server, "team-a")!.metadata.annotations?.[SUSPEND_ANNOTATION];
  const writes = () => server.requests.filter((r) => r.method !== "GET").length;

  it(
    "restores: suspends, scales to 0, runs the restore pod with the pinned reference, reports its logs, scales " +
      "back, resumes",
    async () => {
      sim = kubelet(server, "Succeeded");
      const lines: string[] = [];
      const report = await restore(host, {
        cluster: "team-a",
        namespace: NS,
        reference: ref,
        pollMs: 10,
        log: (l) => lines.push(l),
      });
      expect(report.backup.pinned).to.equal(`${registry.host}/backups/team-a@${digest}`);
      expect(report.logs).to.equal("restored 1234 keys\n");
      expect(lines.join("\n")).to.contain("restore pod succeeded; logs:\nrestored 1234 keys");
      expect(sim.seen.suspendedWhileRestoring).to.equal(true);
      const pod = sim.seen.restorePod!;
      const c = (pod.spec as { containers: Array<{ image: string; args: string[] }> }).containers[0]!;
      expect(c.image).to.equal("registry.example/vc/syncer:1.2.3");
      expect(c.args).to.deep.equal([
        "restore",
        `--from=${registry.host}/backups/team-a@${digest}`,
        "--store=kvstore",
        "--data-dir=/data",
      ]);
      expect((pod.spec as { volumes: unknown[] }).volumes).to.deep.equal([
        { name: "data", persistentVolumeClaim: { claimName: "data-team-a-0" } },
      ]);
      expect(replicas()).to.equal(1);
      expect(suspended()).to.equal(undefined);
      expect(server.get("v1", "Pod", NS, "team-a-restore")).to.equal(undefined);
      expect(
        server.countRequests({ method: "PATCH", path: `/apis/apps/v1/namespaces/${NS}/statefulsets/team-a/scale` }),
      ).to.equal(2);
    },
  );

  for (const [what, reference, message] of [
    [
      "a digest that does not match",
      () => `${registry.host}/backups/team-a@sha256:${"f".repeat(64)}`,
      /backups\/team-a@sha256:f+ not found in the registry: check the repository and digest/,
    ],
    [
      "a missing tag",
      () => `oci://${registry.host}/backups/team-a:missing`,
      /not found in the registry: check the repository and tag/,
    ],
    [
      "an artifact that is not a backup",
      () => `${registry.host}/backups/team-a:not-a-backup`,
      /the artifact type is "application\/vnd.oci.image.config.v1\+json", not a vc backup/,
    ],
    ["an unreachable registry", () => "oci://127.0.0.1:1/backups/team-a:nightly", /cannot reach registry 127.0.0.1:1/],
  ] as const) {
    it(`refuses ${what} before touching the host`, async () => {
      let err: unknown;
      await restore(host, { cluster: "team-a", namespace: NS, reference: reference(), pollMs: 10 }).catch(
        (e) => (err = e),
      );
      expect((err as Error)?.message).to.match(message);
      expect(writes()).to.equal(0);
      expect(server.countRequests()).to.equal(0);
      expect(replicas()).to.equal(1);
    });
  }

  it("refuses a kvstore backup when the control plane has no persistent volume, changing nothing", async () => {
    server.put(statefulSet(false));
    server.resetRequests();
    let err: unknown;
    await restore(host, { cluster: "team-a", namespace: NS, reference: ref, pollMs: 10 }).catch((e) => (err = e));
    expect(err).to.be.instanceOf(RestoreError);
    expect((err as Error).message).to.match(/no persistent volume .* Nothing was changed/);
    expect(writes()).to.equal(0);
  });

  it("a failing restore pod: logs reported, control plane scaled back, reconciliation resumed, pod kept", async () => {
    sim = kubelet(server, "Failed");
    const lines: string[] = [];
    let err: unknown;
    await restore(host, {
      cluster: "team-a",
      namespace: NS,
      reference: ref,
      pollMs: 10,
      log: (l) => lines.push(l),
    }).catch((e) => (err = e));
    expect((err as Error).message).to.match(
      /the restore pod vc-team-a\/team-a-restore failed .*; scaled back to 1, reconciliation resumed: the cluster runs on its previous data/,
    );
    expect(lines.join("\n")).to.contain("snapshot corrupt: checksum mismatch");
    expect(replicas()).to.equal(1);
    expect(suspended()).to.equal(undefined);
    expect((server.get("v1", "Pod", NS, "team-a-restore")!.status as { phase: string }).phase).to.equal("Failed");
  });

  it("a control plane that does not stop: scaled back and resumed, no restore pod", async () => {
    sim = kubelet(server, "never-stop");
    let err: unknown;
    await restore(host, { cluster: "team-a", namespace: NS, reference: ref, pollMs: 10, stopTimeoutMs: 200 }).catch(
      (e) => (err = e),
    );
    expect((err as Error).message).to.match(
      /did not stop in time \(team-a-0 still present\); scaled back to 1, reconciliation resumed/,
    );
    expect(replicas()).to.equal(1);
    expect(suspended()).to.equal(undefined);
    expect(server.get("v1", "Pod", NS, "team-a-restore")).to.equal(undefined);
  });

  it("a restore pod that does not finish in time: stays scaled down and suspended, says what to do", async () => {
    sim = kubelet(server, "stuck");
    let err: unknown;
    await restore(host, { cluster: "team-a", namespace: NS, reference: ref, pollMs: 10, restoreTimeoutMs: 200 }).catch(
      (e) => (err = e),
    );
    expect((err as Error).message).to.match(
      /has not finished .* stays at 0 replicas .* kubectl -n vc-team-a scale statefulset team-a --replicas=1/,
    );
    expect(replicas()).to.equal(0);
    expect(suspended()).to.match(/^vc restore from /);
  });

  it("puts back a suspension that was there before instead of lifting it", async () => {
    const cm = recordConfigMap(server, "team-a")!;
    server.put({ ...cm, metadata: { ...cm.metadata, annotations: { [SUSPEND_ANNOTATION]: "maintenance by alice" } } });
    sim = kubelet(server, "Succeeded");
    const lines: string[] = [];
    await restore(host, { cluster: "team-a", namespace: NS, reference: ref, pollMs: 10, log: (l) => lines.push(l) });
    expect(sim.seen.suspendedWhileRestoring).to.equal(true);
    expect(suspended()).to.equal("maintenance by alice");
    expect(lines).to.include("reconciliation left suspended as before (maintenance by alice)");
    expect(replicas()).to.equal(1);
  });

  it(
    "interrupted (Ctrl-C) while the restore pod runs: left scaled down and suspended; while " + "stopping: undone",
    async () => {
      sim = kubelet(server, "stuck");
      const ctl = new AbortController();
      const waiting = restore(host, {
        cluster: "team-a",
        namespace: NS,
        reference: ref,
        pollMs: 10,
        signal: ctl.signal,
      }).catch((e: Error) => e);
      while (!server.get("v1", "Pod", NS, "team-a-restore")) await new Promise((r) => setTimeout(r, 10));
      ctl.abort();
      expect(((await waiting) as Error).message).to.match(
        /^interrupted: the restore pod vc-team-a\/team-a-restore has not finished .* stays at 0 replicas/,
      );
      expect(replicas()).to.equal(0);
      expect(suspended()).to.match(/^vc restore from /);
      sim.stop();

      server.remove("v1", "Pod", NS, "team-a-restore");
      const sts = server.get("apps/v1", "StatefulSet", NS, "team-a")!;
      server.put({ ...sts, spec: { ...(sts.spec as object), replicas: 1 } });
      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "team-a-0", namespace: NS, labels: { release: "team-a", app: "vc" } },
        spec: { containers: [{ name: "syncer", image: "x" }] },
        status: { phase: "Running" },
      });
      sim = kubelet(server, "never-stop");
      const ctl2 = new AbortController();
      const stopping = restore(host, {
        cluster: "team-a",
        namespace: NS,
        reference: ref,
        pollMs: 10,
        signal: ctl2.signal,
      }).catch((e: Error) => e);
      while (replicas() !== 0) await new Promise((r) => setTimeout(r, 10));
      ctl2.abort();
      expect(((await stopping) as Error).message).to.match(
        /^interrupted while the control plane was stopping; scaled back to 1, reconciliation left suspended as before \(vc restore from /,
      );
      expect(replicas()).to.equal(1);
    },
  );

  it("SIGTERM while the control plane is stopping undoes the steps as Ctrl-C does, and says so", async () => {
    sim = kubelet(server, "never-stop");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(ROOT, "src/cli/main.ts"),
        "restore",
        "team-a",
        ref,
        "--kubeconfig",
        server.kubeconfigPath,
      ],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => void (stderr += b.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    while (replicas() !== 0) await new Promise((r) => setTimeout(r, 20));
    expect(suspended()).to.match(/^vc restore from /);
    child.kill("SIGTERM");
    const code = await exited;
    expect(stderr).to.match(/interrupted while the control plane was stopping; scaled back to 1/);
    expect(code, stderr).to.equal(2);
    expect(replicas()).to.equal(1);
    expect(suspended()).to.equal(undefined);
  });

  it("refuses while another restore pod runs", async () => {
    server.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "team-a-restore", namespace: NS },
      spec: { containers: [{ name: "restore", image: "x" }] },
      status: { phase: "Running" },
    });
    server.resetRequests();
    let err: unknown;
    await restore(host, { cluster: "team-a", namespace: NS, reference: ref, pollMs: 10 }).catch((e) => (err = e));
    expect((err as Error).message).to.equal(
      "a restore pod vc-team-a/team-a-restore is already Running: wait for it or delete it. Nothing was changed.",
    );
    expect(writes()).to.equal(0);
  });

  it("runs as vc restore: exit 0 on success, exit 2 with a message (no stack) on failure", async () => {
    sim = kubelet(server, "Succeeded");
    const ok = await vc(["restore", "team-a", ref, "--kubeconfig", server.kubeconfigPath]);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.equal(
      `restored team-a (namespace vc-team-a) from ${registry.host}/backups/team-a@${digest}; control plane back at ` +
        `1 replica(s)\n`,
    );
    const bad = await vc(["restore", "team-a", "not a reference", "--kubeconfig", server.kubeconfigPath]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^error: invalid OCI reference "not a reference"/);
    expect(bad.stderr).not.to.contain("    at ");
  });
});

describe("ops: vc restore from a registry with credentials", function () {
  before(function () {
    requireRegistry(this);
  });
  this.timeout(60_000);
  it("passes the credentials to the restore pod in a dockerconfigjson Secret and deletes it afterwards", async () => {
    const credentials = { username: "backup", password: "registry-pass-42" };
    const registry = await startRegistry({ auth: "token", ...credentials });
    const server = await startKubeServer({ namespaces: ["default", NS] });
    const host = new KubeHost(KubeClient.open({ kubeconfig: server.kubeconfigPath }));
    try {
      await pushBackup(
        new RegistryClient(registry.host, { credentials }),
        "backups/team-a",
        "v1",
        { cluster: "team-a", createdAt: "2026-11-21T02:00:00Z", store: "kvstore" },
        Buffer.from("snap"),
      );
      server.put(statefulSet());
      let secretSeen: KubeObject | undefined;
      let podSeen: KubeObject | undefined;
      const timer = setInterval(() => {
        const pod = server.get("v1", "Pod", NS, "team-a-restore");
        if (pod && !(pod.status as { phase?: string } | undefined)?.phase) {
          podSeen = pod;
          secretSeen = server.get("v1", "Secret", NS, "team-a-restore-registry");
          server.put({ ...pod, status: { phase: "Succeeded" } });
        }
      }, 10);
      const lines: string[] = [];
      try {
        await restore(host, {
          cluster: "team-a",
          namespace: NS,
          reference: `${registry.host}/backups/team-a:v1`,
          credentials,
          pollMs: 10,
          log: (l) => lines.push(l),
        });
      } finally {
        clearInterval(timer);
      }
      expect(secretSeen?.type).to.equal("kubernetes.io/dockerconfigjson");
      const config = JSON.parse(
        Buffer.from((secretSeen!.data as Record<string, string>)[".dockerconfigjson"]!, "base64").toString(),
      ) as { auths: Record<string, { auth: string }> };
      expect(Buffer.from(config.auths[registry.host]!.auth, "base64").toString()).to.equal("backup:registry-pass-42");
      const spec = podSeen!.spec as {
        containers: Array<{ env: Array<{ name: string; value: string }> }>;
        volumes: Array<{ name: string; secret?: { secretName: string } }>;
      };
      expect(spec.containers[0]!.env).to.deep.equal([{ name: "DOCKER_CONFIG", value: "/etc/vc/registry" }]);
      expect(spec.volumes.find((v) => v.name === "registry")?.secret?.secretName).to.equal("team-a-restore-registry");
      expect(server.get("v1", "Secret", NS, "team-a-restore-registry")).to.equal(undefined);
      expect(lines.join("\n")).not.to.contain("registry-pass-42");
    } finally {
      host.close();
      await server.close();
      await registry.close();
    }
  });
});
