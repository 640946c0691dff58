// The npm package as a platform team gets it: `npm pack`, installed into an empty folder, runs `vc init`, `vc validate`
// and `vc render` with npx from the bundle, without the sources; the action's run step drives the installed vc.
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { readFileSync } from "node:fs";
import { packageInfo } from "../src/model/package.js";

const ROOT = join(import.meta.dirname, "..");

describe("the npm package", function () {
  this.timeout(180000);
  let tmp: string;
  let app: string;
  const npx = (args: string[], cwd = app) => spawnSync("npx", ["--no-install", ...args], { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "vc-package-"));
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const tarball = (JSON.parse(out.slice(out.indexOf("["))) as Array<{ filename: string }>)[0]!.filename;
    app = join(tmp, "app");
    execFileSync("mkdir", [app]);
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", join(tmp, tarball)], { cwd: app, stdio: "ignore" });
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("holds the bundle, the schemas and the templates, and no sources", () => {
    const pkg = join(app, "node_modules", packageInfo().name);
    expect(existsSync(join(pkg, "dist/app/vc.js"))).to.equal(true);
    expect(existsSync(join(pkg, "schemas/values.schema.json"))).to.equal(true);
    expect(existsSync(join(pkg, "templates/fleet/dot-github/workflows/vc-plan.yml"))).to.equal(true);
    expect(existsSync(join(pkg, "src"))).to.equal(false);
    expect(existsSync(join(pkg, "node_modules/tsx")) || existsSync(join(app, "node_modules/tsx"))).to.equal(false);
  });

  it("npx vc init, validate and render work on a scaffolded fleet", () => {
    const init = npx(["vc", "init", "fleet", "--repo-url", "https://github.com/acme/fleet.git", "--owners", "@acme/platform"]);
    expect(init.status, init.stderr).to.equal(0);
    const validate = npx(["vc", "validate", "fleet"]);
    expect(validate.status, validate.stderr).to.equal(0);
    expect(validate.stderr).to.include("1 cluster, 0 errors, 0 warnings");
    const render = npx(["vc", "render", "fleet"]);
    expect(render.status, render.stderr).to.equal(0);
    expect(render.stdout).to.include("kind: StatefulSet").and.to.include("name: example");
    const version = npx(["vc", "--version"]);
    expect(version.stdout.trim()).to.equal(packageInfo().version);
  });

  it("npx vc-metrics-proxy starts (its usage)", () => {
    const r = npx(["vc-metrics-proxy", "--help"]);
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.include("--host-namespace");
  });

  it("the action's run step runs the installed vc: validate --format github annotates a broken value", () => {
    const fleet = join(tmp, "broken");
    expect(npx(["vc", "init", fleet, "--repo-url", "https://github.com/a/b.git", "--owners", "@a/b", "--cluster", "shop"]).status).to.equal(0);
    execFileSync("sed", ["-i", "s/cpu: 200m/cpu: lots/", join(fleet, "clusters/shop/values.yaml")]);
    const action = load(readFileSync(join(ROOT, "action.yml"), "utf8")) as { runs: { steps: Array<{ id?: string; run?: string }> } };
    const script = action.runs.steps.find((s) => s.id === "run")!.run!;
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
      cwd: fleet,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        VC_BIN: join(app, "node_modules/.bin"),
        VC_COMMAND: "validate --format github",
        VC_KUBECONFIG_DATA: "",
        VC_OUTPUT: "",
        VC_OK_EXIT_CODES: "0",
        RUNNER_TEMP: tmp,
        GITHUB_OUTPUT: join(tmp, "github-output"),
      },
    });
    expect(r.status).to.equal(1);
    expect(r.stdout).to.match(/^::error file=clusters\/shop\/values\.yaml,line=\d+/m);
    expect(readFileSync(join(tmp, "github-output"), "utf8")).to.equal("exit-code=1\n");
    expect(readdirSync(tmp).filter((f) => f.startsWith("vc-kubeconfig"))).to.deep.equal([]);
  });
});

describe("bin/ without the bundle and without the sources", () => {
  it("says the bundle is missing (exit 2) instead of failing to load the sources", () => {
    const tmp = mkdtempSync(join(tmpdir(), "vc-bin-"));
    try {
      execFileSync("cp", ["-r", join(ROOT, "bin"), join(ROOT, "package.json"), tmp]);
      const r = spawnSync(process.execPath, [join(tmp, "bin/vc.js"), "--version"], { encoding: "utf8" });
      expect(r.status).to.equal(2);
      expect(r.stderr).to.match(/dist\/app\/vc\.js is missing: reinstall the vc package/);
      expect(r.stderr).to.not.match(/\n\s+at /);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
