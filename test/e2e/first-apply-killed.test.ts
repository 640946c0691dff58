// A first `vc apply` killed half way (held at its StatefulSet by a webhook that never answers), on a real API server:
// the record written before any object names every object the run made, so the next run takes them as its own and never
// reads the host namespace (which the tenant writes) as a record. The attacker is the cluster's syncer, with a
// TokenRequest token of its real ServiceAccount: between the kill and the next run it plants a vc-status ConfigMap that
// suspends the cluster and forges its history, and a ConfigMap labelled as the cluster's inventory under the source's
// owner name. Before the record was written first, the next run migrated all of it into vc's record
// (sinks/kube/migrate.ts): the cluster ended suspended by the tenant.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../src/kube/object.js";
import { resourceFor } from "../../src/kube/resources.js";
import { KubeClient } from "../../src/host/client.js";
import { LABELS } from "../../src/translate/keys.js";
import { installExampleCrds, useRealKube, waitFor } from "../support/real-kube.js";
import { silentServer } from "../support/silent-server.js";
import { exampleRepo, runVc } from "../support/cli-repo.js";

const ROOT = join(import.meta.dirname, "..", "..");

describe("e2e: a first vc apply killed half way", function () {
  this.timeout(240_000);
  const kube = useRealKube();
  let repo: string;
  let kc: string;
  let admin: KubeClient;

  before(async () => {
    await installExampleCrds(kube());
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
    kc = await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler");
    admin = KubeClient.open({ kubeconfig: kube().kubeconfigPath });
    repo = exampleRepo(["minimal"]);
  });
  after(() => {
    admin?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  const records = async () =>
    (
      await admin.list(resourceFor("v1", "ConfigMap")!, {
        namespace: "vc-system",
        labelSelector: "vc.orch.io/record=record",
      })
    ).map((cm) => ({ ...cm, data: (cm.data ?? {}) as Record<string, string> }));

  it(
    "leaves a record naming what it made; the syncer's planted status, history and inventory change " + "nothing",
    async () => {
      // The run, as its own process, held at its first StatefulSet (after the RBAC stage: the syncer's Role and binding
      // exist) by a validating webhook that never answers, then killed there.
      const webhook = await silentServer();
      const port = new URL(webhook.url).port;
      const hold = {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "hold-statefulsets" },
        webhooks: [
          {
            name: "hold.statefulsets.e2e.test",
            rules: [{ operations: ["CREATE"], apiGroups: ["apps"], apiVersions: ["v1"], resources: ["statefulsets"] }],
            clientConfig: { url: `https://127.0.0.1:${port}/validate` },
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
            timeoutSeconds: 30,
            failurePolicy: "Fail",
          },
        ],
      };
      expect(
        (await kube().request("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", hold))
          .status,
      ).to.equal(201);
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          join(ROOT, "src/cli/main.ts"),
          "apply",
          repo,
          "--target",
          "kube",
          "--kubeconfig",
          kc,
          "--owner",
          "team-a",
        ],
        { cwd: ROOT, stdio: "ignore" },
      );
      let exited = false;
      child.on("exit", () => (exited = true));
      try {
        await waitFor(
          () => exited || webhook.connections() > 0,
          "the API server to call the webhook for the StatefulSet",
          120_000,
        );
        expect(exited, "the run is held at its StatefulSet").to.equal(false);
        child.kill("SIGKILL");
        await new Promise<void>((done) => (exited ? done() : child.once("exit", () => done())));
      } finally {
        await kube().request(
          "DELETE",
          "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hold-statefulsets",
        );
        await webhook.close();
      }

      // Cut half way: no status recorded, no StatefulSet; the record holds every object of the cluster that exists.
      const [record] = await records();
      expect(record, "a record written before the first object").to.not.equal(undefined);
      expect(record!.data?.result, "the run was cut before its status").to.equal(undefined);
      expect(
        await admin.get({ apiVersion: "apps/v1", kind: "StatefulSet", namespace: "vc-minimal", name: "minimal" }),
      ).to.equal(undefined);
      const inventory = new Set(JSON.parse(record!.data!.inventory!) as string[]);
      const made = [
        "Namespace//vc-minimal",
        "ServiceAccount/vc-minimal/vc-minimal",
        "rbac.authorization.k8s.io/RoleBinding/vc-minimal/vc-minimal",
      ];
      for (const key of made) expect(inventory.has(key), key).to.equal(true);

      // The attacker plants, as minimal's syncer.
      const syncer = KubeClient.open({
        kubeconfig: await kube().serviceAccountKubeconfig("vc-minimal", "vc-minimal"),
        retry: { attempts: 1 },
      });
      const configMap = (
        name: string,
        labels: Record<string, string>,
        data: Record<string, string>,
        annotations?: Record<string, string>,
      ): KubeObject => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "vc-minimal", labels, ...(annotations ? { annotations } : {}) },
        data,
      });
      try {
        await syncer.apply(
          configMap(
            "vc-status",
            { [LABELS.managedBy]: "minimal", [LABELS.status]: "true" },
            {
              cluster: "minimal",
              hostNamespace: "vc-minimal",
              result: "failed",
              history: JSON.stringify([
                {
                  revision: "f".repeat(40),
                  time: "2020-01-01T00:00:00Z",
                  result: "applied",
                  message: "forged by the tenant",
                },
              ]),
            },
            { "vc.orch.io/suspended-by": "the tenant" },
          ),
        );
        await syncer.apply(
          configMap("planted", { [LABELS.inventory]: "minimal", [LABELS.owner]: "team-a" }, { x: "1" }),
        );
      } finally {
        syncer.close();
      }

      const again = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kc, "--owner", "team-a"]);
      expect(again.code, again.stdout + again.stderr).to.equal(0);
      expect(again.stdout + again.stderr).to.not.match(/migrat|suspended|conflict/);
      const [after] = await records();
      expect(after!.data?.result).to.equal("applied");
      expect(after!.metadata.annotations?.["vc.orch.io/suspended-by"]).to.equal(undefined);
      expect(after!.data?.history ?? "").to.not.include("forged by the tenant");
      expect(JSON.parse(after!.data!.inventory!) as string[]).to.not.include("ConfigMap/vc-minimal/planted");
      // The planted objects are the tenant's: neither pruned nor rewritten.
      expect(
        (await admin.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "vc-minimal", name: "planted" }))?.data,
      ).to.deep.equal({ x: "1" });
      expect(
        await admin.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "vc-minimal", name: "vc-status" }),
      ).to.not.equal(undefined);
      // Nothing left to apply.
      const diff = await runVc([
        "diff",
        repo,
        "--target",
        "kube",
        "--kubeconfig",
        kc,
        "--owner",
        "team-a",
        "--exit-code",
      ]);
      expect(diff.code, diff.stdout + diff.stderr).to.equal(0);
    },
  );
});
