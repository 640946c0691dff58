import { expect } from "chai";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateFleet } from "../../bench/fleet.js";
import { MAX_FILE_BYTES } from "../../src/repo/read.js";
import { loadAndValidate } from "../../src/validate/index.js";
import { cleanupRepos, makeRepo, MESH_ON, VS } from "./fixture.js";

const EXAMPLES = new URL("../../", import.meta.url).pathname;

describe("validate: whole repository", () => {
  after(cleanupRepos);

  it("accepts the example repository, with the specs other stages need", async () => {
    const r = await loadAndValidate(EXAMPLES);
    expect(r.diagnostics).to.deep.equal([]);
    expect(r.clusters.map((c) => c.name)).to.include.members(["bookinfo", "minimal", "platform"]);
    const bookinfo = r.clusters.find((c) => c.name === "bookinfo")!.spec!;
    expect(bookinfo.settings).to.deep.equal({ namespace: "team-bookinfo", suspend: false, prune: true });
    // The fleet base, the prod group's base (its cluster.yaml labels), then its own files.
    expect(bookinfo.valuesFiles).to.deep.equal([
      "fleet/values.yaml",
      "fleet/values.prod.yaml",
      "clusters/bookinfo/values.yaml",
      "clusters/bookinfo/values.debug.yaml",
    ]);
    expect(bookinfo.values.controlPlane.statefulSet.env.map((e) => e.name)).to.deep.equal(["DEBUG", "LOG_LEVEL"]);
    expect(bookinfo.values.controlPlane.statefulSet.resources.requests.cpu).to.equal("500m");
    expect(new Set(bookinfo.mesh.map((m) => m.object.kind))).to.deep.equal(
      new Set(["Gateway", "VirtualService", "DestinationRule"]),
    );
    const minimal = r.clusters.find((c) => c.name === "minimal")!.spec!;
    expect(minimal.settings.namespace).to.equal("vc-minimal");
    const platform = r.clusters.find((c) => c.name === "platform")!.spec!;
    expect(platform.values.integrations.metricsServer.enabled).to.equal(true);
    expect(platform.values.controlPlane.backingStore.database.external.enabled).to.equal(true);
  });

  it("accepts a generated fleet without a single diagnostic", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vc-fleet-"));
    try {
      await generateFleet(dir, { clusters: 4, meshPerCluster: 20 });
      const r = await loadAndValidate(dir);
      expect(r.diagnostics).to.deep.equal([]);
      expect(r.clusters.map((c) => c.spec?.mesh.length)).to.deep.equal([20, 20, 20, 20]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    "masks a credential a message would quote, recognised by its shape, in the repository's list and under its " +
      "cluster",
    async () => {
      const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
      const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4eHh4eHh4In0.c2lnbmF0dXJlc2ln";
      const base = `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        cpu: ${jwt}\n`;
      const own =
        `controlPlane:\n  statefulSet:\n    resources:\n      requests:\n        memory: ${token}\nsync:\n ` +
        ` toHost:\n    customResources:\n      ${jwt}: {enabled: true}\n`;
      const r = await loadAndValidate(makeRepo({ "fleet/values.yaml": base, "clusters/a/values.yaml": own }));
      const messages = [...r.diagnostics, ...r.clusters.flatMap((c) => c.diagnostics)].map((d) => d.message);
      expect(messages.filter((m) => m.includes("<masked>")).length).to.be.at.least(3);
      for (const m of messages) expect(m).to.not.include(token).and.not.include(jwt);
    },
  );

  it("reports every problem of every file in one run, sorted, and keeps valid clusters' specs", async () => {
    const r = await loadAndValidate(
      makeRepo({
        "clusters/good/values.yaml": "{}\n",
        "clusters/Bad_Name/values.yaml": "{}\n",
        "clusters/nov/cluster.yaml": "namespace: nov-ns\n",
        "clusters/typo/values.yaml": "controlPlane:\n  statefulSett: {}\n",
        "clusters/typo/cluster.yaml": "namespce: x\nprune: maybe\n",
        "clusters/dup/values.yaml": "a: 1\na: 2\n",
      }),
    );
    expect(r.diagnostics.map((d) => `${d.file}:${d.line}:${d.col}: ${d.severity}: ${d.code}`)).to.deep.equal([
      "clusters/Bad_Name:0:0: error: cluster-name",
      "clusters/dup/values.yaml:2:1: error: yaml-duplicate-key",
      "clusters/nov/values.yaml:0:0: error: missing-values",
      "clusters/typo/cluster.yaml:1:1: error: schema",
      "clusters/typo/cluster.yaml:2:1: error: schema",
      "clusters/typo/values.yaml:2:3: error: schema",
    ]);
    const msgs = r.diagnostics.map((d) => d.message);
    expect(msgs).to.include('unknown key "namespce" at the top level: did you mean "namespace"?');
    expect(msgs).to.include('unknown key "statefulSett" in controlPlane: did you mean "statefulSet"?');
    expect(r.clusters.filter((c) => c.spec).map((c) => c.name)).to.deep.equal(["good"]);
  });

  it(
    "layers values files: values.yaml, then values.*.yaml by name; errors point into the file that " + "has them",
    async () => {
      const r = await loadAndValidate(
        makeRepo({
          "clusters/a/values.yaml": "controlPlane:\n  statefulSet:\n    replicas: 2\n    env: [{name: A, value: a}]\n",
          "clusters/a/values.b.yaml": "controlPlane:\n  statefulSet:\n    env: [{name: B, value: b}]\n",
          "clusters/a/values.a.yaml": "controlPlane:\n  statefulSet:\n    replicas: 3\n",
        }),
      );
      const v = r.clusters[0]!.spec!.values;
      expect(v.controlPlane.statefulSet.replicas).to.equal(3);
      expect(v.controlPlane.statefulSet.env).to.deep.equal([{ name: "B", value: "b" }]);
      const bad = await loadAndValidate(
        makeRepo({
          "clusters/a/values.yaml": MESH_ON,
          "clusters/a/values.prod.yaml":
            "\nsync:\n  toHost:\n    customResources:\n      gateways.networking.mesh.io: {enabled: true}\n",
        }),
      );
      expect(bad.diagnostics.map((d) => [d.file, d.line, d.code])).to.deep.equal([
        ["clusters/a/values.prod.yaml", 5, "mesh-conflict"],
      ]);
    },
  );

  it(
    "refuses bad files without crashing: binary, too large, not UTF-8, alias bomb, symlink out, not a " +
      "mapping, empty",
    async () => {
      const outside = mkdtempSync(join(tmpdir(), "vc-out-"));
      writeFileSync(join(outside, "values.yaml"), "{}\n");
      const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"];
      for (let i = 1; i < 9; i++)
        bomb.push(
          `${"abcdefghij"[i]}: &${"abcdefghij"[i]} [${Array(9)
            .fill(`*${"abcdefghij"[i - 1]}`)
            .join(", ")}]`,
        );
      const root = makeRepo({
        "clusters/bin/values.yaml": new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]),
        "clusters/big/values.yaml": `a: ${"x".repeat(MAX_FILE_BYTES)}\n`,
        "clusters/latin/values.yaml": new Uint8Array([0x61, 0x3a, 0x20, 0xe9, 0x0a]),
        "clusters/bomb/values.yaml": "{}\n",
        "clusters/bomb/mesh/lol.yaml": `${bomb.join("\n")}\n`,
        "clusters/list/values.yaml": "- a\n",
        "clusters/empty/values.yaml": "",
        "clusters/link/cluster.yaml": "{}\n",
      });
      symlinkSync(join(outside, "values.yaml"), join(root, "clusters/link/values.yaml"));
      try {
        const r = await loadAndValidate(root);
        expect(r.diagnostics.map((d) => `${d.file} ${d.severity} ${d.code}`)).to.deep.equal([
          "clusters/big/values.yaml error file-too-large",
          "clusters/bin/values.yaml error binary",
          "clusters/bomb/mesh/lol.yaml error yaml-alias-bomb",
          "clusters/empty/values.yaml warning empty-file",
          "clusters/latin/values.yaml error encoding",
          "clusters/link/values.yaml error symlink",
          "clusters/list/values.yaml error not-a-mapping",
        ]);
        expect(r.clusters.filter((c) => c.spec).map((c) => c.name)).to.deep.equal(["empty"]);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    },
  );

  it("still applies the values rules when another file of the folder has an error", async () => {
    const root = makeRepo({
      "clusters/a/values.yaml": "privateNodes: {enabled: true}\nintegrations: {mesh: {enabled: true}}\n",
      "clusters/a/mesh/bad.yaml": "a: [\n",
    });
    const r = await loadAndValidate(root);
    expect(r.diagnostics.map((d) => [d.file, d.code])).to.deep.equal([
      ["clusters/a/mesh/bad.yaml", "yaml-syntax"],
      ["clusters/a/values.yaml", "mesh-private-nodes"],
    ]);
  });

  it(
    "refuses the host's own namespaces, default, the reconciler's and the integrations' (located); the other " +
      "clusters go on",
    async () => {
      const r = await loadAndValidate(
        makeRepo({
          "clusters/a/values.yaml": "{}\n",
          "clusters/a/cluster.yaml": "namespace: kube-system\n",
          "clusters/b/values.yaml": "{}\n",
          "clusters/b/cluster.yaml": "suspend: true\nnamespace: default\n",
          "clusters/c/values.yaml": "{}\n",
          "clusters/c/cluster.yaml": "namespace: vc-system\n",
          "clusters/d/values.yaml": "{}\n",
          "clusters/d/cluster.yaml": "namespace: istio-system\n",
          "clusters/e/values.yaml": "{}\n",
          "clusters/e/cluster.yaml": "namespace: cert-manager\n",
          "clusters/f/values.yaml": "{}\n",
          "clusters/f/cluster.yaml": "namespace: kube-anything\n",
          "clusters/ok/values.yaml": "{}\n",
        }),
      );
      expect(r.diagnostics.map((d) => [d.file, d.line, d.col, d.severity, d.code])).to.deep.equal([
        ["clusters/a/cluster.yaml", 1, 1, "error", "reserved-namespace"],
        ["clusters/b/cluster.yaml", 2, 1, "error", "reserved-namespace"],
        ["clusters/c/cluster.yaml", 1, 1, "error", "reserved-namespace"],
        ["clusters/d/cluster.yaml", 1, 1, "error", "reserved-namespace"],
        ["clusters/e/cluster.yaml", 1, 1, "error", "reserved-namespace"],
        ["clusters/f/cluster.yaml", 1, 1, "error", "reserved-namespace"],
      ]);
      expect(r.diagnostics.find((d) => d.file === "clusters/c/cluster.yaml")!.message).to.include(
        "the reconciler's own namespace",
      );
      expect(r.diagnostics.find((d) => d.file === "clusters/d/cluster.yaml")!.message).to.include(
        "platform integration",
      );
      expect(r.clusters.map((c) => [c.name, c.valid])).to.deep.equal([
        ["a", false],
        ["b", false],
        ["c", false],
        ["d", false],
        ["e", false],
        ["f", false],
        ["ok", true],
      ]);
      // No cluster.yaml: the default vc-<name> of a folder named system is the reconciler's namespace.
      const byDefault = await loadAndValidate(makeRepo({ "clusters/system/values.yaml": "{}\n" }));
      expect(byDefault.diagnostics.map((d) => [d.file, d.severity, d.code])).to.deep.equal([
        ["clusters/system", "error", "reserved-namespace"],
      ]);
    },
  );

  it("the fleet policy's hostNamespaces.pattern bounds every cluster's namespace, its default too", async () => {
    const r = await loadAndValidate(
      makeRepo({
        "policy.yaml": 'hostNamespaces:\n  pattern: "vc-*"\n',
        "clusters/a/values.yaml": "{}\n",
        "clusters/b/values.yaml": "{}\n",
        "clusters/b/cluster.yaml": "namespace: team-b\n",
      }),
    );
    expect(r.diagnostics.map((d) => [d.file, d.line, d.severity, d.code])).to.deep.equal([
      ["clusters/b/cluster.yaml", 1, "error", "policy-host-namespace"],
    ]);
    expect(r.diagnostics[0]!.message).to.equal(
      'host namespace "team-b" is outside the fleet policy\'s hostNamespaces.pattern "vc-*" (policy.yaml)',
    );
    expect(r.clusters.map((c) => [c.name, c.valid])).to.deep.equal([
      ["a", true],
      ["b", false],
    ]);
  });

  it("limits validation to the named clusters and reports unknown names", async () => {
    const root = makeRepo({ "clusters/a/values.yaml": "{}\n", "clusters/b/values.yaml": "x: 1\n" });
    const r = await loadAndValidate(root, { clusters: ["a", "zz"] });
    expect(r.clusters.map((c) => c.name)).to.deep.equal(["a"]);
    expect(r.diagnostics.map((d) => [d.file, d.code])).to.deep.equal([["clusters/zz", "unknown-cluster"]]);
  });

  it("rejects two clusters sharing a host namespace, and a folder without clusters/", async () => {
    const r = await loadAndValidate(
      makeRepo({
        "clusters/a/values.yaml": "{}\n",
        "clusters/a/cluster.yaml": "namespace: shared\n",
        "clusters/b/values.yaml": "{}\n",
        "clusters/b/cluster.yaml": "prune: false\nnamespace: shared\n",
        "clusters/c/values.yaml": `${MESH_ON}`,
        "clusters/c/mesh/vs.yaml": VS("x"),
        "clusters/d/values.yaml": "{}\n",
        "clusters/e/values.yaml": "{}\n",
        "clusters/e/cluster.yaml": "namespace: vc-d\n",
      }),
    );
    expect(r.diagnostics.map((d) => [d.file, d.line, d.code])).to.deep.equal([
      ["clusters/a/cluster.yaml", 1, "namespace-conflict"],
      ["clusters/b/cluster.yaml", 2, "namespace-conflict"],
      ["clusters/d", 0, "namespace-conflict"],
      ["clusters/e/cluster.yaml", 1, "namespace-conflict"],
    ]);
    expect(r.diagnostics[0]!.message).to.equal(
      'host namespace "shared" is also used by cluster b: each cluster needs its own namespace',
    );
    expect(r.clusters.map((c) => Boolean(c.spec))).to.deep.equal([false, false, true, false, false]);
    const empty = mkdtempSync(join(tmpdir(), "vc-empty-"));
    try {
      const e = await loadAndValidate(empty);
      expect(e.diagnostics.map((d) => [d.file, d.severity])).to.deep.equal([["clusters", "error"]]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("throws only when the root itself does not exist", async () => {
    let err: unknown;
    try {
      await loadAndValidate("/nonexistent/vc-repo");
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.contain("does not exist");
  });
});
