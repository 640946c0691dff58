// The doctor checks as pure functions over host snapshots: every row of the coverage table found, a healthy cluster
// clean.
import { expect } from "chai";
import { checkIds, COVERAGE, RESOLUTIONS, ROWS } from "../../src/ops/doctor/coverage.js";
import { diagnose, doctorExitCode } from "../../src/ops/doctor/index.js";
import { formatFindings } from "../../src/ops/doctor/format.js";
import { remarks } from "../../src/ops/doctor/context.js";
import { certificateFacts, covers } from "../../src/ops/doctor/tls-cert.js";
import { servingCertificate } from "../support/certs.js";
import { pendingCauses, type PodLike } from "../../src/health/pod-causes.js";
import type { Finding, HostSnapshot } from "../../src/ops/doctor/types.js";
import { healthy, NS, obj, pod, SCENARIOS } from "./doctor-fixtures.js";
import { metricsAccessQuestions } from "../../src/ops/doctor/metrics-rbac.js";
import { hostApiGroupOf } from "../../src/ops/doctor/facts.js";

const key = (c: { row: string; check: string; severity: string }) => `${c.row}|${c.check}|${c.severity}`;

function broken(name: string): HostSnapshot {
  const s = healthy();
  SCENARIOS[name]!(s);
  return s;
}

/**
 * The coverage entries a finding may stand for: same check and severity, and the row's resolution leads its resolution.
 */
const rowsOf = (f: Finding) =>
  COVERAGE.filter(
    (c) => c.check === f.check && c.severity === f.severity && f.resolution.startsWith(ROWS[c.row].resolution),
  );

describe("ops/doctor", () => {
  it("finds nothing on a healthy cluster", () => {
    expect(diagnose(healthy())).to.deep.equal([]);
  });

  describe("every entry of the coverage table has a scenario that makes its check fire", () => {
    for (const c of COVERAGE) {
      it(`${ROWS[c.row].condition}: ${c.check} (${c.severity})`, () => {
        const scenario = SCENARIOS[key(c)];
        expect(scenario, `no scenario for ${key(c)} in test/ops/doctor-fixtures.ts`).to.be.a("function");
        const found = diagnose(broken(key(c)));
        const hit = found.filter((f) => f.check === c.check && f.severity === c.severity);
        expect(hit, JSON.stringify(found, null, 1)).to.not.be.empty;
        for (const f of hit) expect(f.resolution.startsWith(ROWS[c.row].resolution), f.resolution).to.equal(true);
        // Whatever else the scenario sets off is in the table too, with its row's resolution.
        for (const f of found) expect(rowsOf(f), JSON.stringify(f)).to.not.be.empty;
      });
    }
  });

  it(
    "has no scenario for an entry the table does not have, and covers all 13 rows of section 7 and the states of " +
      "section 3",
    () => {
      const entries = new Set(COVERAGE.map(key));
      expect(Object.keys(SCENARIOS).filter((k) => !entries.has(k))).to.deep.equal([]);
      const rows = Object.entries(ROWS);
      expect(rows.filter(([, r]) => r.section === "7")).to.have.length(13);
      for (const [row] of rows)
        expect(
          COVERAGE.some((c) => c.row === row),
          row,
        ).to.equal(true);
      for (const state of ["`Pending`", "`CrashLoopBackOff`", "`OOMKilled`", "restart"])
        expect(
          rows.some(([, r]) => r.section === "3" && r.condition.includes(state)),
          state,
        ).to.equal(true);
    },
  );

  it(
    "every resolution the spec lists for a row is performed by a check or named as not performed, with " + "the reason",
    () => {
      const ids = new Set(checkIds());
      for (const [row, spec] of Object.entries(ROWS) as Array<[keyof typeof ROWS, (typeof ROWS)[keyof typeof ROWS]]>) {
        const steps = RESOLUTIONS[row];
        let rest: string = spec.resolution;
        for (const s of steps) {
          expect(rest.includes(s.step), `${row}: "${s.step}" is not in "${spec.resolution}"`).to.equal(true);
          rest = rest.replace(s.step, "");
          expect(s.by?.length || s.not, `${row}: "${s.step}" is neither performed nor explained`).to.be.ok;
          for (const id of s.by ?? []) expect(ids.has(id), `${row}: unknown check ${id}`).to.equal(true);
        }
        expect(rest, `${row}: steps not accounted for`).to.match(/^[\s,;]*$/);
        // Every check that reports under the row performs one of its steps.
        for (const c of COVERAGE.filter((x) => x.row === row))
          expect(
            steps.some((s) => s.by?.includes(c.check)),
            `${row}: ${c.check} performs none of its steps`,
          ).to.equal(true);
      }
    },
  );

  it("names each of the four causes of a Pending pod", () => {
    for (const [scenario, cause] of [
      ["pending-resources|pod-pending|error", "insufficient-resources"],
      ["pending-volume-claim|pod-pending|error", "unbound-volume-claim"],
      ["pending-image-pull|pod-pending|error", "image-pull"],
      ["pending-node-selector|pod-pending|error", "node-selector-or-taint"],
    ] as const) {
      const [f] = diagnose(broken(scenario)).filter((x) => x.check === "pod-pending");
      expect(f!.message.split(" ")[1], scenario).to.equal(cause);
    }
  });

  it("sees an unbound claim through the claim's phase", () => {
    const s = healthy();
    s.pvcs = [obj("v1", "PersistentVolumeClaim", "data-team-a-0", { status: { phase: "Pending" } })];
    const p = pod("team-a-0", {
      spec: {
        containers: [{ name: "syncer" }],
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-team-a-0" } }],
      },
      status: { phase: "Pending" },
    });
    expect(pendingCauses(s, p as unknown as PodLike)).to.deep.equal([
      { cause: "unbound-volume-claim", detail: "volume claim data-team-a-0 is Pending" },
    ]);
  });

  it("tells the causes of CrashLoopBackOff apart, with the memory limit for memory exhaustion", () => {
    const s = broken("crash-memory|crash-loop|error");
    (s.pods[1] as unknown as { spec: { containers: Array<Record<string, unknown>> } }).spec.containers[0]!.resources = {
      requests: { cpu: "1", memory: "1Gi" },
      limits: { memory: "256Mi" },
    };
    const [f] = diagnose(s);
    expect(f).to.include({ check: "crash-loop", severity: "error", object: `Pod ${NS}/web-x-default-x-team-a` });
    expect(f!.message).to.equal("container app in CrashLoopBackOff after 9 restarts, last terminated OOMKilled");
    expect(f!.resolution).to.match(
      /^memory exhaustion: raise the memory limit .*limits cpu 1000m \/ memory 2Gi.*; the memory limit is now 256Mi$/,
    );
    const cause = (scenario: string) => diagnose(broken(scenario)).find((x) => x.check === "crash-loop")!.message;
    expect(cause("crash-liveness|crash-loop|error")).to.equal(
      "container app in CrashLoopBackOff after 9 restarts, killed by its liveness probe: Container app failed " +
        "liveness probe, will be restarted",
    );
    expect(cause("crash-node-pressure|crash-loop|error")).to.equal(
      "container app in CrashLoopBackOff after 9 restarts, node pressure: Evicted: The node was low on resource: " +
        "memory.",
    );
    expect(cause("crash-application|crash-loop|error")).to.equal(
      "container app in CrashLoopBackOff after 9 restarts, application error, last terminated Error (exit code 1)",
    );
  });

  it(
    "reports high restarts only from 5 on, and not again for a container already reported as looping or " + "OOMKilled",
    () => {
      const s = broken("high-restarts|high-restarts|warning");
      expect(diagnose(s).map((f) => f.message)).to.deep.equal([
        "container app restarted 7 times, last terminated Error (exit code 2)",
      ]);
      (s.pods[1] as unknown as { status: { containerStatuses: Array<{ restartCount: number }> } }).status
        .containerStatuses[0]!.restartCount = 4;
      expect(diagnose(s)).to.deep.equal([]);
      expect(diagnose(broken("crash-application|crash-loop|error")).map((f) => f.check)).to.deep.equal(["crash-loop"]);
    },
  );

  it("checks the metrics API of the configured hostApiGroup and suggests RBAC on that group", () => {
    const f = diagnose(broken("metrics-forbidden|metrics-forbidden|error"));
    expect(f.map((x) => x.message)).to.deep.equal([
      `HTTP 403 Forbidden: system:serviceaccount:vc-system:vc-metrics-proxy may not get, list pods.metrics.k8s.io ` +
        `in ${NS}`,
    ]);
    expect(f[0]!.resolution).to.match(/^grant RBAC to the service account; apply deploy\/metrics-proxy\/rbac.yaml/);
    // The cluster's own proxy of before, while it runs, is the reader asked about, and told how to grant it.
    const legacy = broken("metrics-not-available|metrics-proxy|note");
    legacy.access = [...metricsAccessQuestions(legacy)].map((q) => ({
      ...q,
      allowed: !(q.group === "metrics.k8s.io" && q.resource === "pods"),
    }));
    const own = diagnose(legacy).find((x) => x.check === "metrics-forbidden")!;
    expect(own.message).to.contain(`system:serviceaccount:${NS}:vc-metrics-proxy-team-a`);
    expect(own.resolution).to.contain(`--serviceaccount=${NS}:vc-metrics-proxy-team-a`);
    // The shared proxy may not read the cluster's kubeconfig Secret: its Role is the cluster's to apply.
    const secret = healthy();
    for (const a of secret.access!) if (a.resource === "secrets") a.allowed = false;
    expect(diagnose(secret).map((x) => [x.check, x.object])).to.deep.equal([
      ["metrics-forbidden", `Secret ${NS}/vc-team-a`],
    ]);
    expect(diagnose(secret)[0]!.resolution).to.contain("vc-metrics-proxy-access-team-a");
    const missing = diagnose(broken("metrics-not-available|metrics-host-api|error"))[0]!;
    expect(missing).to.include({ object: "APIService v1beta1.metrics.k8s.io" });
    expect(missing.message).to.equal(
      "metrics not available: the host has no APIService v1beta1.metrics.k8s.io, so no metrics server serves " +
        "metrics.k8s.io there",
    );
    const s = healthy();
    s.metricsApiService = obj(
      "apiregistration.k8s.io/v1",
      "APIService",
      "v1beta1.metrics.k8s.io",
      { status: { conditions: [{ type: "Available", status: "False", reason: "FailedDiscoveryCheck" }] } },
      undefined,
    );
    expect(diagnose(s).map((x) => [x.message, x.resolution])).to.deep.equal([
      [
        "metrics not available (FailedDiscoveryCheck)",
        "verify host metrics server runs, verify integration is enabled, restart the control plane",
      ],
    ]);
  });

  it("without values, reads the host group from the shared proxy's --host-api-group, else its old proxy's", () => {
    const s = broken("metrics-forbidden|metrics-forbidden|error");
    s.values = undefined;
    s.liveValues = undefined;
    expect(diagnose(s).find((x) => x.check === "metrics-forbidden")!.message).to.contain("pods.metrics.k8s.io");
    // Neither values nor a shared proxy read: the group of the cluster's own proxy of before.
    const old = broken("metrics-not-available|metrics-proxy|note");
    old.values = undefined;
    old.liveValues = undefined;
    old.sharedProxy = undefined;
    (
      old.deployments[0] as unknown as { spec: { template: { spec: Record<string, unknown> } } }
    ).spec.template.spec.containers = [{ name: "metrics-proxy", args: ["--host-api-group", "metrics.example.io"] }];
    expect(hostApiGroupOf(old)).to.equal("metrics.example.io");
  });

  it("skips the metrics checks when the integration is off", () => {
    const s = healthy();
    s.values!.integrations.metricsServer.enabled = false;
    s.metricsApiService = undefined;
    s.initManifests = undefined;
    s.deployments = [];
    s.existingSecrets = ["mesh-system/a-cert"];
    for (const a of s.access!) if (a.serviceAccount.name === "vc-metrics-proxy-team-a") a.allowed = false;
    s.pods[1] = pod("web-x-default-x-team-a", { spec: { containers: [{ name: "app" }, { name: "mesh-proxy" }] } });
    expect(diagnose(s)).to.deep.equal([]);
  });

  it("the live configuration's mesh conflict is reported with the spec's error text", () => {
    const [f] = diagnose(broken("mesh-custom-resource|mesh-custom-resource|error"));
    expect(f).to.include({ object: `Secret ${NS}/vc-config-team-a` });
    expect(f!.message).to.equal(
      'the mesh integration is enabled but the mesh custom resource is also set in sync.toHost.customResources: "virtualservices.networking.mesh.io" (in the configuration the control plane runs with)',
    );
  });

  it(
    "a VirtualService routing to a missing service names the virtual service behind the host name; external hosts " +
      "are not checked",
    () => {
      const s = broken("mesh-not-effective|mesh-destination|error");
      for (const vs of [s.virtualServices[0]!, s.rendered![0]!])
        (vs.spec as { http: unknown[] }).http.push({ route: [{ destination: { host: "api.example.com" } }] });
      const [f] = diagnose(s);
      expect(f!.message).to.equal(
        `route destination ${"reviews-x-default-x-team-a"}.${NS}.svc.cluster.local names Service ` +
          `${NS}/reviews-x-default-x-team-a, which does not exist on the host (the virtual cluster's service reviews ` +
          `in namespace default: not synced)`,
      );
      expect(diagnose(s)).to.have.length(1);
    },
  );

  it(
    "reads svc.ns as a Service only where ns is a namespace of the cluster's mesh objects (the renderer's rule): " +
      "example.com is an external host",
    () => {
      const s = broken("mesh-not-effective|mesh-destination|error");
      const both = [s.virtualServices[0]!, s.rendered![0]!]; // the host's and the repository's (else it is reported as not synced)
      for (const vs of both)
        (vs.spec as { http: unknown[] }).http.push({
          route: [{ destination: { host: "example.com" } }],
          mirror: { host: "shop.io" },
        });
      expect(
        diagnose(s)
          .map((f) => f.message)
          .join("\n"),
      )
        .to.not.include("example.com")
        .and.not.include("shop.io");
      expect(diagnose(s)).to.have.length(1);
      // A two-label host in a namespace the mesh objects use (the host namespace, or the virtual namespace they were
      // rendered from) is a Service.
      for (const vs of both) {
        vs.metadata.annotations = { ...vs.metadata.annotations, "vc.orch.io/object-namespace": "default" }; // as vc renders it from namespace default
        (vs.spec as { http: unknown[] }).http.push({
          route: [{ destination: { host: `ghost.${NS}` } }, { destination: { host: "phantom.default" } }],
        });
      }
      const messages = diagnose(s).map((f) => f.message);
      expect(
        messages.some((m) => m.includes(`names Service ${NS}/ghost,`)),
        messages.join("\n"),
      ).to.equal(true);
      expect(
        messages.some((m) => m.includes("names Service default/phantom,")),
        messages.join("\n"),
      ).to.equal(true);
      expect(messages).to.have.length(3);
    },
  );

  it("the control plane without its pod quotes the StatefulSet's FailedCreate event", () => {
    const s = broken("connection|control-plane-pod|error");
    s.events.push(
      obj("v1", "Event", "sts.1", {
        involvedObject: { kind: "StatefulSet", name: "team-a" },
        reason: "FailedCreate",
        message:
          'create Pod team-a-0 in StatefulSet team-a failed error: pods "team-a-0" is forbidden: exceeded quota: vc-team-a',
      }),
    );
    const [f] = diagnose(s);
    expect(f!.message).to.equal(
      'the StatefulSet wants 1 replica(s) but pod team-a-0 does not exist: the virtual API server does not answer (last FailedCreate: create Pod team-a-0 in StatefulSet team-a failed error: pods "team-a-0" is forbidden: exceeded quota: vc-team-a)',
    );
    (s.statefulSet!.spec as { replicas: number }).replicas = 0;
    expect(diagnose(s)).to.deep.equal([]);
  });

  it("reports a syncer service account that may not manage pods in the host namespace, unless pod sync is off", () => {
    const s = broken("connection|syncer-rbac|error");
    const [f] = diagnose(s);
    expect(f!.message).to.equal(
      `system:serviceaccount:${NS}:vc-team-a may not create, delete pods in ${NS}: pod sync cannot work`,
    );
    s.values!.sync.toHost.pods.enabled = false;
    expect(diagnose(s)).to.deep.equal([]);
  });

  it("asks the authorizer only what the configuration needs; no answer (could not ask) is never a denial", () => {
    const s = healthy();
    expect(
      s
        .access!.map(
          (a) =>
            `${a.serviceAccount.name} ${a.verb} ` +
            `${a.resource}${a.group ? `.${a.group}` : ""}${a.namespace ? ` in ${a.namespace}` : ""}`,
        )
        .sort(),
    ).to.deep.equal([
      "vc-metrics-proxy get nodes.metrics.k8s.io",
      "vc-metrics-proxy get pods.metrics.k8s.io in vc-team-a",
      "vc-metrics-proxy get secrets in vc-team-a",
      "vc-metrics-proxy list nodes.metrics.k8s.io",
      "vc-metrics-proxy list pods.metrics.k8s.io in vc-team-a",
      "vc-team-a create pods in vc-team-a",
      "vc-team-a delete pods in vc-team-a",
      "vc-team-a get nodes",
      "vc-team-a get pods in vc-team-a",
      "vc-team-a list nodes",
      "vc-team-a list pods in vc-team-a",
    ]);
    s.access = undefined;
    s.unreadable = { access: "you may not create SubjectAccessReviews, so the permission checks could not be made" };
    expect(diagnose(s)).to.deep.equal([]);
    expect(formatFindings("team-a", NS, diagnose(s), s.unreadable)).to.contain(
      "not checked (access): you may not create SubjectAccessReviews, so the permission checks could not be made",
    );
  });

  it(
    "persistence off is a note until the control plane's pod was recreated (not on a container restart); an " +
      "external database needs none",
    () => {
      expect(diagnose(broken("state-loss|persistence|note")).map((f) => f.severity)).to.deep.equal(["note"]);
      expect(diagnose(broken("state-loss|persistence|warning"))[0]!.message).to.equal(
        "the embedded kvstore has no persistent volume and the control plane's pod was recreated (team-a-0 was " +
          "created 60 min after its StatefulSet): it began with an empty store, so the virtual cluster's state was reset",
      );
      const restarted = broken("state-loss|persistence|note");
      (restarted.pods[0] as unknown as { status: { containerStatuses: unknown[] } }).status.containerStatuses = [
        { name: "syncer", restartCount: 2, state: { running: {} } },
      ];
      const [kept] = diagnose(restarted);
      expect(kept).to.include({ severity: "note" });
      expect(kept!.message).to.contain("its container restarted 2 time(s), which keeps the store");
      const twice = broken("state-loss|persistence|note");
      for (const n of [1, 2])
        twice.events.push(
          obj("v1", "Event", `sts.${n}`, {
            involvedObject: { kind: "StatefulSet", name: "team-a" },
            reason: "SuccessfulCreate",
            message: "create Pod team-a-0 in StatefulSet team-a successful",
            lastTimestamp: `2026-01-01T1${n}:00:00Z`,
          }),
        );
      expect(diagnose(twice)[0]!.message).to.contain("(the StatefulSet created team-a-0 2 times)");
      const s = broken("state-loss|persistence|note");
      s.statefulSet = undefined;
      s.pods = s.pods.filter((p) => p.metadata.name !== "team-a-0");
      s.values!.controlPlane.backingStore.kvstore.persistence.enabled = false;
      expect(diagnose(s).map((f) => f.check)).to.deep.equal(["persistence"]);
      s.values!.controlPlane.backingStore.database.external.enabled = true;
      expect(diagnose(s)).to.deep.equal([]);
    },
  );

  it("init containers: a crash loop, an OOM kill and high restarts are found as for containers", () => {
    const s = healthy();
    const web = s.pods[1] as unknown as { spec: { initContainers?: unknown[] }; status: Record<string, unknown> };
    web.spec.initContainers = [{ name: "migrate", resources: { limits: { memory: "64Mi" } } }];
    web.status = {
      phase: "Pending",
      initContainerStatuses: [
        {
          name: "migrate",
          restartCount: 6,
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
        },
      ],
    };
    const found = diagnose(s).filter((f) => f.check === "crash-loop");
    expect(found.map((f) => [f.message, f.resolution.split("; ").pop()])).to.deep.equal([
      [
        "init container migrate in CrashLoopBackOff after 6 restarts, last terminated OOMKilled",
        "the memory limit is now 64Mi",
      ],
    ]);
    web.status = {
      phase: "Pending",
      initContainerStatuses: [
        {
          name: "migrate",
          restartCount: 1,
          state: { running: {} },
          lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
        },
      ],
    };
    expect(
      diagnose(s)
        .filter((f) => f.check === "oom-killed")
        .map((f) => f.message),
    ).to.deep.equal(["init container migrate was OOMKilled (1 restarts)"]);
    web.status = {
      phase: "Running",
      initContainerStatuses: [
        { name: "migrate", restartCount: 0, state: { terminated: { reason: "Completed", exitCode: 0 } } },
      ],
    };
    expect(diagnose(s)).to.deep.equal([]);
  });

  it(
    "a cluster suspended for a restore: said under the headline, and its control plane's errors are " +
      "expected notes",
    () => {
      const s = broken("connection|control-plane-pod|error");
      SCENARIOS["sidecar-missing|sidecar-missing|error"]!(s);
      s.suspendedBy = "vc restore from registry.example/backup:1";
      const found = diagnose(s);
      expect(found.map((f) => `${f.check} ${f.severity}`)).to.deep.equal([
        "sidecar-missing error",
        "control-plane-pod note",
      ]);
      expect(found[1]!.message).to.match(/^expected during the restore: the StatefulSet wants 1 replica/);
      expect(remarks(s)).to.deep.equal([
        "suspended for a restore (vc restore from registry.example/backup:1): reconciliation is paused and the " +
          "control plane is being replaced; its symptoms are expected until the restore ends and are reported as notes",
      ]);
      expect(remarks(healthy())).to.deep.equal([]);
    },
  );

  it("says when the repository's values are invalid and the live configuration was used instead", () => {
    const s = healthy();
    s.values = undefined;
    expect(remarks(s, "clusters/team-a/values.yaml:3:5: bad")).to.deep.equal([
      "the repository's values of clusters/team-a are invalid (clusters/team-a/values.yaml:3:5: bad): checked " +
        "against the configuration the control plane runs with (Secret vc-config-team-a) instead",
    ]);
    s.liveValues = undefined;
    expect(remarks(s, "bad")[0]).to.contain(
      "could not be read: checks that depend on values judge from the host's objects alone",
    );
    expect(remarks(healthy(), "bad")).to.deep.equal([]);
  });

  it("the metrics-host-api fix never suggests the hostApiGroup already in use", () => {
    const upstream = diagnose(broken("metrics-not-available|metrics-host-api|error"))[0]!.resolution;
    expect(upstream).to.not.contain("to the group it serves (metrics.k8s.io");
    expect(upstream).to.contain("the configured hostApiGroup metrics.k8s.io is the upstream metrics server's group");
    const s = broken("metrics-not-available|metrics-host-api|error");
    (
      s.sharedProxy!.deployment as unknown as {
        spec: { template: { spec: { containers: Array<{ args: string[] }> } } };
      }
    ).spec.template.spec.containers[0]!.args = ["--host-api-group", "metrics.orch.io"];
    expect(diagnose(s).find((f) => f.check === "metrics-host-api")!.resolution).to.contain(
      "(metrics.k8s.io for the upstream metrics server; metrics.orch.io is in use now)",
    );
  });

  it("certificate names cover Gateway hosts: exact, one-label wildcards, namespace prefixes dropped", () => {
    expect(covers(["a.example.com"], "vc-x/a.example.com")).to.equal(true);
    expect(covers(["*.example.com"], "a.example.com")).to.equal(true);
    expect(covers(["*.example.com"], "a.b.example.com")).to.equal(false);
    expect(covers(["*.example.com"], "example.com")).to.equal(false);
    expect(covers(["b.example.com"], "a.example.com")).to.equal(false);
  });

  it("reads a TLS Secret's certificate with node's X509Certificate: window and DNS names; never the key", () => {
    const pem = servingCertificate(["a.example.com", "*.shop.example.com"], 30);
    const facts = certificateFacts({
      data: { "tls.crt": Buffer.from(pem.cert).toString("base64"), "tls.key": Buffer.from(pem.key).toString("base64") },
    });
    expect(facts.dnsNames).to.deep.equal(["a.example.com", "*.shop.example.com"]);
    expect(Date.parse(facts.validTo!) - Date.parse(facts.validFrom!)).to.equal(30 * 86_400_000);
    expect(JSON.stringify(facts)).to.not.contain("PRIVATE");
    expect(certificateFacts({ data: {} })).to.deep.equal({ error: "it has no tls.crt" });
    expect(certificateFacts({ data: { "tls.crt": "eA==" } }).error).to.match(/^its tls.crt is not a PEM certificate/);
  });

  it("the TLS Secret of a shared ingress counts only where its pods run", () => {
    const s = healthy();
    s.existingSecrets = [`${NS}/a-cert`, `${NS}/vc-metrics-proxy-tls-team-a`];
    expect(diagnose(s).map((f) => f.message)).to.deep.equal([
      `tls.credentialName a-cert (port 443) names a Secret that does not exist in mesh-system (the gateway pods ` +
        `run in mesh-system: the Secret must be there, a copy in ${NS} is not read)`,
    ]);
  });

  it(
    "NetworkPolicies: the union of those selecting the control plane decides; an ipBlock's except and other pods' " +
      "policies count",
    () => {
      const s = broken("connection|network-policy|error");
      expect(diagnose(s).map((f) => f.message)).to.deep.equal([
        "NetworkPolicies control-plane select the control plane's pod and admit no connection to the host API server " +
          "(10.0.0.1:6443): the syncer cannot sync, and its calls hang",
      ]);
      s.networkPolicies!.push(
        obj("networking.k8s.io/v1", "NetworkPolicy", "api", {
          spec: {
            podSelector: { matchExpressions: [{ key: "app", operator: "In", values: ["vc"] }] },
            policyTypes: ["Egress"],
            egress: [{ to: [{ ipBlock: { cidr: "10.0.0.0/8", except: ["10.0.0.0/30"] } }] }],
          },
        }),
      );
      expect(diagnose(s)).to.have.length(1);
      (s.networkPolicies![1]!.spec as { egress: Array<{ to: unknown[] }> }).egress[0]!.to = [
        { ipBlock: { cidr: "10.0.0.0/8" } },
      ];
      expect(diagnose(s)).to.deep.equal([]);
      const other = healthy();
      other.networkPolicies!.push(
        obj("networking.k8s.io/v1", "NetworkPolicy", "web-only", {
          spec: { podSelector: { matchLabels: { app: "web" } }, policyTypes: ["Ingress", "Egress"] },
        }),
      );
      expect(diagnose(other)).to.deep.equal([]);
      const none = healthy();
      none.networkPolicies = [
        obj("networking.k8s.io/v1", "NetworkPolicy", "deny-all", {
          spec: { podSelector: {}, policyTypes: ["Ingress"] },
        }),
      ];
      expect(diagnose(none).map((f) => `${f.severity} ${f.message}`)).to.deep.equal([
        "error NetworkPolicies deny-all select the control plane's pod and admit no connection to the virtual API " +
          "server's port 8443: vc connect, kubectl and the metrics proxy hang",
      ]);
    },
  );

  it("a liveness probe differing from 60/20/5 is a note naming each value", () => {
    const [f] = diagnose(broken("crash-liveness|liveness-probe|note"));
    expect(f).to.include({ check: "liveness-probe", severity: "note" });
    expect(f!.message).to.equal(
      "liveness probe differs from the suggested values: initialDelaySeconds 10 (suggested 60), failureThreshold 3 " +
        "(suggested 5); a tighter probe restarts a slow control plane",
    );
  });

  it("exit codes: notes and warnings 0, warnings with --strict 1, errors 1", () => {
    const note = diagnose(broken("state-loss|persistence|note"));
    const warning = diagnose(broken("autoscaler-unknown|pod-requests|warning"));
    const error = diagnose(broken("https-certificate|tls-secret|error"));
    expect([doctorExitCode(note), doctorExitCode(note, true)]).to.deep.equal([0, 0]);
    expect([doctorExitCode(warning), doctorExitCode(warning, true)]).to.deep.equal([0, 1]);
    expect([doctorExitCode(error), doctorExitCode(error, true)]).to.deep.equal([1, 1]);
    expect(doctorExitCode([])).to.equal(0);
  });

  it(
    "the text report groups findings by severity, errors first, and says 'no problems' when there are " + "only notes",
    () => {
      const s = broken("autoscaler-unknown|pod-requests|warning");
      SCENARIOS["state-loss|persistence|note"]!(s);
      SCENARIOS["https-certificate|tls-secret|error"]!(s);
      const text = formatFindings("team-a", NS, diagnose(s));
      expect(text.split("\n")[0]).to.equal(`virtual cluster team-a (namespace ${NS}): 1 error, 1 warning, 1 note`);
      const headings = text.split("\n").filter((l) => /^[a-z]+:$/.test(l));
      expect(headings).to.deep.equal(["errors:", "warnings:", "notes:"]);
      expect(text.indexOf("ERROR [tls-secret]")).to.be.lessThan(text.indexOf("WARNING [pod-requests]"));
      expect(text.indexOf("WARNING [pod-requests]")).to.be.lessThan(text.indexOf("NOTE [persistence]"));
      const notes = formatFindings("team-a", NS, diagnose(broken("state-loss|persistence|note")));
      expect(notes.split("\n")[0]).to.equal(`virtual cluster team-a (namespace ${NS}): no problems found, 1 note`);
    },
  );
});
