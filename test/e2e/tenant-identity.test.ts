// #20 items 5 and 6 on a real API server, with the attacker's identities: the syncer ServiceAccount writes a
// kubeconfig with an exec plugin into its cluster's Secret vc-<name> (vc connect runs nothing of it); a kubeconfig
// whose user entry calls itself `reconciler` applies (recorded as unverified); a name with a newline and ANSI codes
// (printed escaped). The server decides what it confirms: TokenReview where the caller may create one.
import { expect } from "chai";
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dump, load } from "js-yaml";
import { fromData, type ClusterStatus } from "../../src/records/status.js";
import { runVc } from "../support/vc.js";
import { servesSelfSubjectReview, useRealKube } from "../support/real-kube.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const FORGED = "mallory\nevil   vc-evil   applied   0123456789ab   reconciler\u001b[31m FAKE \u001b[0m\u001b[2J\u202e";
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe(
  "e2e: the tenant boundary of vc connect and of apply records (real API server, attacker " + "identities)",
  function () {
    this.timeout(180_000);
    const kube = useRealKube({ users: [{ name: "mallory" }, { name: "admin-like" }] });
    let dir: string;
    let repo: string;
    let userConfig: string;

    /** A kubeconfig for a token user whose user entry carries any name it likes. */
    const named = (user: string, entry: string): string => {
      const doc = load(readFileSync(kube().kubeconfigFor(user), "utf8")) as {
        users: Array<{ name: string }>;
        contexts: Array<{ context: { user: string } }>;
      };
      doc.users[0]!.name = entry;
      doc.contexts[0]!.context.user = entry;
      const path = join(dir, `kubeconfig-${user}-${Math.random().toString(36).slice(2)}`);
      writeFileSync(path, dump(doc), { mode: 0o600 });
      return path;
    };
    const bind = async (user: string, role: string) => {
      const res = await kube().request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: `e2e-${user}-${role}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    };
    const status = async (): Promise<ClusterStatus> => {
      const res = await runVc([
        "status",
        "--target",
        "kube",
        "--kubeconfig",
        kube().kubeconfigPath,
        "--cluster",
        "evil",
        "-o",
        "json",
      ]);
      expect(res.code, res.stderr).to.equal(0);
      return JSON.parse(res.stdout) as ClusterStatus;
    };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "vc-e2e-tenant-"));
      repo = join(dir, "repo");
      cpSync(join(ROOT, "clusters", "minimal"), join(repo, "clusters", "evil"), { recursive: true });
      userConfig = join(dir, "config");
      copyFileSync(kube().kubeconfigPath, userConfig);
      // mallory may do what the reconciler may (deploy/reconciler/rbac.yaml), which includes no TokenReview;
      // admin-like is cluster-admin, which does.
      for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
        const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
        expect(applied.code, applied.stderr).to.equal(0);
      }
      await bind("mallory", "vc-reconciler");
      await bind("mallory", "vc-reconciler-grants");
      await bind("admin-like", "cluster-admin");
      const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
      expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    });
    after(() => dir && rmSync(dir, { recursive: true, force: true }));

    it(
      "vc connect runs nothing the syncer writes into vc-<name>: exec plugin refused, no marker, kubeconfig " +
        "unchanged",
      async () => {
        const marker = join(dir, "pwned");
        const evil = dump({
          apiVersion: "v1",
          kind: "Config",
          clusters: [{ name: "v", cluster: { server: kube().url, "insecure-skip-tls-verify": true } }],
          users: [
            {
              name: "v",
              user: {
                exec: {
                  apiVersion: "client.authentication.k8s.io/v1beta1",
                  command: "sh",
                  args: ["-c", `touch ${marker}`],
                },
              },
            },
          ],
          contexts: [{ name: "v", context: { cluster: "v", user: "v" } }],
          "current-context": "v",
        });
        writeFileSync(join(dir, "evil-config"), evil);
        // The attacker: the cluster's own syncer ServiceAccount, with the token the server issues it.
        const syncer = await kube().serviceAccountKubeconfig("vc-evil", "vc-evil");
        const wrote = await kube().kubectl([
          "--kubeconfig",
          syncer,
          "-n",
          "vc-evil",
          "create",
          "secret",
          "generic",
          "vc-evil",
          `--from-file=config=${join(dir, "evil-config")}`,
        ]);
        expect(wrote.code, wrote.stderr).to.equal(0);
        const before = readFileSync(userConfig, "utf8");
        for (const extra of [[], ["--no-check"], ["--print"]]) {
          const res = await runVc(["connect", "evil", "--repo", repo, "--kubeconfig", userConfig, ...extra], {
            env: { KUBECONFIG: userConfig },
          });
          expect(res.code, res.stdout + res.stderr).to.equal(2);
          expect(res.stderr).to.contain(
            "secret vc-evil/vc-evil holds a kubeconfig vc will not use: user.exec (runs a program)",
          );
          expect(existsSync(marker), `vc connect ${extra.join(" ")} ran the plugin`).to.equal(false);
          expect(readFileSync(userConfig, "utf8")).to.equal(before);
        }
      },
    );

    it(
      "a kubeconfig user entry calling itself reconciler is never recorded as the reconciler: unverified on 1.20, " +
        "the server's own name where it serves SelfSubjectReview; the server's TokenReview names a user who " +
        "may ask",
      async () => {
        // Discovery decides: a server with SelfSubjectReview names the caller itself, one without leaves the claim
        // unverified.
        const selfReview = await servesSelfSubjectReview(kube());
        const values = join(repo, "clusters", "evil", "values.yaml");
        writeFileSync(values, "controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: 210m\n");
        const asReconciler = await runVc([
          "apply",
          repo,
          "--target",
          "kube",
          "--kubeconfig",
          named("mallory", "reconciler"),
        ]);
        expect(asReconciler.code, asReconciler.stdout + asReconciler.stderr).to.equal(0);
        const by = selfReview ? "mallory" : "unverified: reconciler";
        const byFrom = selfReview ? "SelfSubjectReview" : "kubeconfig user";
        expect(asReconciler.stdout).to.include(`by ${by} (${byFrom})`);
        let s = await status();
        expect(s.history[0]).to.deep.include({ by, byFrom, via: "apply" });
        expect(s.lastAppliedBy).to.equal(by);
        // No refused request was sent to find out (on 1.20 the SelfSubjectAccessReview asked whether a TokenReview is
        // allowed; a SelfSubjectReview is asked only where discovery lists it, and answered).
        const asked = kube()
          .writes("mallory")
          .filter((w) => w.resource === "tokenreviews" || w.resource === "selfsubjectreviews");
        expect(asked.filter((w) => w.resource === "tokenreviews" || w.code >= 400)).to.deep.equal([]);
        if (!selfReview) expect(asked).to.deep.equal([]);
        const table = await runVc(["status", "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
        expect(table.stdout).to.match(new RegExp(`evil\\s+vc-evil\\s+applied\\s+\\S+\\s+${by} \\(vc apply\\)`));

        writeFileSync(values, readFileSync(values, "utf8").replace("cpu: 210m", "cpu: 220m"));
        const confirmed = await runVc([
          "apply",
          repo,
          "--target",
          "kube",
          "--kubeconfig",
          named("admin-like", "reconciler"),
        ]);
        expect(confirmed.code, confirmed.stdout + confirmed.stderr).to.equal(0);
        const reviewed = selfReview ? "SelfSubjectReview" : "TokenReview";
        expect(confirmed.stdout).to.include(`by admin-like (${reviewed})`);
        s = await status();
        expect(s.history[0]).to.deep.include({ by: "admin-like", byFrom: reviewed });
      },
    );

    it(
      "a user entry named with a newline and ANSI codes: recorded unverified and printed escaped on 1.20, never " +
        "recorded where the server serves SelfSubjectReview; no forged row, no colour",
      async () => {
        const values = join(repo, "clusters", "evil", "values.yaml");
        writeFileSync(values, readFileSync(values, "utf8").replace("cpu: 220m", "cpu: 230m"));
        // Where the server names the caller (SelfSubjectReview) the entry's name is never used: its own name is
        // recorded. (No server confirms such a name: a header, which impersonation would need, cannot carry a newline.)
        const selfReview = await servesSelfSubjectReview(kube());
        const res = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", named("mallory", FORGED)]);
        expect(res.code, res.stdout + res.stderr).to.equal(0);
        expect(res.stdout).to.not.match(RAW);
        const s = await status();
        expect(s.history[0]!.by).to.equal(selfReview ? "mallory" : `unverified: ${FORGED}`);
        const table = await runVc(["status", "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
        expect(table.stdout).to.not.match(RAW);
        expect(
          table.stdout
            .trimEnd()
            .split("\n")
            .filter((l) => /^evil\s/.test(l)),
        ).to.have.length(1);
        if (selfReview) expect(table.stdout).to.match(/evil\s+vc-evil\s+applied\s+\S+\s+mallory \(vc apply\)/);
        else
          expect(table.stdout)
            .to.include("unverified: mallory\\nevil   vc-evil")
            .and.include("\\x1b[31m FAKE \\x1b[0m\\x1b[2J\\u202e");
        const history = await runVc([
          "status",
          "--target",
          "kube",
          "--kubeconfig",
          kube().kubeconfigPath,
          "--cluster",
          "evil",
        ]);
        expect(history.stdout).to.not.match(RAW);
        expect(history.stdout.split("\n").filter((l) => /^evil\s/.test(l))).to.have.length(0);
        // The stored record is the exact string (JSON-escaped in the ConfigMap).
        const cm = await kube().request<{ data?: Record<string, string> }>(
          "GET",
          "/api/v1/namespaces/vc-evil/configmaps/vc-status",
        );
        if (cm.status === 200)
          expect(fromData(cm.body.data)!.history[0]!.by).to.equal(selfReview ? "mallory" : `unverified: ${FORGED}`);
      },
    );
  },
);
