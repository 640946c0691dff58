import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { load, loadAll } from "js-yaml";
import { generateFleet } from "../../bench/fleet.js";
import { runVc as run } from "../support/vc.js";
import type { KubeObject } from "../../src/kube/object.js";
import { ANNOTATIONS } from "../../src/translate/index.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function writeRepo(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

const VS = `apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata:
  name: reviews
  namespace: shop
spec:
  hosts: [reviews]
  http:
    - route:
        - destination: {host: reviews, subset: v1}
---
apiVersion: networking.mesh.io/v1beta1
kind: DestinationRule
metadata:
  name: reviews
  namespace: shop
spec:
  host: reviews
  subsets:
    - name: v1
      labels: {version: v1}
`;

const GOOD = {
  "clusters/alpha/values.yaml": "integrations:\n  mesh:\n    enabled: true\n",
  "clusters/alpha/mesh/reviews.yaml": VS,
  "clusters/beta/values.yaml": "{}\n",
};

describe("cli/render", function () {
  this.timeout(30000);
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "vc-render-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("prints a YAML stream of every valid cluster's objects with the given revision", async () => {
    writeRepo(root, GOOD);
    const r = await run(["render", root, "--revision", "abc123"]);
    expect(r.stderr).to.equal("");
    expect(r.code).to.equal(0);
    const docs = loadAll(r.stdout) as KubeObject[];
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).to.include.members([
      "Namespace/vc-alpha",
      "Namespace/vc-beta",
      "StatefulSet/alpha",
      "VirtualService/reviews-x-shop-x-alpha",
    ]);
    expect(docs.every((d) => d.metadata.annotations?.[ANNOTATIONS.revision] === "abc123")).to.equal(true);
  });

  it("renders only the clusters named by --cluster", async () => {
    writeRepo(root, GOOD);
    const docs = loadAll((await run(["render", root, "--cluster", "beta", "--revision", "r"])).stdout) as KubeObject[];
    expect(docs.length).to.be.greaterThan(0);
    expect(docs.every((d) => d.metadata.labels?.["vc.orch.io/managed-by"] === "beta")).to.equal(true);
  });

  it("renders the cluster whose folder PATH points into", async () => {
    writeRepo(root, GOOD);
    const docs = loadAll(
      (await run(["render", join(root, "clusters", "alpha"), "--revision", "r"])).stdout,
    ) as KubeObject[];
    expect(docs.length).to.be.greaterThan(0);
    expect(docs.every((d) => d.metadata.labels?.["vc.orch.io/managed-by"] === "alpha")).to.equal(true);
  });

  it("exits 1 for an unknown --cluster and renders nothing", async () => {
    writeRepo(root, GOOD);
    const r = await run(["render", root, "--cluster", "gamma", "--revision", "r"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("clusters/gamma");
    expect(r.stdout).to.equal("");
  });

  it("prints a JSON List with -o json", async () => {
    writeRepo(root, GOOD);
    const r = await run(["render", root, "-o", "json", "--revision", "r"]);
    const list = JSON.parse(r.stdout);
    expect(list.kind).to.equal("List");
    expect(list.items.length).to.equal(
      (loadAll((await run(["render", root, "--revision", "r"])).stdout) as unknown[]).length,
    );
  });

  it("writes one file per object under --out", async () => {
    writeRepo(root, GOOD);
    const out = join(root, "out");
    const r = await run(["render", root, "--out", out, "--revision", "r"]);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.equal("");
    const sts = load(readFileSync(join(out, "vc-alpha/statefulset/alpha.yaml"), "utf8")) as KubeObject;
    expect(sts.kind).to.equal("StatefulSet");
    expect(existsSync(join(out, "_cluster/namespace/vc-beta.yaml"))).to.equal(true);
    expect(existsSync(join(out, "vc-alpha/virtualservice/reviews-x-shop-x-alpha.yaml"))).to.equal(true);
  });

  it("reports an invalid cluster on stderr as file:line:col, renders the others and exits 1", async () => {
    writeRepo(root, { ...GOOD, "clusters/beta/values.yaml": "controlPlane:\n  statefulSet:\n    replicas: lots\n" });
    const r = await run(["render", root, "--revision", "r"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^clusters\/beta\/values\.yaml:3:\d+: error: /m);
    const docs = loadAll(r.stdout) as KubeObject[];
    expect(docs.some((d) => d.metadata.name === "vc-alpha")).to.equal(true);
    expect(docs.some((d) => d.metadata.labels?.["vc.orch.io/managed-by"] === "beta")).to.equal(false);
  });

  it("does not render a cluster whose mesh names translate to one host name", async () => {
    const dup = (name: string, ns: string) =>
      VS.split("---")[0]!.replace("name: reviews", `name: ${name}`).replace("namespace: shop", `namespace: ${ns}`);
    writeRepo(root, {
      ...GOOD,
      "clusters/alpha/mesh/a.yaml": dup("a-x-b", "c"),
      "clusters/alpha/mesh/b.yaml": dup("a", "b-x-c"),
    });
    const r = await run(["render", root, "--revision", "r"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("a-x-b-x-c-x-alpha");
    expect((loadAll(r.stdout) as KubeObject[]).some((d) => d.metadata.name === "vc-alpha")).to.equal(false);
  });

  it("records the git HEAD of the repository by default, and unknown outside git", async () => {
    writeRepo(root, GOOD);
    const first = (r: { stdout: string }) =>
      (loadAll(r.stdout) as KubeObject[])[0]!.metadata.annotations![ANNOTATIONS.revision];
    expect(first(await run(["render", root]))).to.equal("unknown");
    const git = (...a: string[]) =>
      execFileSync("git", ["-C", root, "-c", "user.name=t", "-c", "user.email=t@e", ...a], { encoding: "utf8" }).trim();
    git("init", "-q", "-b", "main");
    git("add", "clusters");
    git("commit", "-q", "-m", "c1");
    expect(first(await run(["render", root]))).to.equal(git("rev-parse", "HEAD"));
  });

  it("records the HEAD of a git repository that holds the repository in a subfolder", async () => {
    const sub = join(root, "platform", "gitops");
    writeRepo(sub, GOOD);
    const git = (...a: string[]) =>
      execFileSync("git", ["-C", root, "-c", "user.name=t", "-c", "user.email=t@e", ...a], { encoding: "utf8" }).trim();
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-q", "-m", "c1");
    const docs = loadAll((await run(["render", sub])).stdout) as KubeObject[];
    expect(docs[0]!.metadata.annotations![ANNOTATIONS.revision]).to.equal(git("rev-parse", "HEAD"));
  });

  it("stops quietly when stdout is closed early (vc render | head)", async () => {
    await generateFleet(root, { clusters: 30, meshPerCluster: 20 });
    const child = spawn(process.execPath, [join(REPO, "bin", "vc.js"), "render", root, "--revision", "r"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += String(c)));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((res) => child.on("close", (c) => res(c)));
    expect(stderr).to.not.include("EPIPE");
    expect(code).to.equal(0);
  });

  it("fails with exit 2 and no stack trace for a path without clusters/", async () => {
    const r = await run(["render", join(root, "nowhere")]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^error: no clusters\/ folder/);
    expect(r.stderr).to.not.include("    at ");
  });

  it("rejects an unknown output format with exit 2", async () => {
    writeRepo(root, GOOD);
    const r = await run(["render", root, "-o", "xml"]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include("unknown output format");
  });
});
