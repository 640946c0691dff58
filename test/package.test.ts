// The npm package as a newcomer gets it: `npm pack`, the tarball installed into an empty prefix (no install-script
// warning, no registry lookup of any name but its dependencies'), then `vc init` and every command its closing words
// print, run as printed: validate, render, apply and diff against the dir: target, the first commit and the push.
import { expect } from "chai";
import { execFileSync, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { load } from "js-yaml";
import { packageInfo } from "../src/model/package.js";
import { requireOrSkip } from "./support/requires.js";

const ROOT = join(import.meta.dirname, "..");
const { name: NAME, version: VERSION } = packageInfo();

interface Manifest {
  name: string;
}

/** The manifests of every package under a node_modules tree (nested ones included). */
function installedManifests(dir: string, out: Manifest[] = []): Manifest[] {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith(".")) continue;
    const paths = entry.startsWith("@")
      ? readdirSync(join(dir, entry)).map((n) => join(dir, entry, n))
      : [join(dir, entry)];
    for (const p of paths) {
      if (existsSync(join(p, "package.json")))
        out.push(JSON.parse(readFileSync(join(p, "package.json"), "utf8")) as Manifest);
      installedManifests(join(p, "node_modules"), out);
    }
  }
  return out;
}

const installedNames = (dir: string): Set<string> => new Set(installedManifests(dir).map((m) => m.name));

/** The package names npm asked a registry about, from its `--loglevel http` lines (metadata and tarballs). */
function registryLookups(log: string): string[] {
  const names = new Set<string>();
  for (const m of log.matchAll(/^npm http fetch \w+ \d+ (https?:\/\/\S+)/gm)) {
    const path = decodeURIComponent(new URL(m[1]!).pathname).replace(/^\//, "");
    if (path.startsWith("-/")) continue; // registry endpoints (audit, ping) name no package
    names.add(path.split("/-/")[0]!);
  }
  return [...names].sort();
}

/** The commands vc init printed after "Next:", as printed (each line keeps its `# why` comment: bash ignores it). */
function nextCommands(stderr: string): string[] {
  const after = stderr.slice(stderr.indexOf("\nNext:\n") + "\nNext:\n".length);
  return after
    .split("\n")
    .filter((l) => l.startsWith("  "))
    .map((l) => l.trim());
}

describe("the npm package", function () {
  this.timeout(240000);
  let tmp: string;
  let prefix: string;
  let installed: string;
  let installLog: string;
  let env: NodeJS.ProcessEnv;

  before(function () {
    tmp = mkdtempSync(join(tmpdir(), "vc-package-"));
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", tmp], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tarball = (JSON.parse(out.slice(out.indexOf("["))) as Array<{ filename: string }>)[0]!.filename;
    prefix = join(tmp, "prefix");
    // The dependencies come from npm's cache where it has them (--prefer-offline), else from the registry.
    const r = spawnSync(
      "npm",
      [
        "install",
        "--global",
        "--prefix",
        prefix,
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--loglevel",
        "http",
        join(tmp, tarball),
      ],
      { cwd: tmp, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
    );
    installLog = `${r.stdout}${r.stderr}`;
    if (r.status !== 0 && /ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT/.test(installLog)) {
      requireOrSkip(
        this,
        "the npm registry (vc's dependencies are neither cached nor reachable)",
        "run once where the npm registry answers; npm caches what it fetched",
      );
    }
    expect(r.status, installLog).to.equal(0);
    installed = join(prefix, "lib", "node_modules", NAME);
    const home = join(tmp, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".gitconfig"), "[user]\n\tname = Newcomer\n\temail = newcomer@example.com\n");
    env = {
      PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
      HOME: home,
      NO_COLOR: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      LANG: "C",
    };
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("holds the bundle, the schemas, the templates and the Apache-2.0 LICENSE, and no sources", () => {
    expect(existsSync(join(installed, "dist/app/vc.js"))).to.equal(true);
    // The fleet page ships whole: vc ui and the reconciler serve it with no request to a third party.
    expect(existsSync(join(installed, "dist/ui/app.js"))).to.equal(true);
    expect(existsSync(join(installed, "dist/ui/app.css"))).to.equal(true);
    expect(existsSync(join(installed, "schemas/values.schema.json"))).to.equal(true);
    expect(existsSync(join(installed, "templates/fleet/dot-github/workflows/vc-plan.yml"))).to.equal(true);
    const license = readFileSync(join(installed, "LICENSE"), "utf8");
    expect(license).to.include("Apache License\n                           Version 2.0, January 2004");
    expect(license).to.include("END OF TERMS AND CONDITIONS");
    expect(license).to.not.include("[name of copyright owner]");
    expect((JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { license: string }).license).to.equal(
      "Apache-2.0",
    );
    expect(existsSync(join(installed, "src"))).to.equal(false);
    expect(installedNames(join(prefix, "lib", "node_modules")).has("tsx")).to.equal(false);
  });

  it('installs with no install-script warning, and npm asks the registry about its dependencies, never its own name nor "vc"', () => {
    expect(installLog).to.not.match(/install-scripts|allowScripts|allow-scripts|prepare|prepack/);
    const lookups = registryLookups(installLog);
    expect(lookups, "npm's http log lists what it asked").to.include("commander");
    // Never the package itself (it comes from the tarball) nor the unrelated package called "vc".
    expect(lookups).to.not.include(NAME);
    expect(lookups).to.not.include("vc");
  });

  it(
    "vc init, then every command its closing words print, as printed: a validated, applied (dir:), committed and " +
      "pushed fleet",
    () => {
      const work = join(tmp, "work");
      mkdirSync(work);
      // The push goes to a local bare repository standing in for the URL given (git's own url.<base>.insteadOf).
      const bare = join(tmp, "remote.git");
      execFileSync("git", ["init", "--bare", "-q", bare]);
      execFileSync("git", [
        "config",
        "--file",
        join(env.HOME!, ".gitconfig"),
        `url.${bare}.insteadOf`,
        "https://github.com/acme/fleet.git",
      ]);
      const run = (command: string, cwd: string): SpawnSyncReturns<string> =>
        spawnSync("bash", ["--noprofile", "--norc", "-c", command], { cwd, encoding: "utf8", env });

      const init = run("vc init fleet --repo-url https://github.com/acme/fleet.git --owners @acme/platform", work);
      expect(init.status, init.stderr).to.equal(0);
      const fleet = join(work, "fleet");
      expect(init.stderr).to.include(
        `18 files in ${fleet}; made it a new git repository (branch main) and committed nothing.`,
      );
      expect(run("git rev-parse --verify -q HEAD", fleet).status, "vc init made no commit").to.not.equal(0);
      const pkg = JSON.parse(readFileSync(join(fleet, "package.json"), "utf8")) as {
        devDependencies: Record<string, string>;
      };
      expect(pkg.devDependencies).to.deep.equal({ [NAME]: VERSION });
      expect(readFileSync(join(fleet, "README.md"), "utf8")).to.include(`npx ${NAME} <command>`);

      const commands = nextCommands(init.stderr);
      expect(commands.map((c) => c.split(/\s+#/)[0]!.trim())).to.deep.equal([
        "cd fleet",
        "vc validate",
        "vc render",
        "vc apply",
        "vc diff",
        "git add -A",
        'git commit -m "A fleet of virtual clusters"',
        "git remote add origin https://github.com/acme/fleet.git",
        "git push -u origin main",
      ]);
      let cwd = work;
      const results = new Map<string, SpawnSyncReturns<string>>();
      for (const command of commands) {
        const word = command.split(/\s+#/)[0]!.trim();
        if (word.startsWith("cd ")) {
          cwd = resolve(cwd, word.slice(3));
          continue;
        }
        const r = run(command, cwd);
        expect(r.status, `${word}: ${r.stdout}${r.stderr}`).to.equal(0);
        results.set(word, r);
      }
      expect(results.get("vc validate")!.stderr).to.include("1 cluster, 0 errors, 0 warnings");
      expect(results.get("vc render")!.stdout).to.include("kind: StatefulSet");
      expect(results.get("vc apply")!.stdout).to.match(/cluster example: \d+ created/);
      expect(existsSync(join(fleet, "hydrated/example"))).to.equal(true);
      expect(results.get("vc diff")!.stdout).to.match(/0 to create, 0 to update, 0 to delete, \d+ unchanged/);
      const pushed = execFileSync("git", ["--git-dir", bare, "ls-tree", "-r", "--name-only", "main"], {
        encoding: "utf8",
      }).split("\n");
      expect(pushed).to.include.members([
        "clusters/example/values.yaml",
        "deploy/kustomization.yaml",
        ".github/workflows/vc-validate.yml",
      ]);
      expect(pushed.filter((p) => p.startsWith("hydrated/") || p.startsWith("node_modules/"))).to.deep.equal([]);
    },
  );

  it("vc-metrics-proxy starts (its usage)", () => {
    const r = spawnSync(join(prefix, "bin", "vc-metrics-proxy"), ["--help"], { encoding: "utf8", env });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.include("--host-namespace");
  });

  it("the action's run step runs the installed vc: validate --format github annotates a broken value", () => {
    const fleet = join(tmp, "broken");
    const init = spawnSync(
      join(prefix, "bin", "vc"),
      ["init", fleet, "--repo-url", "https://github.com/a/b.git", "--owners", "@a/b", "--cluster", "shop"],
      { encoding: "utf8", env },
    );
    expect(init.status, init.stderr).to.equal(0);
    execFileSync("sed", ["-i", "s/cpu: 200m/cpu: lots/", join(fleet, "clusters/shop/values.yaml")]);
    const action = load(readFileSync(join(ROOT, "action.yml"), "utf8")) as {
      runs: { steps: Array<{ id?: string; run?: string }> };
    };
    const script = action.runs.steps.find((s) => s.id === "run")!.run!;
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
      cwd: fleet,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        VC_BIN: join(prefix, "bin"),
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
      expect(r.stderr).to.match(/dist\/app\/vc\.js is missing: reinstall @vc-gitops\/vc/);
      expect(r.stderr).to.not.match(/\n\s+at /);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe("install scripts in this repository", () => {
  it(
    "package.json's allowScripts decides every dependency with an install script (npm 11 warns about the " + "others)",
    () => {
      const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
        packages: Record<string, { hasInstallScript?: boolean }>;
      };
      const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
        allowScripts?: Record<string, boolean>;
        scripts: Record<string, string>;
      };
      const withScripts = Object.entries(lock.packages)
        .filter(([path, p]) => path !== "" && p.hasInstallScript)
        .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
      expect(withScripts).to.include("esbuild");
      expect(withScripts.filter((name) => !(name in (pkg.allowScripts ?? {})))).to.deep.equal([]);
      // vc itself builds when packed, never on a user's install.
      expect(["prepare", "preinstall", "install", "postinstall"].filter((k) => k in pkg.scripts)).to.deep.equal([]);
      expect(pkg.scripts.prepack).to.equal("npm run build");
    },
  );
});
