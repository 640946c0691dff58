import { expect } from "chai";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { runValidate, type Output } from "../../src/cli/validate.js";
import { cleanupRepos, makeRepo } from "../validate/fixture.js";

const MAIN = new URL("../../src/cli/main.ts", import.meta.url).pathname;

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
      'clusters/a/notes.txt: warning: not part of the cluster layout (values.yaml, values.*.yaml, cluster.yaml, mesh/): ignored\n' +
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
      "::warning file=clusters/a/notes.txt,title=vc validate (layout)::not part of the cluster layout (values.yaml, values.*.yaml, cluster.yaml, mesh/): ignored",
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
    expect(j.diagnostics[1]).to.deep.include({ file: "clusters/a/values.yaml", line: 3, col: 5, severity: "error", code: "schema" });
  });

  it("fails with exit 2 for a missing path, a folder without clusters/ and an unknown --cluster", async () => {
    for (const [path, cluster] of [["/nonexistent/x", []], ["/", []], [makeRepo({ "clusters/a/values.yaml": "{}\n" }), ["zz"]]] as const) {
      let err: { exitCode?: number; message?: string } = {};
      try {
        await runValidate(path, { format: "text", cluster: [...cluster] }, capture());
      } catch (e) {
        err = e as typeof err;
      }
      expect(err.exitCode, path).to.equal(2);
    }
  });

  it("runs as a command: exit code 1 and the summary on stderr, no stack trace", async () => {
    const run = promisify(execFile);
    const root = makeRepo(BROKEN);
    const bad = await run(process.execPath, ["--import", "tsx", MAIN, "validate", root]).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect((bad as { code: number }).code).to.equal(1);
    expect((bad as { stderr: string }).stderr).to.contain("2 clusters, 1 error, 1 warning");
    expect((bad as { stderr: string }).stderr).not.to.match(/\n\s+at /);
  });
});
