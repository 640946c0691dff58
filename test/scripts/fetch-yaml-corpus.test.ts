// scripts/fetch-yaml-corpus.sh, run against local tarballs shaped like GitHub's (one top folder <name>-<commit>/):
// it keeps every .yaml/.yml file at its path under owner+name, leaves Helm templates out, and writes one .tar.xz.
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { findExecutable, requireOrSkip } from "../support/requires.js";

const ROOT = join(import.meta.dirname, "../..");
const SCRIPT = join(ROOT, "scripts/fetch-yaml-corpus.sh");

/** The repositories and commits the script pins, read from the script itself. */
function pinned(): Array<{ repo: string; commit: string }> {
  return [...readFileSync(SCRIPT, "utf8").matchAll(/^ {2}"([\w.-]+\/[\w.-]+) ([0-9a-f]{40}) \d+"$/gm)].map((m) => ({
    repo: m[1]!,
    commit: m[2]!,
  }));
}

describe("scripts/fetch-yaml-corpus.sh", function () {
  this.timeout(60000);
  let tmp: string;
  before(function () {
    requireOrSkip(
      this,
      ["curl", "xz"].find((t) => !findExecutable(t)),
      "install curl and xz-utils",
    );
  });
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-corpus-script-"));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it("pins the five public repositories at full commit SHAs and names no local path", () => {
    expect(pinned().map((p) => p.repo)).to.deep.equal([
      "argoproj/argocd-example-apps",
      "cert-manager/cert-manager",
      "istio/istio",
      "kubernetes/examples",
      "prometheus-operator/kube-prometheus",
    ]);
    expect(readFileSync(SCRIPT, "utf8")).to.not.match(/\.\.\/|\/work\//);
  });

  it("keeps the YAML files at their paths under owner+name and leaves templates and other files out", () => {
    const files: Record<string, string> = {
      "deploy/a.yaml": "a: 1\n",
      "deep/er/b.yml": "- b\n",
      "chart/templates/c.yaml": "kind: {{ .Values.kind }}\n",
      "chart/values.yaml": "replicas: 1\n",
      "d.yaml": "name: '{{ .Release.Name }}'\n",
      "README.md": "# not yaml\n",
      "with space/e.yaml": "e: true\n",
    };
    for (const { repo, commit } of pinned()) {
      const top = join(tmp, "src", `${repo.split("/")[1]}-${commit}`);
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(top, path)), { recursive: true });
        writeFileSync(join(top, path), text);
      }
      const tarball = join(tmp, "tarballs", `${repo}-${commit}.tar.gz`);
      mkdirSync(dirname(tarball), { recursive: true });
      execFileSync("tar", ["-czf", tarball, "-C", join(tmp, "src"), `${repo.split("/")[1]}-${commit}`]);
      rmSync(top, { recursive: true });
    }
    const out = join(tmp, "out", "corpus.tar.xz");
    const r = spawnSync("bash", [SCRIPT, out], {
      encoding: "utf8",
      env: { ...process.env, VC_CORPUS_URL_TEMPLATE: `file://${join(tmp, "tarballs")}/%REPO%-%COMMIT%.tar.gz` },
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(out);
    const listed = execFileSync("tar", ["-tJf", out], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l && !l.endsWith("/"));
    const expected = pinned().flatMap(({ repo }) =>
      ["deep/er/b.yml", "chart/values.yaml", "deploy/a.yaml", "with space/e.yaml"].map(
        (f) => `${repo.replace("/", "+")}/${f}`,
      ),
    );
    expect([...listed].sort()).to.deep.equal([...expected].sort());
    expect(r.stderr).to.include("gave 4 files, the corpus the test was written against has");
  });
});
