import { expect } from "chai";
import { join } from "node:path";
import { Command } from "commander";
import { register, runValidate, type Output } from "../../src/cli/validate.js";
import { cleanupRepos, makeRepo } from "../validate/fixture.js";

function capture(): Output & { out: string; err: string } {
  const c = { out: "", err: "", stdout: (t: string) => void (c.out += t), stderr: (t: string) => void (c.err += t) };
  return c;
}

const BROKEN = {
  "clusters/a/values.yaml": "integrations:\n  mesh:\n    enabeld: true\n",
  "clusters/a/notes.txt": "hi\n",
  "clusters/b/values.yaml": "{}\n",
};

describe("cli: vc validate", () => {
  after(cleanupRepos);

  it("prints file:line:col lines with repository-relative paths and a summary; exit 1 on errors", async () => {
    const root = makeRepo(BROKEN);
    const c = capture();
    const code = await runValidate(root, { format: "text", cluster: [] }, c);
    expect(code).to.equal(1);
    expect(c.out).to.equal(
      "clusters/a/notes.txt: warning: not part of the cluster layout (values.yaml, values.*.yaml, cluster.yaml, " +
        "mesh/, certificates/): ignored\n" +
        'clusters/a/values.yaml:3:5: error: unknown key "enabeld" in integrations.mesh: did you mean "enabled"?\n',
    );
    expect(c.err).to.equal("2 clusters, 1 error, 1 warning\n");
  });

  it("exits 0 with warnings only, and limits to --cluster or the cluster folder given as path", async () => {
    const root = makeRepo(BROKEN);
    const c = capture();
    expect(await runValidate(root, { format: "text", cluster: ["b"] }, c)).to.equal(0);
    expect(c.err).to.equal("1 cluster, 0 errors, 0 warnings\n");
    const d = capture();
    expect(await runValidate(join(root, "clusters/a"), { format: "text", cluster: [] }, d)).to.equal(1);
    expect(d.err).to.equal("1 cluster, 1 error, 1 warning\n");
  });

  it("writes GitHub annotations", async () => {
    const c = capture();
    await runValidate(makeRepo(BROKEN), { format: "github", cluster: [] }, c);
    expect(c.out.split("\n")).to.deep.equal([
      "::warning file=clusters/a/notes.txt,title=vc validate (layout)::not part of the cluster layout " +
        "(values.yaml, values.*.yaml, cluster.yaml, mesh/, certificates/): ignored",
      '::error file=clusters/a/values.yaml,line=3,col=5,title=vc validate (schema)::unknown key "enabeld" in integrations.mesh: did you mean "enabled"?',
      "",
    ]);
  });

  it("writes JSON for machines", async () => {
    const c = capture();
    await runValidate(makeRepo(BROKEN), { format: "json", cluster: [] }, c);
    const j = JSON.parse(c.out);
    expect(j.valid).to.equal(false);
    expect(j.summary).to.deep.equal({ clusters: 2, errors: 1, warnings: 1 });
    expect(j.clusters).to.deep.equal([
      { name: "a", valid: false, errors: 1, warnings: 1 },
      { name: "b", valid: true, errors: 0, warnings: 0 },
    ]);
    expect(j.diagnostics[1]).to.deep.include({
      file: "clusters/a/values.yaml",
      line: 3,
      col: 5,
      severity: "error",
      code: "schema",
    });
  });

  it(
    "fails with exit 2 for a missing path and a folder without clusters/, exit 1 for an unknown " + "--cluster",
    async () => {
      for (const [path, cluster, code] of [
        ["/nonexistent/x", [], 2],
        ["/", [], 2],
        [makeRepo({ "clusters/a/values.yaml": "{}\n" }), ["zz"], 1],
      ] as const) {
        let err: { exitCode?: number; message?: string } = {};
        try {
          await runValidate(path, { format: "text", cluster: [...cluster] }, capture());
        } catch (e) {
          err = e as typeof err;
        }
        expect(err.exitCode, path).to.equal(code);
      }
    },
  );

  it("runs as a registered command: exit codes through action(), summary on stderr, no stack trace", async () => {
    const root = makeRepo(BROKEN);
    const run = async (args: string[]): Promise<{ code: unknown; out: string; err: string }> => {
      const program = new Command("vc").exitOverride();
      register(program);
      const saved = { code: process.exitCode, out: process.stdout.write, err: process.stderr.write };
      let out = "";
      let err = "";
      process.stdout.write = ((t: string) => ((out += t), true)) as typeof process.stdout.write;
      process.stderr.write = ((t: string) => ((err += t), true)) as typeof process.stderr.write;
      try {
        await program.parseAsync(["validate", ...args], { from: "user" });
        return { code: process.exitCode, out, err };
      } finally {
        process.stdout.write = saved.out;
        process.stderr.write = saved.err;
        process.exitCode = saved.code;
      }
    };
    const bad = await run([root]);
    expect(bad.code).to.equal(1);
    expect(bad.err).to.equal("2 clusters, 1 error, 1 warning\n");
    expect(bad.out).to.contain("clusters/a/values.yaml:3:5: error:");
    const good = await run(["--cluster", "b", "--format", "json", root]);
    expect(good.code).to.equal(0);
    expect(JSON.parse(good.out).valid).to.equal(true);
    const missing = await run(["/nonexistent/x"]);
    expect(missing.code).to.equal(2);
    expect(missing.err).to.equal("error: path /nonexistent/x does not exist\n");
  });

  it(
    "-o/--output names the format as every other command does; --format, the older spelling, still works; the two " +
      "must agree",
    async () => {
      const { runVc } = await import("../support/vc.js");
      const repo = makeRepo(BROKEN);
      const byOutput = await runVc(["validate", repo, "-o", "json"]);
      const byFormat = await runVc(["validate", repo, "--format", "json"]);
      expect(byOutput.code).to.equal(1);
      expect(byOutput.stdout).to.equal(byFormat.stdout);
      expect((JSON.parse(byOutput.stdout) as { valid: boolean }).valid).to.equal(false);
      expect((await runVc(["validate", repo, "--output", "github"])).stdout).to.match(
        /^::error file=clusters\/a\/values.yaml/m,
      );
      const both = await runVc(["validate", repo, "-o", "text", "--format", "json"]);
      expect(both.code).to.equal(2);
      expect(both.stderr).to.include("--output text and --format json disagree");
      expect((await runVc(["validate", repo, "-o", "json", "--format", "json"])).code).to.equal(1);
    },
  );
});
